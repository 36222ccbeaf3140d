package explainacc

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
	"github.com/kubectl-schedq/kubectl-schedq/perf/embedded"
	"github.com/kubectl-schedq/kubectl-schedq/perf/groundtruth"
	"github.com/kubectl-schedq/kubectl-schedq/perf/internal/kubeversion"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/cmd"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/provider"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// Environment of TestExplainAccuracy.
const (
	// DurationEnv sets how long each scenario runs (Go duration; default:
	// CI size, each scenario's ciDuration).
	DurationEnv = "SCHEDQ_EXPLAINACC_DURATION"
	// OutEnv names a directory for the report (report.md) and the
	// recordings (*.json.gz), which Score can read again.
	OutEnv = "SCHEDQ_EXPLAINACC_OUT"
	// RunsEnv lists what to record, comma separated: scenario names
	// (scenario, burst, churn) and "workloads" (every workload of
	// workloads/ at its integration-test size); default ciRuns.
	RunsEnv = "SCHEDQ_EXPLAINACC_RUNS"
	// SeedsEnv lists the seeds each scenario runs with, comma separated
	// (default 1). Seeds from calibrationSeeds up fit the calibration
	// (make explain-calibrate); the reported runs use others.
	SeedsEnv = "SCHEDQ_EXPLAINACC_SEEDS"
	// childEnv tells a re-run of the test binary which gate setting to run,
	// and childOutEnv where to save its recording.
	childEnv    = "SCHEDQ_EXPLAINACC_CHILD"
	childOutEnv = "SCHEDQ_EXPLAINACC_CHILD_OUT"
	// The scenario and seed a child runs, or the workload.
	childScenarioEnv = "SCHEDQ_EXPLAINACC_CHILD_SCENARIO"
	childSeedEnv     = "SCHEDQ_EXPLAINACC_CHILD_SEED"
	childFileEnv     = "SCHEDQ_EXPLAINACC_CHILD_FILE"
	childTestCaseEnv = "SCHEDQ_EXPLAINACC_CHILD_TEST_CASE"
	childWorkloadEnv = "SCHEDQ_EXPLAINACC_CHILD_WORKLOAD"
)

// ciRuns is what TestExplainAccuracy records unless RunsEnv says otherwise.
const ciRuns = "scenario,workloads"

// calibrationSeeds: seeds from this one up are the calibration's training
// runs, never reported.
const calibrationSeeds = 100

// The targets.
const (
	targetAccuracy = 0.95
	targetRetryP90 = time.Second
	// minRetrySamples is how many scored windows a queue needs before its
	// p90 is held to the target. Windows come in episodes — one NodeAdd or
	// one wave of binding failures moves fifteen pods at once, and a pod
	// is scored at every sample until it is popped — so a queue with fewer
	// windows in a 20-second run rests on a handful of episodes.
	minRetrySamples = 200
)

// Sampling.
const (
	sampleInterval = 250 * time.Millisecond
	// The sampler reads at most a third of the time (see record).
	// answerWindow is how long after explain's calls the ground truth is
	// read again: a pod that moved meanwhile may be in either place. The
	// API server answers a list, and the scheduler a scrape, as of when it
	// receives the call; this bounds how late that may be on a busy
	// machine.
	answerWindow = 250 * time.Millisecond
)

// TestExplainAccuracy records the scenarios (scenario_test.go), and the
// integration-test size of every workload in workloads/, on an embedded
// control plane with SchedulerPopFromBackoffQ on, then off, each in a
// process of its own (the gate is process-global). Each process samples,
// every quarter second, what `kubectl schedq explain -A` reads next to the
// scheduler's own queue, and logs when the scheduler pops each pod. This
// process scores explain.Infer on the recordings and holds it, per gate
// setting over all of them, to the targets: at least 95% of pending pods
// placed in the right queue, and the next-retry window within 1 s of the
// actual next pop at p90, per queue. It reports the attempts explain shows
// against the scheduler's own count, the error of the next-try estimate,
// and how well the stated confidence is calibrated.
//
// At CI size it records ciRuns, each scenario for its CI duration;
// SCHEDQ_EXPLAINACC_RUNS, _SEEDS and _DURATION choose more (make
// explain-accuracy), SCHEDQ_EXPLAINACC_OUT keeps the report and the
// recordings.
func TestExplainAccuracy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts control planes; skipped with -short")
	}
	dir := os.Getenv(OutEnv)
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	runs := accuracyRuns(t)
	version, where := kubeversion.Get(), "embedded control plane"
	if bin := os.Getenv(ControlPlaneEnv); bin != "" {
		version, where = strings.TrimPrefix(filepath.Base(bin), "schedq-controlplane-"), "embedded control plane built by upstreamgen -controlplane, in a process of its own"
	}
	var report strings.Builder
	fmt.Fprintf(&report, "## explain accuracy against kube-scheduler %s (%s)\n\n", version, where)
	fmt.Fprintf(&report, "Load average (1 min) when the runs began: %.1f.\n\n", LoadAverage())
	pooled := NewResult("both gate settings", false)
	for _, pfb := range []bool{true, false} {
		t.Run(fmt.Sprintf("popFromBackoffQ=%v", pfb), func(t *testing.T) {
			all := NewResult("all runs", pfb)
			withRate := NewResult("all runs, explain --attempt-rate", pfb)
			byScenario := map[string]*Result{}
			var kinds []string
			var rows strings.Builder
			fmt.Fprintf(&rows, "| run, SchedulerPopFromBackoffQ=%v | seed | load | samples | pod-samples | accuracy | attempts right | next-try estimate p90 (active, backoff) |\n|---|---:|---:|---:|---:|---:|---:|---:|\n", pfb)
			for i, r := range runs {
				rec := runChild(t, r, pfb, filepath.Join(dir, fmt.Sprintf("recording-%s-pfb-%v-%02d.json.gz", version, pfb, i)))
				if rec == nil {
					continue
				}
				res := Score(rec, explain.Infer)
				withRate.Merge(Score(rec.WithAttemptRate(time.Second), explain.Infer))
				var text strings.Builder
				res.WriteText(&text)
				t.Logf("%s\n%s", r.name, text.String())
				report.WriteString(text.String())
				if r.scenario == "scenario" {
					checkScenarioCoverage(t, res)
				}
				tot := res.Total()
				seed := strconv.FormatUint(r.seed, 10)
				fmt.Fprintf(&rows, "| %s | %s | %.1f–%.1f | %d | %d | %s | %s | %s, %s |\n", r.name, seed, res.Load[0], res.Load[1], res.Samples, tot.N, pct(tot.Accuracy()),
					pct(res.Attempts.Good()), estimateP90(res, groundtruth.Active), estimateP90(res, groundtruth.Backoff))
				all.Merge(res)
				kind := r.scenario
				if kind == "" {
					kind = "workloads"
				}
				if byScenario[kind] == nil {
					byScenario[kind] = NewResult(kind+" (pooled)", pfb)
					kinds = append(kinds, kind)
				}
				byScenario[kind].Merge(res)
			}
			tot := all.Total()
			fmt.Fprintf(&rows, "| **all** | | | %d | %d | **%s** | %s | %s, %s |\n", all.Samples, tot.N, pct(tot.Accuracy()),
				pct(all.Attempts.Good()), estimateP90(all, groundtruth.Active), estimateP90(all, groundtruth.Backoff))
			fmt.Fprintf(&rows, "| all, with `--attempt-rate` (its second scrape simulated by the sample a second before) | | | | | %s | | %s, %s |\n\n",
				pct(withRate.Total().Accuracy()), estimateP90(withRate, groundtruth.Active), estimateP90(withRate, groundtruth.Backoff))
			report.WriteString(rows.String())
			for _, k := range kinds {
				if len(kinds) > 1 {
					var text strings.Builder
					byScenario[k].WriteText(&text)
					report.WriteString(text.String())
				}
			}
			var text strings.Builder
			all.WriteText(&text)
			t.Logf("all runs\n%s%s", rows.String(), text.String())
			report.WriteString(text.String())
			pooled.Merge(all)
			checkTargets(t, all)
		})
	}
	var text strings.Builder
	pooled.WriteCalibration(&text, version)
	t.Logf("\n%s", text.String())
	report.WriteString(text.String())
	if os.Getenv(OutEnv) != "" {
		if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(report.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("report and recordings in %s", dir)
	}
}

// estimateP90 is the p90 error of the next-try estimate for pods in q, or
// "–" without any.
func estimateP90(res *Result, q groundtruth.QueueName) string {
	if rs := res.Estimate[q]; rs != nil && rs.N > 0 {
		return dur(rs.P90)
	}
	return "–"
}

// An accuracyRun is what one child process records: a scenario with a
// seed, or one workload of workloads/ (file set).
type accuracyRun struct {
	name                     string
	scenario                 string
	seed                     uint64
	file, testCase, workload string
}

// accuracyRuns are the runs RunsEnv names (ciRuns by default), each
// scenario once per seed of SeedsEnv.
func accuracyRuns(t *testing.T) []accuracyRun {
	t.Helper()
	names := os.Getenv(RunsEnv)
	if names == "" {
		names = ciRuns
	}
	seeds := []uint64{1}
	if s := os.Getenv(SeedsEnv); s != "" {
		seeds = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
			if err != nil || n == 0 {
				t.Fatalf("%s=%q: want positive numbers, comma separated", SeedsEnv, s)
			}
			seeds = append(seeds, n)
		}
	}
	var runs []accuracyRun
	for _, name := range strings.Split(names, ",") {
		name = strings.TrimSpace(name)
		if name == "workloads" {
			if os.Getenv(ControlPlaneEnv) != "" {
				t.Logf("the workloads of workloads/ run on perf/go.mod's version only (perf/embedded's provider): not on %s", os.Getenv(ControlPlaneEnv))
				continue
			}
			// A workload is the same whatever the seed: one run per seed
			// only labels a training run apart from a reported one.
			for _, seed := range seeds {
				for _, w := range workloadRuns(t) {
					w.seed = seed
					runs = append(runs, w)
				}
			}
			continue
		}
		if _, ok := findScenario(name); !ok {
			t.Fatalf("%s: %q is neither a scenario (%s) nor \"workloads\"", RunsEnv, name, scenarioNames())
		}
		for _, seed := range seeds {
			runs = append(runs, accuracyRun{name: fmt.Sprintf("%s, seed %d", name, seed), scenario: name, seed: seed})
		}
	}
	return runs
}

func scenarioNames() string {
	var out []string
	for _, sc := range scenarios {
		out = append(out, sc.name)
	}
	return strings.Join(out, ", ")
}

// workloadRuns are the integration-test workloads of workloads/.
func workloadRuns(t *testing.T) []accuracyRun {
	t.Helper()
	var runs []accuracyRun
	paths, err := filepath.Glob(filepath.Join("..", "..", "workloads", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no workloads in ../../workloads (%v)", err)
	}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := workload.Load(abs)
		if err != nil {
			t.Fatal(err)
		}
		sel, err := f.Select("", "", "integration-test")
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sel {
			runs = append(runs, accuracyRun{
				name: fmt.Sprintf("%s %s/%s", filepath.Base(p), s.TestCase, s.Workload),
				file: abs, testCase: s.TestCase, workload: s.Workload,
			})
		}
	}
	return runs
}

// runChild records r in a process of its own and loads the recording.
func runChild(t *testing.T, r accuracyRun, pfb bool, path string) *Recording {
	t.Helper()
	began := time.Now()
	c := exec.Command(os.Args[0], "-test.run=^TestExplainAccuracyChild$", "-test.v", "-test.count=1", "-test.timeout=2h")
	c.Env = append(os.Environ(), childEnv+"="+strconv.FormatBool(pfb), childOutEnv+"="+path,
		childScenarioEnv+"="+r.scenario, childSeedEnv+"="+strconv.FormatUint(r.seed, 10),
		childFileEnv+"="+r.file, childTestCaseEnv+"="+r.testCase, childWorkloadEnv+"="+r.workload)
	out, err := c.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestExplainAccuracyChild") {
		t.Errorf("%s: child process (%v):\n%s", r.name, err, out)
		return nil
	}
	for _, line := range strings.Split(string(out), "\n") {
		if _, msg, ok := strings.Cut(line, "accuracy_test.go:"); ok {
			t.Logf("%s: child: %s", r.name, msg)
		}
	}
	rec, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	rec.Name = r.name
	t.Logf("%s: child ran %v", r.name, time.Since(began).Round(time.Second))
	return rec
}

// checkScenarioCoverage: the scenario is built to put pods in every place
// of the queue.
func checkScenarioCoverage(t *testing.T, res *Result) {
	t.Helper()
	for _, q := range queueOrder {
		if res.Placement[q] == nil || res.Placement[q].N == 0 {
			switch {
			case q == groundtruth.Incomplete, q == groundtruth.Pending:
				// Pod-group members: the pod-group workloads put them there.
			case q == groundtruth.Active, q == groundtruth.InFlight,
				// With PopFromBackoffQ, backoffQ empties as soon as activeQ
				// does: as transient as activeQ itself.
				q == groundtruth.Backoff && res.PopFromBackoffQ:
				// A fast scheduler drains each burst between two samples.
				t.Logf("no pod was in %s at any sample", q)
			default:
				t.Errorf("the scenario put no pod in %s at any sample", q)
			}
		}
	}
}

func checkTargets(t *testing.T, res *Result) {
	t.Helper()
	if tot := res.Total(); tot.N == 0 || tot.Accuracy() < targetAccuracy {
		t.Errorf("placement accuracy %.1f%% of %d pod-samples, want at least %.0f%%", 100*tot.Accuracy(), tot.N, 100*targetAccuracy)
	}
	for _, q := range queueOrder {
		if rs := res.NextRetry[q]; rs != nil && rs.N >= minRetrySamples && rs.P90 > targetRetryP90 {
			t.Errorf("%s: next-retry error p90 %v over %d windows, want at most %v", q, rs.P90, rs.N, targetRetryP90)
		}
	}
}

// TestExplainAccuracyChild is one process of TestExplainAccuracy.
func TestExplainAccuracyChild(t *testing.T) {
	env := os.Getenv(childEnv)
	if env == "" {
		t.Skip("run by TestExplainAccuracy in a process of its own")
	}
	pfb, err := strconv.ParseBool(env)
	if err != nil {
		t.Fatalf("%s=%q: %v", childEnv, env, err)
	}
	logs := &testsupport.TailBuffer{Max: 256 << 10}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("control plane logs (tail):\n%s", logs)
		}
	})
	hideAPIServerMetrics()
	seed, err := strconv.ParseUint(os.Getenv(childSeedEnv), 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", childSeedEnv, os.Getenv(childSeedEnv), err)
	}
	if file := os.Getenv(childFileEnv); file != "" {
		recordWorkload(t, pfb, seed, file, os.Getenv(childTestCaseEnv), os.Getenv(childWorkloadEnv), logs)
		return
	}
	sc, ok := findScenario(os.Getenv(childScenarioEnv))
	if !ok {
		t.Fatalf("%s=%q: no such scenario (%s)", childScenarioEnv, os.Getenv(childScenarioEnv), scenarioNames())
	}
	d := sc.ciDuration
	if s := os.Getenv(DurationEnv); s != "" {
		if d, err = time.ParseDuration(s); err != nil {
			t.Fatalf("%s=%q: %v", DurationEnv, s, err)
		}
	}
	ctx := context.Background()
	rec := NewRecording(sc.name, pfb, explain.DefaultConfig())
	rec.Scenario, rec.Seed = sc.name, seed
	var (
		truth      truthSource
		client     kubernetes.Interface
		kubeconfig string
		external   *externalControlPlane
	)
	if bin := externalBinary(t); bin != "" {
		external = startExternal(t, bin, pfb, logs)
		truth, client, kubeconfig = external, external.client(t), external.kubeconfig
	} else {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		cp, err := embedded.Start(sctx, embedded.Options{
			FeatureGates: map[string]bool{"SchedulerPopFromBackoffQ": pfb},
			Nodes:        4,
			LogOutput:    logs,
			RecordPops:   true,
		})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := cp.Stop(); err != nil {
				t.Errorf("stop: %v", err)
			}
		})
		truth, client, kubeconfig = cp, cp.Client(), cp.KubeconfigPath
	}
	if err := denyBinding(ctx, client, denyPrefix); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, func() string {
		if n := len(truth.Queue().Pods); n != 0 {
			return fmt.Sprintf("%d probe pods still queued", n)
		}
		return ""
	})
	s := seeded(client, t.Logf, seed)
	record(t, truth, kubeconfig, rec, func(ctx context.Context) error { return sc.run(ctx, s, d) })
	if external != nil {
		if err := external.Err(); err != nil {
			t.Fatalf("%v: %v", errExternal, err)
		}
	}
}

// recordWorkload runs one workload on a fresh embedded control plane, as
// schedq-perf run does, and records explain next to the queue meanwhile.
func recordWorkload(t *testing.T, pfb bool, seed uint64, file, testCase, name string, logs *testsupport.TailBuffer) {
	f, err := workload.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	sel, err := f.Select(testCase, name, "")
	if err != nil {
		t.Fatal(err)
	}
	s := sel[0]
	gates, emulation := s.EffectiveFeatureGates()
	gates["SchedulerPopFromBackoffQ"] = pfb
	labels := map[string]string{runner.RunLabelKey: runner.NewRunID()}
	ctx := context.Background()
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	inst, err := embedded.Provider{RecordPops: true}.Start(sctx, provider.Spec{Workload: s, FeatureGates: gates, EmulationVersion: emulation, RunLabels: labels, Log: logs})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := inst.Stop(context.Background()); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	cp := inst.Backend.(*embedded.ControlPlane)
	rec := NewRecording(s.Name(), pfb, explain.DefaultConfig())
	rec.Seed = seed
	record(t, cp, cp.KubeconfigPath, rec, func(ctx context.Context) error {
		_, err := runner.Run(ctx, s, inst.Cluster, runner.Options{Labels: labels, QueueInterval: -1, Ledger: inst.Ledger})
		return err
	})
}

// truthSource is where the ground truth comes from: the scheduler's queue
// now, and every pod's pops.
type truthSource interface {
	Queue() groundtruth.Queue
	Pops() groundtruth.Pops
}

// record samples explain's input and the queue while drive runs, and saves
// the recording, with every pod's pops, where the parent said.
func record(t *testing.T, cp truthSource, kubeconfig string, rec *Recording, drive func(context.Context) error) {
	t.Helper()
	ctx := context.Background()
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var sampleErr error
	o, err := explainOptions(kubeconfig, os.Getenv(ControlPlaneEnv) == "")
	if err != nil {
		t.Fatal(err)
	}
	wg.Add(1)
	go func() { // explain's input, every quarter second at most
		defer wg.Done()
		next := time.Now()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-time.After(time.Until(next)):
			}
			start := time.Now()
			before := cp.Queue()
			midc := make(chan groundtruth.Queue, 1)
			gathered := make(chan struct{})
			go func() {
				select {
				case <-time.After(answerWindow):
				case <-gathered:
				}
				midc <- cp.Queue()
			}()
			g, err := o.Gather(runCtx)
			done := time.Now()
			// The next reading waits twice as long as this one took: explain
			// runs on the control plane's own API server, and reading without
			// pause would keep it busy a third of the time or more, slowing
			// the scheduler it measures.
			next = start.Add(max(sampleInterval, 3*done.Sub(start)))
			close(gathered)
			mid := <-midc
			if err != nil {
				if runCtx.Err() == nil {
					sampleErr = err
				}
				return
			}
			after := cp.Queue()
			if runCtx.Err() != nil {
				return // the reading may have been cut short
			}
			if len(g.Warnings) > 0 {
				sampleErr = fmt.Errorf("explain warned: %v", g.Warnings)
				return
			}
			rec.AddSample(start, done, g.Input, before, mid, after)
		}
	}()

	rec.Start = time.Now()
	rec.Load[0] = LoadAverage()
	err = drive(ctx)
	stop()
	wg.Wait()
	rec.End = time.Now()
	rec.Load[1] = LoadAverage()
	if err != nil {
		t.Fatal(err)
	}
	if sampleErr != nil {
		t.Fatal(sampleErr)
	}
	rec.Pops = cp.Pops()
	// The scheduler's own version (kubernetes_build_info, set by the
	// build of another version's control plane), else perf/'s (a test
	// binary's scheduler reports none).
	rec.KubeVersion = kubeversion.Get()
	for _, s := range rec.Samples {
		if s.Metrics != nil && strings.HasPrefix(s.Metrics.Version, "v1.") {
			rec.KubeVersion = s.Metrics.Version
			break
		}
	}
	var reads []time.Duration
	for _, s := range rec.Samples {
		reads = append(reads, s.Done.Sub(s.Start))
	}
	t.Logf("%d samples, %d pod versions, %d event versions over %v; reading took %v at the median, %v at most; load average %.1f, then %.1f",
		len(rec.Samples), len(rec.Pods), len(rec.Events), rec.End.Sub(rec.Start).Round(time.Millisecond),
		percentile(reads, 0.5).Round(time.Millisecond), percentile(reads, 1).Round(time.Millisecond), rec.Load[0], rec.Load[1])
	if err := rec.Save(os.Getenv(childOutEnv)); err != nil {
		t.Fatal(err)
	}
}

// explainOptions returns `kubectl schedq explain -A`, completed: its Gather
// reads what the command reads. One command gathers every sample, without
// the client's rate limit, which a single run of the command never reaches.
func explainOptions(kubeconfig string, inProcess bool) (*cmd.ExplainOptions, error) {
	flags := genericclioptions.NewConfigFlags(true).WithWrapConfigFn(func(c *rest.Config) *rest.Config {
		c.QPS = -1
		return c
	})
	flags.KubeConfig = &kubeconfig
	o := cmd.NewExplainOptions(flags, genericiooptions.NewTestIOStreamsDiscard())
	o.AllNamespaces = true
	// A test binary's scheduler reports no release in its build info (the
	// version comes from ldflags): name the version perf/ builds, as a user
	// of such a scheduler would with --scheduler-version. Another version's
	// control plane (ControlPlaneEnv) reports its own.
	if inProcess {
		o.SchedulerVersion = kubeversion.Get()
	}
	if err := o.Complete(nil, nil); err != nil {
		return nil, err
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return o, nil
}

// TestScoreRecordings scores saved recordings again (SCHEDQ_EXPLAINACC_REPLAY
// is a glob), for working on explain without a control plane.
func TestScoreRecordings(t *testing.T) {
	glob := os.Getenv("SCHEDQ_EXPLAINACC_REPLAY")
	if glob == "" {
		t.Skip("set SCHEDQ_EXPLAINACC_REPLAY to a glob of recordings")
	}
	paths, err := filepath.Glob(glob)
	if err != nil || len(paths) == 0 {
		t.Fatalf("%q: no recordings (%v)", glob, err)
	}
	// Pooled per gate setting, as TestExplainAccuracy pools its runs.
	pooled := map[bool]*Result{}
	for _, p := range paths {
		rec, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		res := Score(rec, explain.Infer)
		res.Verbose = true
		var text strings.Builder
		res.WriteText(&text)
		t.Logf("%s\n%s", p, text.String())
		if math.IsNaN(res.Total().Accuracy()) {
			t.Errorf("%s: nothing scored", p)
		}
		if pooled[rec.PopFromBackoffQ] == nil {
			pooled[rec.PopFromBackoffQ] = NewResult("all recordings", rec.PopFromBackoffQ)
		}
		pooled[rec.PopFromBackoffQ].Merge(res)
	}
	for _, pfb := range []bool{true, false} {
		if res := pooled[pfb]; res != nil {
			var text strings.Builder
			res.WriteText(&text)
			t.Logf("%s", text.String())
		}
	}
}
