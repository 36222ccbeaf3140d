package run

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/outfile"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/provider"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/quote"
)

// ChildCommand is the name of the hidden subcommand that runs one workload.
const ChildCommand = "__workload"

// CPUProfileEnv names a directory: when set, each workload's process writes
// its CPU profile there (TestCase_Workload[_variant].cpu.pprof). With the
// embedded cluster the profile holds kube-apiserver, kube-scheduler and the
// runner, which share the process, as in upstream's harness.
const CPUProfileEnv = "SCHEDQ_PERF_CPUPROFILE"

// stopTimeout bounds a provider's cleanup.
const stopTimeout = 5 * time.Minute

// RunChild runs the workload of the spec at specPath on a fresh cluster and
// writes its result where the spec says. The workload's failure is in the
// result, not in the returned error.
func RunChild(ctx context.Context, specPath string, stderr io.Writer) error {
	data, err := bound.ReadFile(ctx, specPath, maxSpecBytes)
	if err != nil {
		return err
	}
	var spec ChildSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return fmt.Errorf("%s: %w", specPath, err)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, stopWatching, parentGone := watchParent(ctx)
	defer stopWatching()
	// Cleaning up matters more than saying so: a write to a stderr whose
	// reader died with the parent must fail, not end this process.
	ignoreBrokenPipe()
	if dir := os.Getenv(CPUProfileEnv); dir != "" {
		stopProfile, err := startCPUProfile(dir, spec)
		if err != nil {
			return fmt.Errorf("%s: %w", CPUProfileEnv, err)
		}
		defer stopProfile()
	}
	res := runChild(ctx, spec, stderr, parentGone)
	if parentGone() {
		removeRunTempDir(specPath)
		return errParentGone
	}
	data, err = json.Marshal(res)
	if err != nil {
		return err
	}
	return outfile.WriteFile(spec.ResultPath, data, 0o600)
}

// maxSpecBytes caps the spec file a child reads: the run's settings and a
// few names.
const maxSpecBytes = 1 << 20

func startCPUProfile(dir string, spec ChildSpec) (func(), error) {
	name := spec.TestCase + "_" + spec.Workload
	if spec.Variant.Name != "" {
		name += "_" + spec.Variant.Name
	}
	name = strings.NewReplacer("/", "_", `\\`, "_", " ", "_", "=", "-").Replace(name) + ".cpu.pprof"
	d, err := outfile.OpenDir(dir)
	if err != nil {
		return nil, err
	}
	f, err := d.Create(name, 0o644)
	if err != nil {
		d.Close()
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Discard()
		d.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); _ = f.Commit(); d.Close() }, nil
}

func runChild(ctx context.Context, spec ChildSpec, stderr io.Writer, parentGone func() bool) *runner.Result {
	set := spec.Settings
	res := &runner.Result{Path: set.Source, TestCase: spec.TestCase, Workload: spec.Workload, Variant: spec.Variant.Name}
	fail := func(err error) *runner.Result {
		res.Error = err.Error()
		return res
	}
	f, _, err := load(set.Source, set.WorkloadRoot)
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
			fmt.Fprintf(stderr, "warning: %s sets %s=%t; --compare overrides it with %t\n", s.Name(), k, set, v)
		}
		gates[k] = v
	}
	reg, ok := provider.Lookup(set.Cluster)
	if !ok {
		return fail(fmt.Errorf("--cluster %s: no such provider in this binary", set.Cluster))
	}
	prov := reg.New(set.Provider)
	runLabels := map[string]string{runner.RunLabelKey: spec.RunID}
	pspec := provider.Spec{Workload: s, FeatureGates: gates, EmulationVersion: emulation, RunLabels: runLabels}
	if set.ShowLogs {
		pspec.Log, pspec.LogLevel = stderr, set.LogLevel
	}
	name := s.Name()
	if spec.Variant.Name != "" {
		name += " " + spec.Variant.Name
	}
	fmt.Fprintf(stderr, "%s: %s\n", name, reg.Starting)
	inst, err := prov.Start(ctx, pspec)
	if err != nil {
		return fail(fmt.Errorf("%s: test case %q, workload %q: %w", set.Source, s.TestCase, s.Workload, err))
	}
	for _, n := range inst.Notes {
		fmt.Fprintf(stderr, "%s: %s\n", name, n)
	}
	queueInterval := time.Duration(0)
	if set.NoSeries {
		queueInterval = -1
	}
	got, runErr := runner.Run(ctx, s, inst.Cluster, runner.Options{
		Topic:           set.Topic,
		Labels:          runLabels,
		Variant:         spec.Variant.Name,
		NamespacePrefix: inst.NamespacePrefix,
		Progress:        runner.NewProgress(stderr, set.Terminal),
		Parallelism:     set.Parallelism,
		QueueInterval:   queueInterval,
		Ledger:          inst.Ledger,
		ProfileDir:      spec.ProfileDir,
		Warnings:        stderr,
	})
	res = got
	res.FeatureGates, res.EmulationVersion, res.StartupDuration = gates, emulation, inst.StartDuration
	res.Configuration = inst.Configuration
	// Clean up whatever happened, also after an interrupt.
	interrupted := ctx.Err() != nil
	switch {
	case interrupted && parentGone():
		fmt.Fprintf(stderr, "%s: %v: cleaning up\n", name, errParentGone)
	case interrupted:
		fmt.Fprintf(stderr, "%s: interrupted: cleaning up (interrupt again to leave at once)\n", name)
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	began := time.Now()
	if err := inst.Stop(stopCtx); err != nil {
		msg := fmt.Sprintf("cleaning up the %s cluster: %v", prov.Name(), err)
		if reg.LeftBehind != nil {
			msg += "\n" + reg.LeftBehind(set.Provider, spec.RunID)
		}
		res.Warnings = append(res.Warnings, msg)
		fmt.Fprintf(stderr, "warning: %s\n", quote.Text(msg))
	}
	if inst.Removed != "" {
		res.Cleanup = fmt.Sprintf("%s in %.1fs", inst.Removed, time.Since(began).Seconds())
		fmt.Fprintf(stderr, "%s: removed %s\n", name, res.Cleanup)
	}
	if runErr != nil && res.Error == "" {
		res.Error = runErr.Error()
	}
	return res
}
