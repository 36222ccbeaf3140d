// Package upstreambench runs a scheduler_perf config file through
// k8s.io/kubernetes' own scheduler_perf harness, unmodified, at the version
// perf/go.mod requires, so that `make perf-compare-upstream` can set its
// SchedulingThroughput beside schedq-perf's for the same workload on the same
// machine: perf/testdata/scheduling-basic.yaml by default, or any file
// (-config), such as upstream's own performance-config.yaml files in the
// module cache. While each workload's cluster runs it reads how the harness
// set that cluster up (package clusterconfig) into -data-items-dir.
//
// The harness starts an etcd process per workload and finds it on PATH
// (`make etcd` builds one into bin/; the benchmark also looks there), and
// resolves the file's paths against the working directory, so the
// benchmark changes into the file's directory first.
//
//	cd perf && PATH=$PWD/../bin:$PATH go test ./upstreambench -run '^$' \
//	    -bench 'BenchmarkPerfScheduling/SchedulingBasic/500Nodes_5000Pods$' -benchtime 1x \
//	    -args -perf-scheduling-label-filter= -data-items-dir=$PWD/out/upstream
package upstreambench
