// Package upstreambench runs perf/testdata/scheduling-basic.yaml (upstream's
// SchedulingBasic/500Nodes) through k8s.io/kubernetes' own scheduler_perf
// harness, unmodified, so that `make perf-compare-upstream` can set its
// SchedulingThroughput beside schedq-perf's for the same file on the same
// machine.
//
// The harness starts an etcd process per workload and finds it on PATH
// (`make etcd` builds one into bin/; the benchmark also looks there), and
// resolves the file's paths against the working directory, so the
// benchmark changes into perf/testdata first.
//
//	cd perf && PATH=$PWD/../bin:$PATH go test ./upstreambench -run '^$' \
//	    -bench BenchmarkPerfSchedulingBasic -benchtime 1x -args -data-items-dir=$PWD/out/upstream
package upstreambench
