package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/report"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
)

const tinyFile = "../../testdata/tiny.yaml"

// runMain runs schedq-perf with args in a process of its own (the test
// binary as main) and returns stdout, stderr and the exit error.
func runMain(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// TestRun_compare runs the tiny workload with SchedulerPopFromBackoffQ on
// and off, each in its own process on its own embedded control plane, and
// checks the table and the files.
func TestRun_compare(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two control planes")
	}
	out := t.TempDir()
	stdout, stderr, err := runMain(t, "run", tinyFile, "--test-case", "Tiny", "--label-filter", "integration-test",
		"--compare", "SchedulerPopFromBackoffQ", "--out", out)
	t.Logf("stderr:\n%s", stderr)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stdout)
	}
	t.Logf("stdout:\n%s", stdout)
	for _, want := range []string{
		"SchedulerPopFromBackoffQ=true", "SchedulerPopFromBackoffQ=false", "on/off",
		"Tiny/10Nodes  [namespace-3]", "SchedulingDuration (s)", "pod latency Perc50 (ms)", "pod creation rate (pods/s)",
		"report.html",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	for _, want := range []string{"op 4/4 createPods", "starting an embedded control plane"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	for _, pattern := range []string{
		"BenchmarkPerfScheduling_SchedulerPopFromBackoffQ_true_benchmark_tiny_*.json",
		"BenchmarkPerfScheduling_SchedulerPopFromBackoffQ_false_benchmark_tiny_*.json",
	} {
		files, _ := filepath.Glob(filepath.Join(out, pattern))
		if len(files) != 1 {
			t.Errorf("%s: %v", pattern, files)
			continue
		}
		items, err := report.ReadDataItems(files[0])
		if err != nil {
			t.Error(err)
			continue
		}
		if len(items.DataItems) < 4 {
			t.Errorf("%s: %d items", files[0], len(items.DataItems))
		}
	}
	for _, name := range []string{"report.html", "results.json", "summary.txt",
		"queue_Tiny_10Nodes_SchedulerPopFromBackoffQ_true.csv", "queue_Tiny_10Nodes_SchedulerPopFromBackoffQ_false.json"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
}

// TestRun_kubeconfigInterrupted runs AllOps on an existing cluster (a
// `schedq-perf cluster up` in another process), interrupts the run with
// SIGINT once it has created nodes, and checks that everything it created
// is gone (namespaces terminating: the embedded control plane runs no
// namespace controller).
func TestRun_kubeconfigInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	up := exec.Command(os.Args[0], "cluster", "up", "--kubeconfig-out", kubeconfig)
	up.Env = append(os.Environ(), runMainEnv+"=1")
	upOut, err := up.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = up.Process.Signal(syscall.SIGTERM)
		_ = up.Wait()
	}()
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(upOut)
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready <- true
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("cluster up exited before it was ready")
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("cluster up was not ready after 2 minutes")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()

	run := exec.Command(os.Args[0], "run", tinyFile, "--test-case", "AllOps", "--workload", "3Nodes",
		"--cluster", "kubeconfig", "--allow-existing-cluster", "--kubeconfig", kubeconfig, "--out", t.TempDir())
	run.Env = append(os.Environ(), runMainEnv+"=1")
	var stderr bytes.Buffer
	run.Stderr = &stderr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	sel := metav1.ListOptions{LabelSelector: runner.RunLabelKey}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		nodes, err := client.CoreV1().Nodes().List(ctx, sel)
		if err == nil && len(nodes.Items) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			_ = run.Process.Kill()
			t.Fatalf("the run created no nodes; stderr:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := run.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = run.Wait()
	t.Logf("stderr:\n%s", stderr.String())
	if err == nil {
		t.Error("an interrupted run exited 0")
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Error("the run does not say it was interrupted")
	}
	nodes, _ := client.CoreV1().Nodes().List(ctx, sel)
	pods, _ := client.CoreV1().Pods("").List(ctx, sel)
	if len(nodes.Items) != 0 || len(pods.Items) != 0 {
		t.Errorf("left behind: %d nodes, %d pods", len(nodes.Items), len(pods.Items))
	}
	nss, _ := client.CoreV1().Namespaces().List(ctx, sel)
	for _, ns := range nss.Items {
		if ns.DeletionTimestamp == nil {
			t.Errorf("namespace %s is not being deleted", ns.Name)
		}
	}
}
