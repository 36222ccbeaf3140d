// Package perf is the heavy module of kubectl-schedq: everything that links
// k8s.io/kubernetes (the embedded control plane, the workload runner and the
// differential tests against upstream's scheduling queue) lives below it, so
// the plugin binary never does.
package perf

// The blank imports keep these packages in perf's module graph whatever
// else changes: go mod tidy would otherwise drop a requirement that only a
// generated or build-tagged package (difftest's upstream queue copy) needs.
import (
	_ "go.etcd.io/etcd/server/v3/embed"
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
	_ "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	_ "k8s.io/kubernetes/test/integration/scheduler_perf"
)
