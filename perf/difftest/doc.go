// Package difftest compares the queue model (pkg/queue, through
// trace.NewModel) with kube-scheduler's own PriorityQueue of the
// k8s.io/kubernetes version perf/go.mod requires (v1.37.2), trace by trace:
// hand-written scenarios for each rule (testdata/) and thousands of random
// traces from pkg/queue/trace/tracegen. The driver itself is checked against
// the outputs upstream's queue printed for the example traces
// (testdata/upstream-v1.37/). It also benchmarks the two on one large trace.
//
// The older versions' queues (v1.34.4, v1.35.4, v1.36.3) are built in modules
// of their own that internal/upstreamgen -older generates (make
// upstream-versions); TestDifferential_Versions compares each version's
// model with the schedq-upstream-replay built there.
//
// Upstream's queue is driven through a test-time copy of its package,
// internal/upstreamqueue, that is generated from the module cache and never
// committed. Generate it before building this package:
//
//	make upstreamqueue            # from the repository root, or
//	go generate ./difftest/       # from perf/
package difftest

//go:generate go run ./internal/upstreamgen
