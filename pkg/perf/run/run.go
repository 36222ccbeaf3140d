// Package run orchestrates `perf run`: it selects the workloads of a file
// (or of a workload embedded in the binary), runs each one, and each side of
// a --compare, in a child process of its own on a fresh cluster from a
// registered provider, then writes the DataItems, queue series, results and
// report. Feature gates are process-global in the embedded control plane, so
// every workload gets a process; the same path serves every provider.
//
// The commands (kubectl schedq perf, schedq-perf) only parse flags into
// Settings and call Prepare and Run; the hidden child command calls
// RunChild with the ChildSpec file the parent wrote, which carries the
// same Settings.
package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/outfile"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/provider"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/report"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/quote"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
	"github.com/kubectl-schedq/kubectl-schedq/workloads"
)

// Settings are one run's settings, as `perf run`'s flags give them. They
// flow down unchanged: Prepare resolves Source and Topic, each workload's
// process gets them whole in its ChildSpec, and Provider goes to the
// provider as it is.
type Settings struct {
	// Source is NAME (a workload embedded in the binary, see
	// workloads.List) or FILE (any scheduler_perf config); Prepare makes a
	// FILE's path absolute.
	Source string `json:"source"`
	// WorkloadRoot is the tree the files a FILE names must lie in
	// (--workload-root; empty: workload.DefaultRoot).
	WorkloadRoot string `json:"workloadRoot,omitempty"`

	TestCase    string `json:"testCase,omitempty"`
	Workload    string `json:"workload,omitempty"`
	LabelFilter string `json:"labelFilter,omitempty"`
	// LabelFilterSet says --label-filter was given (not its default).
	LabelFilterSet bool `json:"labelFilterSet,omitempty"`

	Cluster string `json:"cluster"`
	// Provider are the flags of the providers (--keep, --kind-image, …).
	Provider provider.Settings `json:"provider"`
	// Compare is the gate to run on and off; empty runs once.
	Compare string `json:"compare,omitempty"`

	Out         string `json:"out"`
	Topic       string `json:"topic"`
	Parallelism int    `json:"parallelism"`
	NoSeries    bool   `json:"noQueueSeries,omitempty"`

	// ShowLogs and LogLevel pass the control plane's logs to stderr.
	ShowLogs bool `json:"showLogs,omitempty"`
	LogLevel int  `json:"logLevel,omitempty"`
	// Terminal draws progress bars instead of lines.
	Terminal bool `json:"terminal,omitempty"`
}

// Options are a run's Settings and how this process runs it.
type Options struct {
	Settings

	// Executable and ChildArgs run one workload: Executable ChildArgs...
	// --spec FILE. Empty Executable is os.Executable().
	Executable string
	ChildArgs  []string
	// Command is the command line the report quotes.
	Command string
	// Delegate runs the command line on another binary when the provider
	// lives there (schedq-perf for --cluster embedded); nil refuses.
	Delegate func(binary string) error

	// Stdout receives the table; Stderr progress, warnings and the
	// children's output.
	Stdout, Stderr io.Writer
}

// DefaultParallelism is upstream's: 30 goroutines create pods.
const DefaultParallelism = 30

// Variant is one side of a comparison (the only one without --compare).
type Variant struct {
	Name  string          `json:"name"`
	Gates map[string]bool `json:"gates,omitempty"`
}

// Plan is a validated run: the file loaded and the workloads selected.
type Plan struct {
	opts     Options
	reg      provider.Registration
	delegate string
	file     *workload.File
	path     string
	selected []*workload.Selected
	variants []Variant
	// profileDirs holds the directory of each result's CPU profiles.
	profileDirs map[*runner.Result]string
}

// Prepare loads and validates everything before anything starts, so that a
// mistake shows at once: the source, the flags against the provider, the
// gate to compare, and every template the selected workloads name.
func Prepare(o Options) (*Plan, error) {
	p := &Plan{opts: o, profileDirs: map[*runner.Result]string{}}
	if o.Workload != "" && o.LabelFilterSet {
		return nil, errors.New("--workload and --label-filter both select workloads: give one of them")
	}
	if o.Workload != "" && !o.LabelFilterSet {
		p.opts.LabelFilter = ""
	}
	if o.Parallelism < 1 {
		return nil, fmt.Errorf("--parallelism must be at least 1, got %d", o.Parallelism)
	}
	// Said now, not after the workloads have run.
	if err := outfile.CheckDir(filepath.Clean(o.Out)); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	reg, delegate, err := provider.Resolve(o.Cluster)
	if err != nil {
		return nil, err
	}
	p.reg, p.delegate = reg, delegate
	if delegate != "" {
		return p, nil
	}
	if err := reg.Validate(o.Provider, o.Compare); err != nil {
		return nil, err
	}
	if o.Compare != "" {
		if err := workload.CheckGate(o.Compare, true); err != nil {
			return nil, fmt.Errorf("--compare %s: %w", o.Compare, err)
		}
		if err := workload.CheckGate(o.Compare, false); err != nil {
			return nil, fmt.Errorf("--compare %s: %w", o.Compare, err)
		}
		p.variants = []Variant{
			{Name: o.Compare + "=true", Gates: map[string]bool{o.Compare: true}},
			{Name: o.Compare + "=false", Gates: map[string]bool{o.Compare: false}},
		}
	} else {
		p.variants = []Variant{{}}
	}
	if p.file, p.path, err = load(o.Source, o.WorkloadRoot); err != nil {
		return nil, err
	}
	if p.opts.WorkloadRoot != "" {
		p.opts.WorkloadRoot = p.file.Root
	}
	p.opts.Source = p.path
	if p.opts.Topic == "" {
		p.opts.Topic = defaultTopic(p.path)
	}
	if p.selected, err = p.file.Select(o.TestCase, p.opts.Workload, p.opts.LabelFilter); err != nil {
		if errors.As(err, new(*workload.OutsideRootError)) {
			err = fmt.Errorf("%w: move the file into it, or name a tree that holds both with --workload-root DIR", err)
		}
		return nil, err
	}
	for _, s := range p.selected {
		if err := runner.CheckOps(s); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// load reads FILE, else the embedded workload NAME, and returns the
// source resolved: FILE's absolute path or NAME. A path that exists wins
// over a name, except a bare name, which is the embedded workload. The
// parent and each workload's process decide with it alike.
func load(source, root string) (f *workload.File, resolved string, err error) {
	bare := !strings.ContainsAny(source, `/\`) && filepath.Ext(source) == ""
	if bare && workloads.Has(source) {
		f, err := workloads.Load(source)
		return f, source, err
	}
	if _, statErr := os.Stat(source); statErr == nil || !bare {
		abs, err := filepath.Abs(source)
		if err != nil {
			return nil, "", err
		}
		f, err := workload.LoadWithin(abs, root)
		return f, abs, err
	}
	return nil, "", fmt.Errorf("%q is neither a file nor an embedded workload (`perf list` shows them)", source)
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

// ChildSpec is what the parent tells a child process: the run's Settings
// as Prepare resolved them, and which workload and variant to run.
type ChildSpec struct {
	Settings Settings `json:"settings"`
	// TestCase and Workload name the selected workload in Settings.Source.
	TestCase   string  `json:"testCase"`
	Workload   string  `json:"workload"`
	Variant    Variant `json:"variant"`
	RunID      string  `json:"runID"`
	ResultPath string  `json:"resultPath"`
	// ProfileDir receives the CPU profiles of the workload's
	// startCollectingProfile ops; the parent moves them into --out.
	ProfileDir string `json:"profileDir"`
}

// ErrInterrupted is returned by Run after SIGINT or SIGTERM.
var ErrInterrupted = errors.New("interrupted")

// Run runs every selected workload (twice with --compare) in a child
// process each, then writes the results and prints the table. interrupts
// delivers the signals the command received: the first stops the run and
// cleans up, a second leaves at once and prints what is left.
func (p *Plan) Run(ctx context.Context, interrupts <-chan os.Signal) error {
	o := &p.opts
	if p.delegate != "" {
		if o.Delegate == nil {
			return fmt.Errorf("--cluster %s runs in %s, and this command cannot hand over to it", o.Cluster, p.delegate)
		}
		return o.Delegate(p.delegate)
	}
	tmp, err := os.MkdirTemp("", tempDirPrefix)
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	exe := o.Executable
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return err
		}
	}
	started := time.Now()
	fmt.Fprintf(o.Stderr, "running %d workload(s)%s on %s from %s\n", len(p.selected), compareNote(o.Compare), o.Cluster, p.path)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hardStop := make(chan struct{})
	go watchInterrupts(interrupts, cancel, hardStop)

	byVariant := make([][]*runner.Result, len(p.variants))
	var all []*runner.Result
	for _, s := range p.selected {
		for vi, v := range p.variants {
			if ctx.Err() != nil {
				break
			}
			res, err := p.runChild(ctx, hardStop, exe, tmp, s, v)
			if err != nil {
				return err
			}
			byVariant[vi] = append(byVariant[vi], res)
			all = append(all, res)
			if res.Error != "" {
				fmt.Fprintf(o.Stderr, "error: %s\n", quote.Text(res.Error))
			}
		}
	}
	interrupted := ctx.Err() != nil
	if len(all) == 0 {
		return ErrInterrupted
	}
	var failed []string
	for _, r := range all {
		if r.Error != "" {
			failed = append(failed, strings.TrimSpace(r.TestCase+"/"+r.Workload+" "+r.Variant))
		}
	}
	if err := p.writeResults(started, byVariant, all, interrupted || len(failed) > 0); err != nil {
		return err
	}
	thresholds := report.ThresholdFailures(all)
	for _, t := range thresholds {
		fmt.Fprintf(o.Stderr, "threshold: %s\n", t)
	}
	switch {
	case interrupted:
		return ErrInterrupted
	case len(failed) > 0:
		return fmt.Errorf("%d of %d workload runs failed: %s", len(failed), len(all), strings.Join(failed, ", "))
	case len(thresholds) > 0:
		// The first check's words make the one-line reason precise.
		return fmt.Errorf("%d threshold check(s) failed: %s", len(thresholds), thresholds[0])
	}
	return nil
}

// interruptGrace is how long after the first signal another one is the
// same interrupt. coreutils' timeout, CI runners and terminals signal the
// process and then its whole group, so one interrupt can arrive twice a few
// microseconds apart; a person who means to leave at once presses again
// later.
var interruptGrace = 500 * time.Millisecond

// watchInterrupts cancels the run on the first signal, SIGINT or SIGTERM
// alike, and closes hardStop on a second that comes interruptGrace or more
// after it.
func watchInterrupts(sigs <-chan os.Signal, cancel func(), hardStop chan struct{}) {
	if sigs == nil {
		return
	}
	if _, ok := <-sigs; !ok {
		return
	}
	first := time.Now()
	cancel()
	for {
		if _, ok := <-sigs; !ok {
			return
		}
		if time.Since(first) >= interruptGrace {
			close(hardStop)
			return
		}
	}
}

func compareNote(gate string) string {
	if gate == "" {
		return ""
	}
	return fmt.Sprintf(" twice, %s on and off,", gate)
}

// ErrLeftBehind is returned when a second interrupt left the run's objects
// in place.
var ErrLeftBehind = errors.New("interrupted twice: the run's objects may be left behind")

// runChild runs one workload in a child process and reads its result. A
// child that leaves no result yields a Result with the reason as Error.
// After a second interrupt it returns at once with ErrLeftBehind, having
// said what is left and how to remove it.
func (p *Plan) runChild(ctx context.Context, hardStop <-chan struct{}, exe, tmp string, s *workload.Selected, v Variant) (*runner.Result, error) {
	o := &p.opts
	id := runner.NewRunID()
	spec := ChildSpec{
		Settings:   o.Settings,
		TestCase:   s.TestCase,
		Workload:   s.Workload,
		Variant:    v,
		RunID:      id,
		ResultPath: filepath.Join(tmp, id+".result.json"),
		ProfileDir: filepath.Join(tmp, id+".profiles"),
	}
	failed := func(err error) *runner.Result {
		return &runner.Result{Path: p.path, TestCase: s.TestCase, Workload: s.Workload, Variant: v.Name, Error: err.Error()}
	}
	specPath := filepath.Join(tmp, id+".spec.json")
	data, err := json.Marshal(spec)
	if err != nil {
		return failed(err), nil
	}
	if err := outfile.WriteFile(specPath, data, 0o600); err != nil {
		return failed(err), nil
	}
	cmd := exec.Command(exe, append(slices.Clone(o.ChildArgs), "--spec", specPath)...)
	cmd.Stdout = o.Stderr
	cmd.Stderr = o.Stderr
	// The child gets its own process group: the parent forwards the first
	// interrupt, so that a terminal's second Ctrl-C does not kill the child
	// in the middle of its cleanup before the parent can report.
	setProcessGroup(cmd)
	// A grandchild that outlives the child must not hold Wait forever.
	cmd.WaitDelay = 5 * time.Second
	done, err := StartChild(cmd)
	if err != nil {
		return failed(fmt.Errorf("start %s: %w", exe, err)), nil
	}
	var waitErr error
	select {
	case waitErr = <-done:
	case <-ctx.Done():
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case waitErr = <-done:
		case <-hardStop:
			killGroup(cmd)
			<-done
			fmt.Fprintf(o.Stderr, "interrupted again: stopped without cleaning up.\n%s\n", p.leftBehind(spec))
			return nil, ErrLeftBehind
		case <-time.After(stopTimeout):
			killGroup(cmd)
			waitErr = <-done
		}
	}
	// The result is read also after an interrupt: not with the run's context.
	data, err = bound.ReadFile(context.Background(), spec.ResultPath, report.MaxReadBytes)
	if err != nil {
		if waitErr == nil {
			waitErr = errors.New("it wrote no result")
		}
		return failed(fmt.Errorf("%s: test case %q, workload %q: the workload's process failed: %v", p.path, s.TestCase, s.Workload, waitErr)), nil
	}
	res := &runner.Result{}
	if err := json.Unmarshal(data, res); err != nil {
		return failed(fmt.Errorf("result of %s/%s: %w", s.TestCase, s.Workload, err)), nil
	}
	if len(res.Profiles) > 0 {
		p.profileDirs[res] = spec.ProfileDir
	}
	return res, nil
}

// leftBehind says what a run killed before its cleanup may have left, and
// the command that removes it.
func (p *Plan) leftBehind(spec ChildSpec) string {
	if p.reg.LeftBehind != nil {
		return p.reg.LeftBehind(spec.Settings.Provider, spec.RunID)
	}
	return fmt.Sprintf("everything run %s created carries the label %s=%s", spec.RunID, runner.RunLabelKey, spec.RunID)
}
