// Package difftest compares the queue model (pkg/queue, through
// trace.NewModel) with kube-scheduler's own PriorityQueue of
// k8s.io/kubernetes v1.36.3, trace by trace: the example traces recorded from
// upstream, hand-written scenarios for each rule (testdata/), and thousands of
// random traces from pkg/queue/trace/tracegen. It also benchmarks the two on
// one large trace.
//
// Upstream's queue is driven through a test-time copy of its package,
// internal/upstreamqueue, that is generated from the module cache and never
// committed. Generate it before building this package:
//
//	make upstreamqueue            # from the repository root, or
//	go generate ./difftest/       # from perf/
package difftest

//go:generate go run ./internal/upstreamgen
