package integration

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/status"
)

// kindClusterName is the cluster TestPortForward_kind creates and deletes.
const kindClusterName = "schedq-portforward-e2e"

// TestPortForward_kind is the end-to-end test of the port-forward source,
// the one path the embedded control plane cannot run (it has no kubelet):
// on a kind cluster, kube-scheduler listens on 127.0.0.1:10259 only, and
// status must find its pod, forward to it and read /metrics with the
// kubeconfig's credentials. It needs Docker and the kind CLI, and skips
// without them. SCHEDQ_KIND_NODE_IMAGE picks the node image.
func TestPortForward_kind(t *testing.T) {
	if testing.Short() {
		t.Skip("creates a kind cluster; skipped with -short")
	}
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("no docker CLI on PATH: the port-forward end-to-end test needs a Docker engine for kind")
	}
	if out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		t.Skipf("no Docker engine reachable (docker info: %v: %s): the port-forward end-to-end test needs one for kind", err, strings.TrimSpace(string(out)))
	}
	kind, err := exec.LookPath("kind")
	if err != nil {
		t.Skip("no kind CLI on PATH (make kind builds bin/kind)")
	}

	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	args := []string{"create", "cluster", "--name", kindClusterName, "--kubeconfig", kubeconfig, "--wait", "3m"}
	if img := os.Getenv("SCHEDQ_KIND_NODE_IMAGE"); img != "" {
		args = append(args, "--image", img)
	}
	if out, err := exec.Command(kind, args...).CombinedOutput(); err != nil {
		t.Fatalf("kind create cluster: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command(kind, "delete", "cluster", "--name", kindClusterName, "--kubeconfig", kubeconfig).CombinedOutput(); err != nil {
			t.Errorf("kind delete cluster: %v\n%s", err, out)
		}
	})

	t.Run("the source", func(t *testing.T) {
		cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}, &clientcmd.ConfigOverrides{})
		src, err := metricscrape.Resolve(metricscrape.Options{KubeConfig: cc})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := src.(*metricscrape.Discovery); !ok {
			t.Fatalf("source %T, want discovery (a kind kubeconfig has no scheduler extension)", src)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		snap, err := src.Scrape(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wantPod := metricscrape.SchedulerNamespace + "/kube-scheduler-" + kindClusterName + "-control-plane"
		if snap.Origin.Kind != metricscrape.OriginPortForward || snap.Origin.Pod != wantPod || snap.Origin.Platform != "kubeadm" {
			t.Errorf("Origin = %+v, want the port-forward to %s", snap.Origin, wantPod)
		}
		if len(snap.Pending) != 4 || snap.Build.GitVersion == "" {
			t.Errorf("snapshot: pending %v, build %+v", snap.Pending, snap.Build)
		}
		if _, known := snap.GateEnabled(metricscrape.GateSchedulerPopFromBackoffQ); !known {
			t.Error("SchedulerPopFromBackoffQ not reported")
		}
		if snap.Leader == nil || !*snap.Leader {
			t.Errorf("Leader = %v: kind runs the scheduler with leader election", snap.Leader)
		}
	})

	t.Run("status with no flags", func(t *testing.T) {
		t.Setenv("KUBECONFIG", kubeconfig)
		out, err := runStatus(t, "-o", "json")
		if err != nil {
			t.Fatal(err)
		}
		var st status.SchedulerStatus
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if st.Source.Kind != metricscrape.OriginPortForward || st.RateWindow == nil {
			t.Errorf("status = %s", out)
		}
	})
}
