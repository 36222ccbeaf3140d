// Package upstreamcompat runs this project's workloads (workloads/*.yaml at
// the repository root) through k8s.io/kubernetes' own scheduler_perf harness,
// test/integration/scheduler_perf at the version perf/go.mod pins, unmodified:
// what TestWorkloadsRunInUpstreamHarness passes runs in upstream's
// integration jobs too.
//
// The harness starts an etcd process per workload and finds it on PATH;
// `make etcd` builds one from Go modules into bin/, and the tests also look
// there. Paths inside a workload file are relative to the file's directory,
// which is what upstream means by them as long as go test runs in that
// directory (its own configs sit beside their test packages), so the tests
// change into workloads/ first.
//
// While a workload runs, an observer samples the scheduler's queue (its
// pending_pods gauges and queue_incoming_pods counters, and the
// PriorityQueue itself) and logs a summary: how long activeQ was empty while
// backoffQ held pods, how many pods PopFromBackoffQ and BackoffComplete moved,
// and any stretch in which the scheduler sat idle with an empty activeQ and a
// backoffQ it should have popped (kubernetes#130976).
//
// BenchmarkWorkloadsUpstream runs the same files through upstream's
// benchmark entry point, once with SchedulerPopFromBackoffQ on and once off,
// and writes upstream's DataItems JSON (perf-dash format):
//
//	cd perf && PATH=$PWD/../bin:$PATH go test ./upstreamcompat -run '^$' \
//	    -bench . -benchtime 1x -perf-scheduling-label-filter=integration-test
package upstreamcompat
