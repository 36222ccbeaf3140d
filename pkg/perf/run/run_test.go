package run

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/provider"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

func defaults() Options {
	return Options{Settings: Settings{Source: "backoff-drain", Cluster: provider.NameKind, Parallelism: DefaultParallelism, LabelFilter: workload.DefaultPerfLabelFilter}}
}

// TestPrepare checks what a run refuses before anything starts, with the
// words that say how to fix it.
func TestPrepare(t *testing.T) {
	outLink := filepath.Join(t.TempDir(), "results")
	if err := os.Symlink(t.TempDir(), outLink); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		set     func(o *Options)
		wantErr string
	}{
		{"the default label filter selects the performance size", func(o *Options) {}, ""},
		{"a workload by name", func(o *Options) { o.Workload = "4Nodes_40Blocked" }, ""},
		{"a label filter", func(o *Options) { o.LabelFilter, o.LabelFilterSet = "integration-test", true }, ""},
		{"workload and label filter", func(o *Options) { o.Workload, o.LabelFilter, o.LabelFilterSet = "4Nodes_40Blocked", "short", true },
			"--workload and --label-filter both select workloads"},
		{"unknown test case", func(o *Options) { o.TestCase = "Nope" }, `no test case "Nope"`},
		{"unknown workload", func(o *Options) { o.Workload = "1Node" }, `no test case has a workload "1Node"`},
		{"unknown source", func(o *Options) { o.Source = "no-such" }, "neither a file nor an embedded workload"},
		{"a missing file", func(o *Options) { o.Source = "dir/no-such.yaml" }, "no such file"},
		{"a device", func(o *Options) { o.Source = "/dev/zero" }, "/dev/zero is a character device, not a regular file: give a scheduler_perf workload file"},
		{"unknown cluster", func(o *Options) { o.Cluster = "minikube" }, `unknown cluster provider "minikube": want one of embedded, kind, kubeconfig`},
		{"embedded is elsewhere", func(o *Options) { o.Cluster = provider.NameEmbedded }, "make build-perf"},
		{"keep without kind", func(o *Options) {
			o.Cluster, o.Provider.Keep, o.Provider.AllowExisting = provider.NameKubeconfig, true, true
		}, "--keep does not apply to --cluster kubeconfig (it is for --cluster kind)"},
		{"keep with kind", func(o *Options) { o.Provider.Keep = true }, ""},
		{"kubeconfig without the flag", func(o *Options) { o.Cluster = provider.NameKubeconfig }, "add --allow-existing-cluster"},
		{"kubeconfig with the flag", func(o *Options) { o.Cluster, o.Provider.AllowExisting = provider.NameKubeconfig, true }, ""},
		{"allow-existing on kind", func(o *Options) { o.Provider.AllowExisting = true }, "--allow-existing-cluster does not apply to --cluster kind"},
		{"compare on an existing cluster", func(o *Options) {
			o.Cluster, o.Provider.AllowExisting, o.Compare = provider.NameKubeconfig, true, "SchedulerPopFromBackoffQ"
		}, "--compare SchedulerPopFromBackoffQ needs a cluster the run starts"},
		{"compare an unknown gate", func(o *Options) { o.Compare = "NoSuchGate" }, "--compare NoSuchGate: unrecognized feature gate: NoSuchGate"},
		{"compare a locked gate", func(o *Options) { o.Compare = "NodeInclusionPolicyInPodTopologySpread" }, "--compare NodeInclusionPolicyInPodTopologySpread: cannot set feature gate NodeInclusionPolicyInPodTopologySpread to false"},
		{"compare a removed gate", func(o *Options) { o.Compare = "SchedulerQueueingHints" }, "--compare SchedulerQueueingHints: unrecognized feature gate: SchedulerQueueingHints"},
		{"compare", func(o *Options) { o.Compare = "SchedulerPopFromBackoffQ" }, ""},
		{"parallelism", func(o *Options) { o.Parallelism = 0 }, "--parallelism must be at least 1"},
		{"--out a link", func(o *Options) { o.Out = outLink }, "--out: " + outLink + " is a symbolic link (to "},
		{"--out a file", func(o *Options) { o.Out = "/dev/null" }, "--out: /dev/null is not a directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := defaults()
			tc.set(&o)
			_, err := Prepare(o)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Prepare() = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestPrepare_plan(t *testing.T) {
	o := defaults()
	o.Workload, o.Compare = "4Nodes_40Blocked", "SchedulerPopFromBackoffQ"
	p, err := Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	if p.opts.LabelFilter != "" {
		t.Errorf("--workload keeps label filter %q", p.opts.LabelFilter)
	}
	if p.opts.Source != "backoff-drain" || p.opts.Topic != "backoff-drain" || len(p.selected) != 1 || p.selected[0].Workload != "4Nodes_40Blocked" {
		t.Errorf("source %q, topic %q, selected %d", p.opts.Source, p.opts.Topic, len(p.selected))
	}
	if len(p.variants) != 2 || !p.variants[0].Gates["SchedulerPopFromBackoffQ"] || p.variants[1].Gates["SchedulerPopFromBackoffQ"] {
		t.Errorf("variants %+v, want the gate on, then off", p.variants)
	}
	// The scheduler configuration travels as the file's bytes.
	if s := p.selected[0]; len(s.SchedulerConfig) == 0 || !strings.Contains(string(s.SchedulerConfig), "KubeSchedulerConfiguration") {
		t.Errorf("scheduler config %q", s.SchedulerConfig)
	}

	// A file on disk wins over nothing; its topic is its name.
	dir := t.TempDir()
	path := filepath.Join(dir, "mine.yaml")
	const file = "- name: T\n  workloadTemplate:\n  - {opcode: createNodes, count: 1}\n  - {opcode: createPods, count: 1, collectMetrics: true}\n  workloads:\n  - {name: w, labels: [performance]}\n"
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	o = defaults()
	o.Source = path
	if p, err = Prepare(o); err != nil {
		t.Fatal(err)
	}
	if p.opts.Source != path || p.opts.Topic != "mine" || p.path != path {
		t.Errorf("source %q, topic %q, path %q", p.opts.Source, p.opts.Topic, p.path)
	}
}

func TestDefaultTopic(t *testing.T) {
	for path, want := range map[string]string{
		"/m/test/integration/scheduler_perf/misc/performance-config.yaml": "misc",
		"workloads/backoff-drain.yaml":                                    "backoff-drain",
	} {
		if got := defaultTopic(path); got != want {
			t.Errorf("defaultTopic(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestRun_secondInterrupt drives Run with a child that ignores SIGINT, as
// one busy cleaning up does: the first interrupt is forwarded, the second
// makes Run kill it and leave at once, naming what may be left and the
// command that removes it.
func TestRun_secondInterrupt(t *testing.T) {
	o := defaults()
	o.Workload, o.Out = "4Nodes_40Blocked", filepath.Join(t.TempDir(), "out")
	stderr := &testsupport.TailBuffer{Max: 1 << 20}
	o.Stdout, o.Stderr = &strings.Builder{}, stderr
	o.Executable = "/bin/sh"
	o.ChildArgs = []string{"-c", `trap "" INT; echo child started; sleep 60`, "child"}
	p, err := Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	sigs := make(chan os.Signal, 2)
	done := make(chan error, 1)
	go func() { done <- p.Run(context.Background(), sigs) }()
	time.Sleep(300 * time.Millisecond)
	sigs <- os.Interrupt
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("Run returned after one interrupt (%v), while the child still cleans up", err)
	default:
	}
	time.Sleep(interruptGrace) // a second interrupt, not the first twice
	began := time.Now()
	sigs <- os.Interrupt
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the second interrupt")
	}
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("Run took %v to leave after the second interrupt", took)
	}
	if !errors.Is(err, ErrLeftBehind) {
		t.Errorf("Run() = %v, want ErrLeftBehind", err)
	}
	// An interrupted run leaves no directory behind, empty or not.
	if entries, err := os.ReadDir(filepath.Dir(o.Out)); err != nil || len(entries) != 0 {
		t.Errorf("the run left %v (%v) beside --out", entries, err)
	}
	msg := stderr.String()
	for _, want := range []string{"interrupted again", "kind delete cluster --name schedq-perf-"} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr lacks %q:\n%s", want, msg)
		}
	}
}

// TestRun_failedRunKeepsGoodResults runs a workload whose process fails
// into an --out that holds a good run's results: they stay as they were,
// and the failed run's results go beside them, whole.
func TestRun_failedRunKeepsGoodResults(t *testing.T) {
	o := defaults()
	o.Workload, o.Out = "4Nodes_40Blocked", filepath.Join(t.TempDir(), "out")
	good := map[string]string{
		"results.json": `[{"path":"backoff-drain","testCase":"T","workload":"w"}]`,
		"report.html":  "<html>the good run</html>",
		"summary.txt":  "the good run's table\n",
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range good {
		if err := os.WriteFile(filepath.Join(o.Out, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stderr := &strings.Builder{}
	o.Stdout, o.Stderr = &strings.Builder{}, stderr
	o.Executable = "/bin/sh"
	o.ChildArgs = []string{"-c", "exit 3", "child"}
	p, err := Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "1 of 1 workload runs failed") {
		t.Fatalf("Run() = %v, want the failure", err)
	}
	for name, content := range good {
		got, err := os.ReadFile(filepath.Join(o.Out, name))
		if err != nil || string(got) != content {
			t.Errorf("%s = %q (%v), want the good run's %q", name, got, err, content)
		}
	}
	entries, err := os.ReadDir(filepath.Dir(o.Out))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 2 || !strings.HasPrefix(names[1], "out.failed-") {
		t.Fatalf("beside --out: %v, want out and out.failed-DATE", names)
	}
	failed, err := os.ReadFile(filepath.Join(filepath.Dir(o.Out), names[1], "results.json"))
	if err != nil || !strings.Contains(string(failed), "the workload's process failed") {
		t.Errorf("the failed run's results.json = %s (%v)", failed, err)
	}
	if !strings.Contains(stderr.String(), "not over the good run's in "+o.Out) {
		t.Errorf("stderr does not say where the results went:\n%s", stderr)
	}
}

// TestWatchInterrupts: a signal delivered twice at once (to the process and
// to its group) is one interrupt; only one that comes later stops at once.
func TestWatchInterrupts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		gap      time.Duration
		hardStop bool
	}{
		{"one signal to the process and its group", 0, false},
		{"the same signal 50ms later", 50 * time.Millisecond, false},
		{"a second signal later", interruptGrace + 100*time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sigs := make(chan os.Signal, 2)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			hardStop := make(chan struct{})
			go watchInterrupts(sigs, cancel, hardStop)
			sigs <- os.Interrupt
			time.Sleep(tc.gap)
			sigs <- os.Interrupt
			<-ctx.Done()
			select {
			case <-hardStop:
				if !tc.hardStop {
					t.Error("one interrupt counted twice")
				}
			case <-time.After(200 * time.Millisecond):
				if tc.hardStop {
					t.Error("a second, later interrupt did not stop at once")
				}
			}
			close(sigs)
		})
	}
}

// TestRun_childGetsTheSettings: each workload's process is given the run's
// settings whole, as Prepare resolved them, in its spec file, plus the
// workload and variant it runs.
func TestRun_childGetsTheSettings(t *testing.T) {
	o := defaults()
	dir := t.TempDir()
	o.Workload, o.Out, o.Compare = "4Nodes_40Blocked", filepath.Join(dir, "run"), "SchedulerPopFromBackoffQ"
	o.Parallelism, o.NoSeries, o.ShowLogs, o.LogLevel, o.Terminal = 7, true, true, 4, true
	o.Provider.Keep, o.Provider.KindImage = true, "kindest/node:v1.36.3"
	o.Stdout, o.Stderr = &strings.Builder{}, &strings.Builder{}
	o.Executable = "/bin/sh"
	// The child copies its spec (the argument after --spec) and fails.
	o.ChildArgs = []string{"-c", `cat "$2" >>"$0"; echo >>"$0"; exit 3`, filepath.Join(dir, "specs")}
	p, err := Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(context.Background(), nil); err == nil {
		t.Fatal("Run() = nil, though every workload's process failed")
	}
	data, err := os.ReadFile(filepath.Join(dir, "specs"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d workload processes, want 2 (the gate on, then off):\n%s", len(lines), data)
	}
	want := o.Settings
	want.LabelFilter, want.Topic = "", "backoff-drain" // as Prepare resolves them
	for i, line := range lines {
		var spec ChildSpec
		if err := json.Unmarshal([]byte(line), &spec); err != nil {
			t.Fatalf("spec %d: %v\n%s", i, err, line)
		}
		if !reflect.DeepEqual(spec.Settings, want) {
			t.Errorf("spec %d settings:\n got %+v\nwant %+v", i, spec.Settings, want)
		}
		if spec.TestCase == "" || spec.Workload != "4Nodes_40Blocked" || spec.Variant.Name != p.variants[i].Name || spec.RunID == "" {
			t.Errorf("spec %d: test case %q, workload %q, variant %q, run %q", i, spec.TestCase, spec.Workload, spec.Variant.Name, spec.RunID)
		}
	}
}

// TestPrepare_linkedOp checks that a binary without the perf module's ops
// (the plugin) refuses a workload using one before anything starts, in one
// line that names schedq-perf.
func TestPrepare_linkedOp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dra.yaml")
	const file = "- name: T\n  workloadTemplate:\n  - {opcode: createNodes, count: 1}\n  - {opcode: allocResourceClaims, namespace: init}\n  - {opcode: createPods, count: 1, collectMetrics: true}\n  workloads:\n  - {name: w, labels: [performance]}\n"
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	o := defaults()
	o.Source = path
	_, err := Prepare(o)
	want := path + `: test case "T", workload "w", op 1 (allocResourceClaims): allocating ResourceClaims without pods needs the DynamicResources plugin's structured allocator, which only schedq-perf links: run this file with ` + "`schedq-perf run`"
	if err == nil || err.Error() != want {
		t.Errorf("Prepare() error = %v\nwant %s", err, want)
	}
}
