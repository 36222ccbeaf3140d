package kind_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// perfEnv is what the perf tests on kind need: the plugin, the node image,
// and a KUBECONFIG of their own, so that an entry the run leaves behind
// shows.
func perfEnv(t *testing.T) (plugin, image string, environ []string) {
	t.Helper()
	if os.Getenv("SCHEDQ_KIND_E2E") != "1" {
		t.Skip("kind end-to-end tests run with SCHEDQ_KIND_E2E=1 (make test-kind)")
	}
	if out, err := run(context.Background(), 30*time.Second, "docker", "info"); err != nil {
		t.Fatalf("SCHEDQ_KIND_E2E=1 but no Docker engine answers (e2e/infra/docker-engine.sh up starts one): %v\n%s", err, out)
	}
	plugin = env(t, "SCHEDQ_PLUGIN", "")
	image = env(t, "SCHEDQ_KIND_IMAGE", "")
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	t.Cleanup(func() {
		if data, err := os.ReadFile(kubeconfig); err == nil && strings.Contains(string(data), "schedq-perf") {
			t.Errorf("the run left a kubeconfig entry:\n%s", data)
		}
	})
	return plugin, image, append(os.Environ(), "KUBECONFIG="+kubeconfig)
}

// perfLeftovers are the run's kind containers and the docker networks that
// were not there before.
func perfLeftovers(t *testing.T, networksBefore []string) []string {
	t.Helper()
	var left []string
	for _, c := range dockerNames(t, "{{.Names}}", "ps", "-a") {
		if strings.HasPrefix(c, "schedq-perf-") {
			left = append(left, "container "+c)
		}
	}
	for _, n := range dockerNames(t, "{{.Name}}", "network", "ls") {
		if !slices.Contains(networksBefore, n) {
			left = append(left, "network "+n)
		}
	}
	return left
}

// perfResult is what the kind tests read of a result in results.json.
type perfResult struct {
	Variant        string          `json:"variant"`
	Workload       string          `json:"workload"`
	Cluster        string          `json:"cluster"`
	SchedulerGates map[string]bool `json:"schedulerGates"`
	Error          string          `json:"error"`
	Windows        []struct {
		Name  string `json:"name"`
		Bound int    `json:"bound"`
	} `json:"windows"`
	Queue struct {
		Samples []struct {
			Pending map[string]int `json:"pending"`
		} `json:"samples"`
	} `json:"queue"`
}

// runPerf runs `kubectl schedq perf run ARGS --out DIR` within timeout,
// fails the test if it fails, and returns its stdout and the results it
// wrote.
func runPerf(t *testing.T, timeout time.Duration, plugin string, environ []string, args ...string) ([]byte, []perfResult) {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, plugin, append(append([]string{"perf", "run"}, args...), "--out", out)...)
	cmd.Env = environ
	began := time.Now()
	stdout, err := cmd.Output()
	var stderr string
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	t.Logf("perf run took %.0fs\n%s", time.Since(began).Seconds(), stdout)
	if err != nil {
		t.Fatalf("perf run: %v\n%s", err, stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var results []perfResult
	if err := json.Unmarshal(data, &results); err != nil {
		t.Fatal(err)
	}
	return stdout, results
}

// TestPerf_kindCompare runs a built-in workload at its integration-test
// size through the plugin on --cluster kind, SchedulerPopFromBackoffQ on
// and off: a kind cluster per side, results for both, nothing left.
func TestPerf_kindCompare(t *testing.T) {
	plugin, image, environ := perfEnv(t)
	networks := dockerNames(t, "{{.Name}}", "network", "ls")
	stdout, results := runPerf(t, 20*time.Minute, plugin, environ, "backoff-drain", "--workload", "4Nodes_40Blocked",
		"--compare", "SchedulerPopFromBackoffQ", "--cluster", "kind", "--kind-image", image)
	for _, want := range []string{"SchedulerPopFromBackoffQ=true", "SchedulerPopFromBackoffQ=false", "BackoffDrain/4Nodes_40Blocked", "SchedulingDuration (s)"} {
		if !strings.Contains(string(stdout), want) {
			t.Errorf("the table lacks %q", want)
		}
	}
	if len(results) != 2 {
		t.Fatalf("%d results, want one per setting of the gate", len(results))
	}
	for i, r := range results {
		on := i == 0
		if r.Error != "" || !strings.HasPrefix(r.Cluster, "kind cluster schedq-perf-") {
			t.Errorf("%s: cluster %q, error %q", r.Variant, r.Cluster, r.Error)
		}
		// The kind cluster's own scheduler reports the gate it runs with.
		if got, ok := r.SchedulerGates["SchedulerPopFromBackoffQ"]; !ok || got != on {
			t.Errorf("%s: the scheduler reports SchedulerPopFromBackoffQ=%t (reported: %t)", r.Variant, got, ok)
		}
		bound := 0
		for _, w := range r.Windows {
			if w.Name == "drain" {
				bound = w.Bound
			}
		}
		if bound != 40 {
			t.Errorf("%s: %d pods bound in the drain window, want the 40 blocked pods", r.Variant, bound)
		}
	}
	if left := perfLeftovers(t, networks); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestPerf_kindInterrupt interrupts a run on kind once its workload is
// under way, in a process group of its own as a shell starts it: SIGINT to
// the process, SIGINT to its group (a terminal's Ctrl-C) and SIGTERM to its
// group (coreutils' timeout, CI runners). Each is one interrupt: the
// command exits non-zero, saying so, after cleaning up: no container (the
// cluster's pods, nodes and namespaces were in it), no network, no
// kubeconfig entry left.
func TestPerf_kindInterrupt(t *testing.T) {
	for _, tc := range []struct {
		name string
		send func(pid int) error
	}{
		{"SIGINT to the process", func(pid int) error { return syscall.Kill(pid, syscall.SIGINT) }},
		{"SIGINT to the group (Ctrl-C in a terminal)", func(pid int) error { return syscall.Kill(-pid, syscall.SIGINT) }},
		{"SIGTERM to the group (timeout)", func(pid int) error { return syscall.Kill(-pid, syscall.SIGTERM) }},
	} {
		t.Run(tc.name, func(t *testing.T) { kindInterrupt(t, tc.send) })
	}
}

func kindInterrupt(t *testing.T, send func(pid int) error) {
	plugin, image, environ := perfEnv(t)
	networks := dockerNames(t, "{{.Name}}", "network", "ls")
	name := fmt.Sprintf("%s%06d", env(t, "SCHEDQ_KIND_CLUSTER_PREFIX", "schedq-perf-"), rand.IntN(1000000))
	cmd := exec.Command(plugin, "perf", "run", "backoff-drain", "--workload", "4Nodes_40Blocked",
		"--cluster", "kind", "--kind-image", image, "--kind-name", name, "--out", t.TempDir())
	cmd.Env = environ
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		stderr strings.Builder
	)
	started := make(chan struct{})
	go func() {
		var once sync.Once
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			mu.Lock()
			stderr.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if strings.Contains(sc.Text(), "op 1 (2nd of ") {
				once.Do(func() { close(started) })
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	logs := func() string { mu.Lock(); defer mu.Unlock(); return stderr.String() }
	select {
	case <-started:
	case err := <-exited:
		t.Fatalf("the run ended (%v) before its workload started:\n%s", err, logs())
	case <-time.After(10 * time.Minute):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("the workload did not start within 10 minutes:\n%s", logs())
	}
	interrupted := time.Now()
	if err := send(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	select {
	case err = <-exited:
	case <-time.After(5 * time.Minute):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("the run did not exit within 5 minutes of the signal:\n%s", logs())
	}
	t.Logf("exited %.1fs after the signal:\n%s", time.Since(interrupted).Seconds(), logs())
	if err == nil {
		t.Error("an interrupted run exited 0")
	}
	if !strings.Contains(logs(), "interrupted") {
		t.Error("the run does not say it was interrupted")
	}
	if strings.Contains(logs(), "interrupted again") {
		t.Error("one signal counted as two: the run stopped without cleaning up")
	}
	if left := perfLeftovers(t, networks); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	for _, c := range dockerNames(t, "{{.Names}}", "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster="+name) {
		t.Errorf("container %s of cluster %s left behind", c, name)
	}
}

// TestPerf_kindPodGroups runs a pod-group workload (incomplete-groups,
// GenericWorkload on) at its integration-test size through the plugin on
// --cluster kind: kube-apiserver serves PodGroups, the kind cluster's own
// scheduler runs with GenericWorkload and holds the gang members in its
// incomplete pod-group queue until their PodGroups exist, then binds them
// all; nothing is left. One side only (the gate at its default), to keep
// make test-kind short; the on/off figures are in workloads/README.md.
func TestPerf_kindPodGroups(t *testing.T) {
	plugin, image, environ := perfEnv(t)
	networks := dockerNames(t, "{{.Name}}", "network", "ls")
	_, results := runPerf(t, 10*time.Minute, plugin, environ, "incomplete-groups", "--label-filter", "integration-test",
		"--cluster", "kind", "--kind-image", image)
	if len(results) != 1 {
		t.Fatalf("%d results, want the integration-test workload's one", len(results))
	}
	r := results[0]
	if r.Error != "" || !strings.HasPrefix(r.Cluster, "kind cluster schedq-perf-") || r.Workload != "4Nodes_5Groupsx4_20Blocked" {
		t.Errorf("workload %q, cluster %q, error %q", r.Workload, r.Cluster, r.Error)
	}
	if !r.SchedulerGates["GenericWorkload"] {
		t.Errorf("the scheduler reports GenericWorkload off (gates %v)", r.SchedulerGates)
	}
	bound := -1
	for _, w := range r.Windows {
		if w.Name == "release" {
			bound = w.Bound
		}
	}
	if bound != 20 {
		t.Errorf("%d pods bound in the release window, want the 20 gang members", bound)
	}
	// The members wait in the scheduler's incomplete pod-group queue while
	// their PodGroups do not exist, and none is left there at the end.
	held, last := 0, -1
	for _, s := range r.Queue.Samples {
		held = max(held, s.Pending["incomplete"])
		last = s.Pending["incomplete"]
	}
	if held != 20 || last != 0 {
		t.Errorf("pending_pods{queue=\"incomplete\"} at most %d and %d at the end, want 20 during the hold and 0 after", held, last)
	}
	if left := perfLeftovers(t, networks); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
