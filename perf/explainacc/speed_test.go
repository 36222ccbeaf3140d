package explainacc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
	"github.com/kubectl-schedq/kubectl-schedq/perf/embedded"
	"github.com/kubectl-schedq/kubectl-schedq/perf/groundtruth"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/cmd"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
)

// Environment of TestExplainSpeed.
const (
	// SpeedEnv turns the test on: it takes minutes.
	SpeedEnv = "SCHEDQ_EXPLAIN_SPEED"
	// SpeedPodsEnv and SpeedRunsEnv change the number of pending pods
	// (5000) and of timed runs of each command (7).
	SpeedPodsEnv = "SCHEDQ_EXPLAIN_SPEED_PODS"
	SpeedRunsEnv = "SCHEDQ_EXPLAIN_SPEED_RUNS"
	// PluginEnv and KubectlEnv name the binaries; by default
	// bin/kubectl-schedq and bin/kubectl of the repository (make build,
	// make kubectl), then kubectl on PATH, then getpods, a client-go
	// program that lists the pods in pages of 500 and prints them as one
	// JSON List, as kubectl does.
	PluginEnv  = "SCHEDQ_PLUGIN"
	KubectlEnv = "KUBECTL"
)

// speedTarget: explain -A may take at most this many times as long as
// kubectl get pods -A -o json.
const speedTarget = 1.5

// TestExplainSpeed times the built `kubectl schedq explain -A` against
// `kubectl get pods -A -o json`, on the same embedded control plane holding
// 5,000 pending pods (each rejected by NodeResourcesFit, with its
// FailedScheduling event), running them alternately, and holds explain to
// 1.5 times kubectl's median. The scheduler's /metrics is trimmed to what a
// real kube-scheduler serves (see hideAPIServerMetrics).
func TestExplainSpeed(t *testing.T) {
	if testing.Short() || os.Getenv(SpeedEnv) == "" {
		t.Skipf("set %s=1 (make explain-speed): starts a control plane with 5,000 pods", SpeedEnv)
	}
	pods := envInt(t, SpeedPodsEnv, 5000)
	runs := envInt(t, SpeedRunsEnv, 7)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	plugin := os.Getenv(PluginEnv)
	if plugin == "" {
		plugin = filepath.Join(root, "bin", "kubectl-schedq")
	}
	if _, err := os.Stat(plugin); err != nil {
		t.Fatalf("%v: run make build (or set %s)", err, PluginEnv)
	}
	kubectl, kubectlName := findKubectl(t, root)

	hideAPIServerMetrics()
	logs := &testsupport.TailBuffer{Max: 64 << 10}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("control plane logs (tail):\n%s", logs)
		}
	})
	ctx := context.Background()
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	cp, err := embedded.Start(sctx, embedded.Options{Nodes: 4, LogOutput: logs})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })

	began := time.Now()
	s := &scenario{client: cp.Client(), log: t.Logf}
	for i := 0; i < pods; i += 500 {
		if err := s.createPods(ctx, fmt.Sprintf("parked-%d-", i/500), min(500, pods-i), "6", nil, false); err != nil {
			t.Fatal(err)
		}
	}
	client := cp.Client()
	waitFor(t, 15*time.Minute, func() string {
		if n := cp.Queue().Count()[groundtruth.Unschedulable]; n < pods {
			return fmt.Sprintf("%d of %d pods in unschedulablePods", n, pods)
		}
		evs, err := client.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "reason=" + explain.FailedSchedulingReason})
		if err != nil {
			return err.Error()
		}
		if len(evs.Items) < pods {
			return fmt.Sprintf("%d of %d FailedScheduling events", len(evs.Items), pods)
		}
		return ""
	})
	t.Logf("%d pods parked in %v", pods, time.Since(began).Round(time.Second))

	// explain's answer is complete.
	out, err := run(ctx, cp.KubeconfigPath, plugin, "explain", "-A", "-o", "json")
	if err != nil {
		t.Fatalf("explain -A -o json: %v\n%s", err, out)
	}
	var list cmd.ExplanationList
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != pods || list.Counts["unschedulablePods"] != pods || len(list.Warnings) > 0 {
		t.Fatalf("explain -A: %d pods, counts %v, warnings %v; want %d unschedulable", len(list.Items), list.Counts, list.Warnings, pods)
	}

	// Alternate the two, after one untimed run of each.
	var kt, et, jt []time.Duration
	for i := -1; i < runs; i++ {
		for _, c := range []struct {
			bin  string
			args []string
			into *[]time.Duration
		}{
			{kubectl, []string{"get", "pods", "-A", "-o", "json"}, &kt},
			{plugin, []string{"explain", "-A"}, &et},
			{plugin, []string{"explain", "-A", "-o=json"}, &jt},
		} {
			start := time.Now()
			if out, err := run(ctx, cp.KubeconfigPath, c.bin, c.args...); err != nil {
				t.Fatalf("%s %s: %v\n%s", c.bin, strings.Join(c.args, " "), err, out)
			}
			if i >= 0 {
				*c.into = append(*c.into, time.Since(start))
			}
		}
	}
	km, em := median(kt), median(et)
	ratio := float64(em) / float64(km)
	var report strings.Builder
	fmt.Fprintf(&report, "## explain -A against %s, %d pending pods (embedded control plane)\n\n", kubectlName, pods)
	fmt.Fprintf(&report, "| command | median | min | max | runs |\n|---|---:|---:|---:|---|\n")
	for _, r := range []struct {
		name string
		ds   []time.Duration
	}{{kubectlName, kt}, {"kubectl schedq explain -A", et}, {"kubectl schedq explain -A -o json (for reference)", jt}} {
		fmt.Fprintf(&report, "| %s | %s | %s | %s | %s |\n", r.name, dur(median(r.ds)), dur(percentile(r.ds, 0)), dur(percentile(r.ds, 1)), durs(r.ds))
	}
	fmt.Fprintf(&report, "\nratio of medians: **%.2f** (target ≤ %.1f)\n", ratio, speedTarget)
	t.Log("\n" + report.String())
	if dir := os.Getenv(OutEnv); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "speed.md"), []byte(report.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if ratio > speedTarget {
		t.Errorf("explain -A took %.2f× as long as %s (median %v vs %v), want at most %.1f×", ratio, kubectlName, em, km, speedTarget)
	}
}

// findKubectl returns the kubectl to compare with, and what to call it.
func findKubectl(t *testing.T, root string) (path, name string) {
	t.Helper()
	if p := os.Getenv(KubectlEnv); p != "" {
		return p, "kubectl get pods -A -o json"
	}
	if p := filepath.Join(root, "bin", "kubectl"); fileExists(p) {
		return p, "kubectl get pods -A -o json"
	}
	if p, err := exec.LookPath("kubectl"); err == nil {
		return p, "kubectl get pods -A -o json"
	}
	p := filepath.Join(t.TempDir(), "getpods")
	if out, err := exec.Command("go", "build", "-o", p, "./getpods").CombinedOutput(); err != nil {
		t.Fatalf("no kubectl, and building getpods failed: %v\n%s", err, out)
	}
	t.Logf("no kubectl binary: comparing with getpods, client-go's list in pages of 500 printed as kubectl's JSON List")
	return p, "getpods (client-go list + JSON print, standing in for kubectl get pods -A -o json)"
}

// run runs bin with the kubeconfig, its output discarded unless it fails.
func run(ctx context.Context, kubeconfig, bin string, args ...string) ([]byte, error) {
	c := exec.CommandContext(ctx, bin, args...)
	c.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	if len(args) > 0 && args[len(args)-1] == "json" && strings.Contains(bin, "kubectl-schedq") {
		return c.Output()
	}
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	defer devNull.Close()
	var stderr strings.Builder
	c.Stdout, c.Stderr = devNull, &stderr
	err = c.Run()
	return []byte(stderr.String()), err
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive number", name, s)
	}
	return n
}

func median(ds []time.Duration) time.Duration { return percentile(ds, 0.5) }

func durs(ds []time.Duration) string {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = dur(d)
	}
	return strings.Join(parts, ", ")
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
