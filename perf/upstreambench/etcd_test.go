package upstreambench

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/kubernetes/test/integration/framework"

	"github.com/kubectl-schedq/kubectl-schedq/perf/embedded"
	"github.com/kubectl-schedq/kubectl-schedq/perf/internal/clusterconfig"
)

// TestEtcdFlags_asUpstream: the etcd process of a workload run on the
// embedded control plane gets the flags upstream's harness gives its etcd
// (test/integration/framework.RunCustomEtcd of perf/go.mod's Kubernetes),
// read from both processes' command lines, but for the directory.
func TestEtcdFlags_asUpstream(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd twice")
	}
	if _, err := exec.LookPath("etcd"); err != nil {
		t.Skip("upstream's RunCustomEtcd needs etcd on PATH (make test-perf puts bin/etcd there)")
	}
	t.Setenv(embedded.EtcdUnsafeNoFsyncEnv, "")

	_, stop, err := framework.RunCustomEtcd(klog.Background(), "schedq_upstream_etcd", nil)
	if err != nil {
		t.Fatal(err)
	}
	up, err := clusterconfig.FindEtcd(os.Getpid())
	stop()
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := embedded.StartEtcdProcess(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	ours, err := clusterconfig.FindEtcd(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if ours.PID != p.PID() {
		t.Fatalf("found etcd process %d, want %d", ours.PID, p.PID())
	}
	if got, want := clusterconfig.Args(ours), clusterconfig.Args(up); got != want {
		t.Errorf("etcd flags\n  embedded: %s\n  upstream: %s", got, want)
	}
}
