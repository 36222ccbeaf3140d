package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-schedq/kubectl-schedq/perf/provider"
	"github.com/kubectl-schedq/kubectl-schedq/perf/report"
	"github.com/kubectl-schedq/kubectl-schedq/perf/runner"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

const runExample = `  # Run the performance workloads of a file on an embedded control plane
  schedq-perf run workloads/backoff-drain.yaml

  # One workload, with KEP-5142's gate on and then off, side by side
  schedq-perf run workloads/backoff-drain.yaml --workload 4Nodes_40Blocked \
    --compare SchedulerPopFromBackoffQ --out results/

  # Upstream's own file, selected by labels, on a kind cluster kept afterwards
  schedq-perf run $(go env GOMODCACHE)/k8s.io/kubernetes@v1.36.3/test/integration/scheduler_perf/misc/performance-config.yaml \
    --test-case SchedulingBasic --label-filter integration-test,short --cluster kind --keep

  # On the cluster of the current kubeconfig context (creates thousands of nodes!)
  schedq-perf run small.yaml --cluster kubeconfig --allow-existing-cluster`

// childCommand is the hidden subcommand that runs one workload in a process
// of its own: feature gates are process-global, so every workload (and
// every side of --compare) gets a fresh process and a fresh control plane.
const childCommand = "__workload"

// RunOptions are the options of `schedq-perf run`.
type RunOptions struct {
	genericiooptions.IOStreams
	root *rootOptions

	testCase     string
	workloadName string
	labelFilter  string
	cluster      string
	compare      string
	out          string
	topic        string
	parallelism  int
	noSeries     bool

	keep      bool
	kindImage string
	kindName  string

	allowExisting bool
	kubeconfig    string
	kubeContext   string
	metricsURL    string

	labelFilterSet bool

	// Complete
	path     string
	file     *workload.File
	selected []*workload.Selected
	variants []variant
	terminal bool
}

// variant is one side of a comparison (the only one without --compare).
type variant struct {
	Name  string          `json:"name"`
	Gates map[string]bool `json:"gates,omitempty"`
}

// NewRunOptions returns the defaults.
func NewRunOptions(ro *rootOptions, streams genericiooptions.IOStreams) *RunOptions {
	return &RunOptions{
		IOStreams:   streams,
		root:        ro,
		cluster:     provider.NameEmbedded,
		out:         "schedq-perf-results",
		parallelism: 30,
		labelFilter: workload.DefaultPerfLabelFilter,
	}
}

func newCmdRun(ro *rootOptions, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewRunOptions(ro, streams)
	cmd := &cobra.Command{
		Use:   "run FILE",
		Short: "Run scheduler_perf workloads and measure the scheduler",
		Long: `Run the workloads of a scheduler_perf workload file (upstream's
performance-config.yaml format) and measure the scheduler as upstream's
harness does: SchedulingThroughput, the scheduler's histograms, and per-pod
scheduling latency, plus the queue over time from the scheduler's metrics.

Each workload runs in a process of its own on a fresh cluster with the
workload's feature gates and scheduler configuration. With --compare GATE
every workload runs twice, GATE on and off, and one table shows both.

--out receives the perf-dash DataItems files
(BenchmarkPerfScheduling_..._benchmark_<topic>_<date>.json), the queue
series (queue_*.json and .csv), results.json and report.html.

Clusters: embedded (default: etcd, kube-apiserver and kube-scheduler in
process), kind (a kind cluster per workload, deleted afterwards unless
--keep), kubeconfig (the cluster of a kubeconfig; needs
--allow-existing-cluster, and deletes everything it created at the end).`,
		Example: runExample,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.labelFilterSet = cmd.Flags().Changed("label-filter")
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.testCase, "test-case", o.testCase, "run only this test case")
	f.StringVar(&o.workloadName, "workload", o.workloadName, "run only this workload (ignores labels)")
	f.StringVar(&o.labelFilter, "label-filter", o.labelFilter, "run workloads whose labels pass this filter: comma-separated, -label excludes")
	f.StringVar(&o.cluster, "cluster", o.cluster, "where to run: "+strings.Join(provider.Names, ", "))
	f.StringVar(&o.compare, "compare", o.compare, "run every workload with this feature gate on and off, e.g. SchedulerPopFromBackoffQ")
	f.StringVar(&o.out, "out", o.out, "directory for the results")
	f.StringVar(&o.topic, "topic", o.topic, "threshold topic and DataItems file name part (default: the file's name, or its directory for performance-config.yaml)")
	f.IntVar(&o.parallelism, "parallelism", o.parallelism, "goroutines that create pods and nodes (upstream: 30)")
	f.BoolVar(&o.noSeries, "no-queue-series", o.noSeries, "do not sample the queue every second (one metrics read per second less)")
	f.BoolVar(&o.keep, "keep", o.keep, "kind: keep the cluster after the workload")
	f.StringVar(&o.kindImage, "kind-image", o.kindImage, "kind: node image (default: kind's image for its Kubernetes release)")
	f.StringVar(&o.kindName, "kind-name", o.kindName, "kind: cluster name (default: schedq-perf-<id>)")
	f.BoolVar(&o.allowExisting, "allow-existing-cluster", o.allowExisting, "kubeconfig: allow running on an existing cluster; the run creates nodes and pods there and deletes them at the end")
	f.StringVar(&o.kubeconfig, "kubeconfig", o.kubeconfig, "kubeconfig: the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	f.StringVar(&o.kubeContext, "context", o.kubeContext, "kubeconfig: the context to use")
	f.StringVar(&o.metricsURL, "metrics-url", o.metricsURL, "kubeconfig: the scheduler's /metrics (default: the kubeconfig's scheduler extension, else a port-forward to the kube-scheduler pod)")
	_ = cmd.MarkFlagFilename("kubeconfig")
	cmd.AddCommand(newCmdRunChild(ro, streams))
	return cmd
}

// Complete loads the file and selects the workloads.
func (o *RunOptions) Complete(args []string) error {
	path, err := filepath.Abs(args[0])
	if err != nil {
		return err
	}
	o.path = path
	if o.workloadName != "" && !o.labelFilterSet {
		o.labelFilter = ""
	}
	if o.file, err = workload.Load(path); err != nil {
		return err
	}
	if o.topic == "" {
		o.topic = defaultTopic(path)
	}
	o.variants = []variant{{}}
	if o.compare != "" {
		o.variants = []variant{
			{Name: o.compare + "=true", Gates: map[string]bool{o.compare: true}},
			{Name: o.compare + "=false", Gates: map[string]bool{o.compare: false}},
		}
	}
	if f, ok := o.ErrOut.(*os.File); ok {
		o.terminal = term.IsTerminal(int(f.Fd()))
	}
	return nil
}

// defaultTopic is the file's name without extension, or, for upstream's
// performance-config.yaml, its directory (upstream's topics: misc,
// affinity, …).
func defaultTopic(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if base == "performance-config" {
		return filepath.Base(filepath.Dir(path))
	}
	return base
}

// Validate checks the flags and selects the workloads (which reads every
// template they name), so that a mistake shows before anything starts.
func (o *RunOptions) Validate() error {
	if o.workloadName != "" && o.labelFilterSet {
		return errors.New("--workload and --label-filter both select workloads: give one of them")
	}
	if !slices.Contains(provider.Names, o.cluster) {
		return fmt.Errorf("--cluster %q: want one of %s", o.cluster, strings.Join(provider.Names, ", "))
	}
	if o.keep && o.cluster != provider.NameKind {
		return errors.New("--keep is for --cluster kind")
	}
	if o.cluster == provider.NameKubeconfig && !o.allowExisting {
		return errors.New("--cluster kubeconfig runs on an existing cluster and creates nodes and pods there: add --allow-existing-cluster to allow it")
	}
	if o.compare != "" {
		if o.cluster == provider.NameKubeconfig {
			return fmt.Errorf("--compare %s needs a cluster the run starts with each setting of the gate: use --cluster embedded or kind", o.compare)
		}
		for _, v := range []bool{true, false} {
			if err := utilfeature.DefaultFeatureGate.DeepCopy().SetFromMap(map[string]bool{o.compare: v}); err != nil {
				return fmt.Errorf("--compare %s: %w", o.compare, err)
			}
		}
	}
	if o.parallelism < 1 {
		return fmt.Errorf("--parallelism must be at least 1, got %d", o.parallelism)
	}
	sel, err := o.file.Select(o.testCase, o.workloadName, o.labelFilter)
	if err != nil {
		return err
	}
	o.selected = sel
	return nil
}

// childSpec is what the parent tells a child process.
type childSpec struct {
	File       string  `json:"file"`
	TestCase   string  `json:"testCase"`
	Workload   string  `json:"workload"`
	Variant    variant `json:"variant"`
	Cluster    string  `json:"cluster"`
	Topic      string  `json:"topic"`
	RunID      string  `json:"runID"`
	ResultPath string  `json:"resultPath"`
	Terminal   bool    `json:"terminal"`
	Parallel   int     `json:"parallelism"`
	NoSeries   bool    `json:"noQueueSeries"`
	ShowLogs   bool    `json:"showLogs"`
	LogLevel   int     `json:"logLevel"`

	Kind       provider.Kind       `json:"kind"`
	Kubeconfig provider.Kubeconfig `json:"kubeconfig"`
}

// Run runs every selected workload (twice with --compare) in a child
// process each, then writes the results and prints the table.
func (o *RunOptions) Run(ctx context.Context) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	tmp, err := os.MkdirTemp("", "schedq-perf-run-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	started := time.Now()
	fmt.Fprintf(o.ErrOut, "running %d workload(s)%s on %s from %s\n", len(o.selected), compareNote(o.compare), o.cluster, o.path)

	byVariant := make([][]*runner.Result, len(o.variants))
	var all []*runner.Result
	interrupted := false
	for _, s := range o.selected {
		for vi, v := range o.variants {
			if ctx.Err() != nil {
				interrupted = true
				break
			}
			res := o.runChild(ctx, exe, tmp, s, v)
			byVariant[vi] = append(byVariant[vi], res)
			all = append(all, res)
			if res.Error != "" {
				fmt.Fprintf(o.ErrOut, "error: %s\n", res.Error)
			}
		}
	}
	if ctx.Err() != nil {
		interrupted = true
	}
	if len(all) == 0 {
		return errors.New("interrupted before any workload ran")
	}
	if err := o.writeResults(started, byVariant, all); err != nil {
		return err
	}
	var failed []string
	for _, r := range all {
		if r.Error != "" {
			failed = append(failed, strings.TrimSpace(r.TestCase+"/"+r.Workload+" "+r.Variant))
		}
	}
	thresholds := report.ThresholdFailures(all)
	for _, t := range thresholds {
		fmt.Fprintf(o.ErrOut, "threshold: %s\n", t)
	}
	switch {
	case interrupted:
		return errors.New("interrupted")
	case len(failed) > 0:
		return fmt.Errorf("%d of %d workload runs failed: %s", len(failed), len(all), strings.Join(failed, ", "))
	case len(thresholds) > 0:
		return fmt.Errorf("%d threshold check(s) failed", len(thresholds))
	}
	return nil
}

func compareNote(gate string) string {
	if gate == "" {
		return ""
	}
	return fmt.Sprintf(" twice, %s on and off,", gate)
}

// runChild runs one workload in a child process and reads its result. A
// child that leaves no result yields a Result with the reason as Error.
func (o *RunOptions) runChild(ctx context.Context, exe, tmp string, s *workload.Selected, v variant) *runner.Result {
	id := runner.NewRunID()
	spec := childSpec{
		File:       o.path,
		TestCase:   s.TestCase,
		Workload:   s.Workload,
		Variant:    v,
		Cluster:    o.cluster,
		Topic:      o.topic,
		RunID:      id,
		ResultPath: filepath.Join(tmp, id+".result.json"),
		Terminal:   o.terminal,
		Parallel:   o.parallelism,
		NoSeries:   o.noSeries,
		Kind:       provider.Kind{Image: o.kindImage, ClusterName: o.kindName, Keep: o.keep},
		Kubeconfig: provider.Kubeconfig{Path: o.kubeconfig, Context: o.kubeContext, MetricsURL: o.metricsURL, AllowExisting: o.allowExisting},
	}
	if o.root != nil {
		spec.ShowLogs, spec.LogLevel = o.root.showLogs, o.root.logLevel
	}
	failed := func(err error) *runner.Result {
		return &runner.Result{Path: o.path, TestCase: s.TestCase, Workload: s.Workload, Variant: v.Name, Error: err.Error()}
	}
	specPath := filepath.Join(tmp, id+".spec.json")
	data, err := json.Marshal(spec)
	if err != nil {
		return failed(err)
	}
	if err := os.WriteFile(specPath, data, 0o600); err != nil {
		return failed(err)
	}
	cmd := exec.Command(exe, "run", childCommand, "--spec", specPath)
	cmd.Stdout = o.ErrOut
	cmd.Stderr = o.ErrOut
	if err := cmd.Start(); err != nil {
		return failed(fmt.Errorf("start %s: %w", exe, err))
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var waitErr error
	select {
	case waitErr = <-done:
	case <-ctx.Done():
		// The child cleans up on SIGINT (a terminal's Ctrl-C reaches it too).
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case waitErr = <-done:
		case <-time.After(5 * time.Minute):
			_ = cmd.Process.Kill()
			waitErr = <-done
		}
	}
	data, err = os.ReadFile(spec.ResultPath)
	if err != nil {
		if waitErr == nil {
			waitErr = errors.New("it wrote no result")
		}
		return failed(fmt.Errorf("%s: test case %q, workload %q: the workload's process failed: %v", o.path, s.TestCase, s.Workload, waitErr))
	}
	res := &runner.Result{}
	if err := json.Unmarshal(data, res); err != nil {
		return failed(fmt.Errorf("result of %s/%s: %w", s.TestCase, s.Workload, err))
	}
	return res
}

// writeResults writes everything to --out and prints the table.
func (o *RunOptions) writeResults(started time.Time, byVariant [][]*runner.Result, all []*runner.Result) error {
	var files []string
	for vi, v := range o.variants {
		if len(byVariant[vi]) == 0 {
			continue
		}
		p, err := report.WriteDataItems(o.out, v.Name, o.topic, started, byVariant[vi])
		if err != nil {
			return err
		}
		files = append(files, p)
	}
	for _, r := range all {
		if len(r.Queue.Samples) == 0 {
			continue
		}
		j, c, err := report.WriteSeries(o.out, r)
		if err != nil {
			return err
		}
		files = append(files, j, c)
	}
	data, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	resultsPath := filepath.Join(o.out, "results.json")
	if err := os.WriteFile(resultsPath, append(data, '\n'), 0o644); err != nil {
		return err
	}
	files = append(files, resultsPath)

	h := report.HTML{
		Title:     "schedq-perf: " + filepath.Base(o.path),
		Command:   "schedq-perf run " + strings.Join(os.Args[1:], " "),
		Generated: time.Now(),
		Host:      hostInfo(),
		Gate:      o.compare,
		Results:   all,
	}
	if o.compare != "" {
		h.Pairs = report.PairResults(byVariant[0], byVariant[1])
	}
	table, written, err := writeReport(o.out, h)
	if err != nil {
		return err
	}
	files = append(files, written...)

	fmt.Fprint(o.Out, table)
	fmt.Fprintf(o.Out, "\nresults in %s:\n", o.out)
	for _, p := range files {
		fmt.Fprintf(o.Out, "  %s\n", filepath.Base(p))
	}
	return nil
}

// writeReport writes the table (summary.txt) and the HTML report of h's
// results into dir, and returns the table and the files.
func writeReport(dir string, h report.HTML) (string, []string, error) {
	var table bytes.Buffer
	var err error
	if h.Gate != "" {
		err = report.WriteCompareTable(&table, h.Gate, h.Pairs)
	} else {
		err = report.WriteSummaryTable(&table, h.Results)
	}
	if err != nil {
		return "", nil, err
	}
	htmlPath := filepath.Join(dir, "report.html")
	f, err := os.Create(htmlPath)
	if err != nil {
		return "", nil, err
	}
	if err := h.Write(f); err != nil {
		f.Close()
		return "", nil, err
	}
	if err := f.Close(); err != nil {
		return "", nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.txt"), table.Bytes(), 0o644); err != nil {
		return "", nil, err
	}
	return table.String(), []string{htmlPath}, nil
}

// hostInfo describes the machine the run measured.
func hostInfo() string {
	s := fmt.Sprintf("%s/%s, %d CPUs", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(data)); len(f) >= 3 {
			s += ", load average " + strings.Join(f[:3], " ")
		}
	}
	return s
}

var startMessage = map[string]string{
	provider.NameEmbedded:   "starting an embedded control plane",
	provider.NameKind:       "creating a kind cluster",
	provider.NameKubeconfig: "connecting to the kubeconfig's cluster",
}

// newCmdRunChild is the hidden command a child process runs.
func newCmdRunChild(ro *rootOptions, streams genericiooptions.IOStreams) *cobra.Command {
	var specPath string
	cmd := &cobra.Command{
		Use:    childCommand,
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := os.ReadFile(specPath)
			if err != nil {
				return err
			}
			var spec childSpec
			if err := json.Unmarshal(data, &spec); err != nil {
				return fmt.Errorf("%s: %w", specPath, err)
			}
			return runWorkloadChild(cmd.Context(), spec, streams)
		},
	}
	cmd.Flags().StringVar(&specPath, "spec", "", "the parent's instructions (JSON)")
	return cmd
}

// runWorkloadChild runs one workload on a fresh cluster and writes its
// result. The workload's failure is in the result, not the exit status.
func runWorkloadChild(ctx context.Context, spec childSpec, streams genericiooptions.IOStreams) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	res := &runner.Result{Path: spec.File, TestCase: spec.TestCase, Workload: spec.Workload, Variant: spec.Variant.Name}
	write := func() error {
		data, err := json.Marshal(res)
		if err != nil {
			return err
		}
		return os.WriteFile(spec.ResultPath, data, 0o600)
	}
	fail := func(err error) error {
		res.Error = err.Error()
		return write()
	}

	f, err := workload.Load(spec.File)
	if err != nil {
		return fail(err)
	}
	sel, err := f.Select(spec.TestCase, spec.Workload, "")
	if err != nil {
		return fail(err)
	}
	s := sel[0]
	gates, emulation := s.EffectiveFeatureGates()
	for k, v := range spec.Variant.Gates {
		if set, ok := s.FeatureGates[k]; ok && set != v {
			fmt.Fprintf(streams.ErrOut, "warning: %s sets %s=%t; --compare overrides it with %t\n", s.Name(), k, set, v)
		}
		gates[k] = v
	}
	var prov provider.Provider
	switch spec.Cluster {
	case provider.NameKind:
		prov = &spec.Kind
	case provider.NameKubeconfig:
		prov = &spec.Kubeconfig
	default:
		prov = provider.Embedded{}
	}
	runLabels := map[string]string{runner.RunLabelKey: spec.RunID}
	pspec := provider.Spec{Workload: s, FeatureGates: gates, EmulationVersion: emulation, RunLabels: runLabels}
	if spec.ShowLogs {
		pspec.Log, pspec.LogLevel = streams.ErrOut, spec.LogLevel
	}
	workloadName := s.Name()
	if spec.Variant.Name != "" {
		workloadName += " " + spec.Variant.Name
	}
	fmt.Fprintf(streams.ErrOut, "%s: %s\n", workloadName, startMessage[prov.Name()])
	inst, err := prov.Start(ctx, pspec)
	if err != nil {
		return fail(fmt.Errorf("%s: test case %q, workload %q: %w", spec.File, s.TestCase, s.Workload, err))
	}
	for _, n := range inst.Notes {
		fmt.Fprintf(streams.ErrOut, "%s: %s\n", workloadName, n)
	}
	var warnings io.Writer = streams.ErrOut
	got, runErr := runner.Run(ctx, s, inst.Cluster, runner.Options{
		Topic:       spec.Topic,
		Labels:      runLabels,
		Variant:     spec.Variant.Name,
		Progress:    runner.NewProgress(streams.ErrOut, spec.Terminal),
		Parallelism: spec.Parallel,
		QueueInterval: func() time.Duration {
			if spec.NoSeries {
				return -1
			}
			return 0
		}(),
		Ledger:   inst.Ledger,
		Warnings: warnings,
	})
	res = got
	res.FeatureGates, res.EmulationVersion, res.StartupDuration = gates, emulation, inst.StartDuration
	// Clean up whatever happened, also after an interrupt.
	stopCtx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := inst.Stop(stopCtx); err != nil {
		msg := fmt.Sprintf("cleaning up the %s cluster: %v", prov.Name(), err)
		res.Warnings = append(res.Warnings, msg)
		fmt.Fprintf(streams.ErrOut, "warning: %s\n", msg)
	}
	if runErr != nil && res.Error == "" {
		res.Error = runErr.Error()
	}
	return write()
}
