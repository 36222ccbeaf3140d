package main

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-schedq/kubectl-schedq/perf/groundtruth"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
)

// runMainEnv makes the test binary act as schedq-perf, so that a test can run
// the real command in a process of its own and signal it.
const runMainEnv = "SCHEDQ_PERF_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestClusterUpOptions_Validate(t *testing.T) {
	tests := []struct {
		name    string
		opts    ClusterUpOptions
		wantErr string
	}{
		{"defaults", ClusterUpOptions{}, ""},
		{"nodes and port", ClusterUpOptions{nodes: 10, queuePort: 8080}, ""},
		{"negative nodes", ClusterUpOptions{nodes: -1}, "--nodes must not be negative"},
		{"port too big", ClusterUpOptions{queuePort: 70000}, "--queue-port must be 0 to 65535"},
		{"leftover flush after 10s", ClusterUpOptions{podMaxInUnschedulable: 10 * time.Second}, ""},
		{"negative leftover duration", ClusterUpOptions{podMaxInUnschedulable: -time.Second}, "--pod-max-in-unschedulable-pods-duration must not be negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.Validate()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Validate() = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestClusterUp_badInput runs the command in this process with input that
// must fail before anything starts.
func TestClusterUp_badInput(t *testing.T) {
	dir := t.TempDir()
	malformed := filepath.Join(dir, "sched.yaml")
	if err := os.WriteFile(malformed, []byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles: {\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)

	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"unknown feature gate", []string{"--feature-gates", "NoSuchGate=true"}, "feature gates: unrecognized feature gate: NoSuchGate"},
		{"feature gate syntax", []string{"--feature-gates", "SchedulerPopFromBackoffQ"}, "--feature-gates: feature gate \"SchedulerPopFromBackoffQ\": want Name=true or Name=false"},
		{"malformed scheduler config", []string{"--scheduler-config", malformed}, "scheduler config " + malformed + ": "},
		{"queue port in use", []string{"--queue-port", busyPort}, "--queue-port " + busyPort + " is in use"},
		{"negative nodes", []string{"--nodes", "-2"}, "--nodes must not be negative"},
		{"arguments", []string{"extra"}, "unknown command \"extra\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			cmd := newCmdSchedqPerf(streams)
			cmd.SetArgs(append([]string{"cluster", "up"}, tc.args...))
			cmd.SetOut(out)
			cmd.SetErr(out)
			err := cmd.ExecuteContext(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want it to contain %q", err, tc.wantErr)
			}
			if strings.Contains(out.String(), "ready") {
				t.Errorf("printed ready: %s", out)
			}
		})
	}
}

// TestClusterUp runs `schedq-perf cluster up` as its own process, reads what
// it prints, uses the kubeconfig and the queue URL, sends SIGTERM, and checks
// that it exits 0 and leaves no file behind.
func TestClusterUp(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane; skipped with -short")
	}
	tmp := t.TempDir()
	kubeconfig := filepath.Join(t.TempDir(), "schedq.kubeconfig")
	schedConfig := filepath.Join(t.TempDir(), "sched.yaml")
	if err := os.WriteFile(schedConfig, []byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\npodInitialBackoffSeconds: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "cluster", "up", "--nodes", "2",
		"--feature-gates", "SchedulerPopFromBackoffQ=false",
		"--scheduler-config", schedConfig, "--kubeconfig-out", kubeconfig)
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "TMPDIR="+tmp)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{}) // closed once cmd.Wait has returned waitErr
	var waitErr error
	defer func() {
		select {
		case <-exited:
		default:
			cmd.Process.Kill()
			<-exited
		}
	}()

	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		waitErr = cmd.Wait()
		close(exited)
	}()
	got := map[string]string{}
	timeout := time.After(2 * time.Minute)
	for i := 0; i < 4; i++ {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("exited before printing the addresses; stderr:\n%s", stderr.String())
			}
			if i == 0 {
				if line != "ready" {
					t.Fatalf("first line %q, want ready", line)
				}
				continue
			}
			key, value, _ := strings.Cut(line, " ")
			got[key] = value
		case <-timeout:
			t.Fatalf("not ready after 2m; stderr:\n%s", stderr.String())
		}
	}
	if got["kubeconfig"] != kubeconfig {
		t.Errorf("kubeconfig %q, want %q", got["kubeconfig"], kubeconfig)
	}
	raw, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ext := raw.Clusters[raw.Contexts[raw.CurrentContext].Cluster].Extensions[metricscrape.KubeconfigExtensionName]
	if ext == nil {
		t.Errorf("kubeconfig has no %s extension", metricscrape.KubeconfigExtensionName)
	}
	if !strings.HasPrefix(got["metrics"], "https://127.0.0.1:") || !strings.HasSuffix(got["metrics"], "/metrics") {
		t.Errorf("metrics %q", got["metrics"])
	}
	q, err := groundtruth.Fetch(context.Background(), nil, got["queue"])
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Pods) != 0 {
		t.Errorf("queue of a fresh cluster: %+v", q)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for range lines {
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("exit after SIGTERM: %v; stderr:\n%s", waitErr, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("still running a minute after SIGTERM")
	}
	if !strings.Contains(stderr.String(), "SchedulerPopFromBackoffQ=false") || !strings.HasSuffix(stderr.String(), "stopped\n") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	if _, err := os.Stat(kubeconfig); !os.IsNotExist(err) {
		t.Errorf("kubeconfig still there after exit (err %v)", err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("TMPDIR not empty after exit: %v", entries)
	}
}
