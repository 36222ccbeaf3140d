package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
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
	for _, want := range []string{"op 3 (4th of 4) createPods", "starting an embedded control plane"} {
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

// clusterUp starts `schedq-perf cluster up` in a process of its own and
// returns its kubeconfig and a client; the cluster stops with the test.
func clusterUp(t *testing.T) (string, kubernetes.Interface) {
	t.Helper()
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
	t.Cleanup(func() {
		_ = up.Process.Signal(syscall.SIGTERM)
		_ = up.Wait()
	})
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
	cfg.QPS, cfg.Burst = -1, 0
	return kubeconfig, kubernetes.NewForConfigOrDie(cfg)
}

// startRun starts schedq-perf with args (and env) in a process of its own
// and returns once the run has created at least nodes nodes and pods pods
// on client's cluster: the process, what its Wait returns, and its stderr.
func startRun(t *testing.T, client kubernetes.Interface, nodes, pods int, env []string, args ...string) (*exec.Cmd, <-chan error, *testsupport.TailBuffer) {
	t.Helper()
	run := exec.Command(os.Args[0], args...)
	run.Env = append(append(os.Environ(), runMainEnv+"=1"), env...)
	stderr := &testsupport.TailBuffer{Max: 1 << 20}
	run.Stderr = stderr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- run.Wait() }()
	sel := metav1.ListOptions{LabelSelector: runner.RunLabelKey}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		select {
		case err := <-exited:
			t.Fatalf("the run exited (%v) before it created %d nodes and %d pods; stderr:\n%s", err, nodes, pods, stderr.String())
		default:
		}
		n, err := client.CoreV1().Nodes().List(context.Background(), sel)
		p, err2 := client.CoreV1().Pods("").List(context.Background(), sel)
		if err == nil && err2 == nil && len(n.Items) >= nodes && len(p.Items) >= pods {
			t.Logf("%d nodes and %d pods created", len(n.Items), len(p.Items))
			return run, exited, stderr
		}
		if time.Now().After(deadline) {
			_ = run.Process.Kill()
			t.Fatalf("the run did not create %d nodes and %d pods; stderr:\n%s", nodes, pods, stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestRun_kubeconfigInterrupted runs workloads on an existing cluster (a
// `schedq-perf cluster up` in another process), interrupts each run with
// SIGINT once it has created what it is waited for, and checks that
// everything it created is gone in time (namespaces terminating: the
// embedded control plane runs no namespace controller), and that the
// command says what it removed. The large case is the size of a real run:
// 50 nodes and 3,300 pods, gone within 15 seconds.
func TestRun_kubeconfigInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	kubeconfig, client := clusterUp(t)
	tests := []struct {
		name, testCase, workload string
		nodes, pods              int
		within                   time.Duration
	}{
		{"every op", "AllOps", "3Nodes", 3, 0, time.Minute},
		{"50 nodes and 3300 pods", "Interrupt", "50Nodes_3300Pods", 50, 3301, 15 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			run, exited, stderr := startRun(t, client, tc.nodes, tc.pods, nil, "run", tinyFile, "--test-case", tc.testCase, "--workload", tc.workload,
				"--cluster", "kubeconfig", "--allow-existing-cluster", "--kubeconfig", kubeconfig, "--out", t.TempDir())
			sel := metav1.ListOptions{LabelSelector: runner.RunLabelKey}
			interrupted := time.Now()
			if err := run.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			err := <-exited
			took := time.Since(interrupted)
			t.Logf("exited %.1fs after SIGINT; stderr:\n%s", took.Seconds(), stderr.String())
			if err == nil {
				t.Error("an interrupted run exited 0")
			}
			if !strings.Contains(stderr.String(), "interrupted") {
				t.Error("the run does not say it was interrupted")
			}
			if want := fmt.Sprintf("removed %d pods, %d nodes", tc.pods, tc.nodes); tc.pods > 0 && !strings.Contains(stderr.String(), want) {
				t.Errorf("the run does not say it %s", want)
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
			// The bound is for a machine the test has to itself: on a shared
			// one it stretches by the load beyond the cores.
			within := time.Duration(float64(tc.within) * loadFactor())
			if took > within {
				t.Errorf("everything was gone %.1fs after SIGINT, want within %v (%v at a load of one per core)", took.Seconds(), within.Round(time.Second), tc.within)
			}
		})
	}
}

// TestRun_parentKilled kills `schedq-perf run` with SIGKILL while its
// workload runs on an existing cluster (a `schedq-perf cluster up` in
// another process): the workload's process, which the parent can no longer
// tell, must see it gone and clean up as on an interrupt, so that within 30
// seconds (at a load of one per core) no process of the run is left, nothing
// it created is left in the cluster (namespaces terminating: the embedded
// control plane runs no namespace controller), and no temporary directory.
func TestRun_parentKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	kubeconfig, client := clusterUp(t)
	ctx := context.Background()
	tmp := t.TempDir()
	run, _, stderr := startRun(t, client, 5, 100, []string{"TMPDIR=" + tmp}, "run", tinyFile, "--test-case", "Interrupt", "--workload", "5Nodes_100Pods",
		"--cluster", "kubeconfig", "--allow-existing-cluster", "--kubeconfig", kubeconfig, "--out", t.TempDir())
	sel := metav1.ListOptions{LabelSelector: runner.RunLabelKey}
	children := childrenOf(run.Process.Pid)
	if len(children) == 0 {
		t.Fatal("the run has no workload process")
	}
	t.Cleanup(func() {
		for _, pid := range children {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	killed := time.Now()
	if err := run.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	within := time.Duration(float64(30*time.Second) * loadFactor())
	var left []string
	for {
		left = left[:0]
		for _, pid := range children {
			if running(pid) {
				left = append(left, fmt.Sprintf("process %d", pid))
			}
		}
		nodes, _ := client.CoreV1().Nodes().List(ctx, sel)
		pods, _ := client.CoreV1().Pods("").List(ctx, sel)
		if n := len(nodes.Items); n > 0 {
			left = append(left, fmt.Sprintf("%d nodes", n))
		}
		if n := len(pods.Items); n > 0 {
			left = append(left, fmt.Sprintf("%d pods", n))
		}
		nss, _ := client.CoreV1().Namespaces().List(ctx, sel)
		for _, ns := range nss.Items {
			if ns.DeletionTimestamp == nil {
				left = append(left, "namespace "+ns.Name)
			}
		}
		if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
			left = append(left, fmt.Sprintf("%d temporary entries (%s, …)", len(entries), entries[0].Name()))
		}
		if len(left) == 0 || time.Since(killed) > within {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("%.1fs after SIGKILL; stderr:\n%s", time.Since(killed).Seconds(), stderr.String())
	if len(left) > 0 {
		t.Errorf("%v after SIGKILL of the parent, left: %s", within.Round(time.Second), strings.Join(left, ", "))
	}
	if !strings.Contains(stderr.String(), "the parent process is gone: cleaning up") {
		t.Error("the workload's process does not say why it cleaned up")
	}
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _ := procStat(child); ppid == pid {
			out = append(out, child)
		}
	}
	return out
}

// running reports whether pid is a process that has not exited (a zombie
// has).
func running(pid int) bool {
	ppid, state := procStat(pid)
	return ppid != 0 && state != "Z" && state != "X"
}

// procStat reads a process's parent and state from /proc/PID/stat.
func procStat(pid int) (ppid int, state string) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, ""
	}
	// pid (comm) state ppid …; comm may hold spaces and parentheses.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(f) < 2 {
		return 0, ""
	}
	ppid, _ = strconv.Atoi(f[1])
	return ppid, f[0]
}

// TestPlugin_perfOnKubeconfig is what a krew user does with a test
// cluster: the plugin, built on its own from the lean module, lists its
// built-in workloads and runs one on an existing cluster (here a
// `schedq-perf cluster up`), then reports.
func TestPlugin_perfOnKubeconfig(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	plugin := filepath.Join(t.TempDir(), "kubectl-schedq")
	build := exec.Command("go", "build", "-o", plugin, "./cmd/kubectl-schedq")
	build.Dir = "../../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build the plugin: %v\n%s", err, out)
	}
	list, err := exec.Command(plugin, "perf", "list").Output()
	if err != nil || !strings.Contains(string(list), "backoff-drain") || !strings.Contains(string(list), "4Nodes_40Blocked (integration-test)") {
		t.Fatalf("perf list: %v\n%s", err, list)
	}
	kubeconfig, _ := clusterUp(t)
	out := t.TempDir()
	run := exec.Command(plugin, "perf", "run", "backoff-drain", "--workload", "4Nodes_40Blocked",
		"--cluster", "kubeconfig", "--allow-existing-cluster", "--kubeconfig", kubeconfig, "--out", out)
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	err = run.Run()
	t.Logf("stderr:\n%s", stderr.String())
	if err != nil {
		t.Fatalf("perf run: %v\n%s", err, stdout.String())
	}
	for _, want := range []string{"BackoffDrain/4Nodes_40Blocked", "report.html"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	rep, err := exec.Command(plugin, "perf", "report", out).Output()
	if err != nil || !strings.Contains(string(rep), "BackoffDrain/4Nodes_40Blocked") {
		t.Errorf("perf report: %v\n%s", err, rep)
	}
}

// loadFactor is the one-minute load average per core, at least 1.
func loadFactor() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 1
	}
	var load float64
	if _, err := fmt.Sscan(string(data), &load); err != nil {
		return 1
	}
	return max(1, load/float64(runtime.NumCPU()))
}
