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
	// DurationEnv sets how long each gate setting's scenario runs (Go
	// duration; default: one 20-second round).
	DurationEnv = "SCHEDQ_EXPLAINACC_DURATION"
	// OutEnv names a directory for the report (report.md) and the
	// recordings (*.json.gz), which Score can read again.
	OutEnv = "SCHEDQ_EXPLAINACC_OUT"
	// childEnv tells a re-run of the test binary which gate setting to run,
	// and childOutEnv where to save its recording.
	childEnv    = "SCHEDQ_EXPLAINACC_CHILD"
	childOutEnv = "SCHEDQ_EXPLAINACC_CHILD_OUT"
	// The workload a child runs instead of the scenario.
	childFileEnv     = "SCHEDQ_EXPLAINACC_CHILD_FILE"
	childTestCaseEnv = "SCHEDQ_EXPLAINACC_CHILD_TEST_CASE"
	childWorkloadEnv = "SCHEDQ_EXPLAINACC_CHILD_WORKLOAD"
)

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
	pollInterval   = 10 * time.Millisecond
	// answerWindow is how long after explain's calls the ground truth is
	// read again: a pod that moved meanwhile may be in either place. The
	// API server answers a list, and the scheduler a scrape, as of when it
	// receives the call; this bounds how late that may be on a busy
	// machine.
	answerWindow = 250 * time.Millisecond
)

// TestExplainAccuracy runs the scenario, and the integration-test size of
// every workload in workloads/, on an embedded control plane with
// SchedulerPopFromBackoffQ on, then off, each in a process of its own (the
// gate is process-global). Each process samples, every quarter second,
// what `kubectl schedq explain -A` reads next to the scheduler's own queue,
// and reads the queue every 10 ms to see when each pod is popped. This
// process scores explain.Infer on the recordings and holds it, per gate
// setting over all of them, to the targets: at least 95% of pending pods
// placed in the right queue, and the next-retry window within 1 s of the
// actual next pop at p90, per queue.
//
// SCHEDQ_EXPLAINACC_DURATION makes the scenario longer (make
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
	var report strings.Builder
	fmt.Fprintf(&report, "## explain accuracy against kube-scheduler %s (embedded control plane)\n\n", kubeversion.Get())
	for _, pfb := range []bool{true, false} {
		t.Run(fmt.Sprintf("popFromBackoffQ=%v", pfb), func(t *testing.T) {
			all := NewResult("all runs", pfb)
			var rows strings.Builder
			fmt.Fprintf(&rows, "| run, SchedulerPopFromBackoffQ=%v | samples | pod-samples | accuracy |\n|---|---:|---:|---:|\n", pfb)
			for i, r := range runs {
				res := runChild(t, r, pfb, filepath.Join(dir, fmt.Sprintf("recording-pfb-%v-%02d.json.gz", pfb, i)))
				if res == nil {
					continue
				}
				var text strings.Builder
				res.WriteText(&text)
				t.Logf("%s\n%s", r.name, text.String())
				report.WriteString(text.String())
				if r.file == "" {
					checkScenarioCoverage(t, res)
				}
				tot := res.Total()
				fmt.Fprintf(&rows, "| %s | %d | %d | %s |\n", r.name, res.Samples, tot.N, pct(tot.Accuracy()))
				all.Merge(res)
			}
			tot := all.Total()
			fmt.Fprintf(&rows, "| **all** | %d | %d | **%s** |\n\n", all.Samples, tot.N, pct(tot.Accuracy()))
			var text strings.Builder
			all.WriteText(&text)
			t.Logf("all runs\n%s%s", rows.String(), text.String())
			report.WriteString(rows.String())
			report.WriteString(text.String())
			checkTargets(t, all)
		})
	}
	if os.Getenv(OutEnv) != "" {
		if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(report.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("report and recordings in %s", dir)
	}
}

// An accuracyRun is what one child process records: the scenario (file
// empty), or one workload of workloads/.
type accuracyRun struct {
	name                     string
	file, testCase, workload string
}

// accuracyRuns are the scenario and the integration-test workloads of
// workloads/.
func accuracyRuns(t *testing.T) []accuracyRun {
	t.Helper()
	runs := []accuracyRun{{name: "scenario"}}
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

// runChild records r in a process of its own and scores the recording.
func runChild(t *testing.T, r accuracyRun, pfb bool, path string) *Result {
	t.Helper()
	began := time.Now()
	c := exec.Command(os.Args[0], "-test.run=^TestExplainAccuracyChild$", "-test.v", "-test.count=1", "-test.timeout=2h")
	c.Env = append(os.Environ(), childEnv+"="+strconv.FormatBool(pfb), childOutEnv+"="+path,
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
	return Score(rec, explain.Infer)
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
	if file := os.Getenv(childFileEnv); file != "" {
		recordWorkload(t, pfb, file, os.Getenv(childTestCaseEnv), os.Getenv(childWorkloadEnv), logs)
		return
	}
	d := roundLen
	if s := os.Getenv(DurationEnv); s != "" {
		if d, err = time.ParseDuration(s); err != nil {
			t.Fatalf("%s=%q: %v", DurationEnv, s, err)
		}
	}
	ctx := context.Background()
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	cp, err := embedded.Start(sctx, embedded.Options{
		FeatureGates: map[string]bool{"SchedulerPopFromBackoffQ": pfb},
		Nodes:        4,
		LogOutput:    logs,
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
	client := cp.Client()
	if err := denyBinding(ctx, client, denyPrefix); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, func() string {
		if n := len(cp.Queue().Pods); n != 0 {
			return fmt.Sprintf("%d probe pods still queued", n)
		}
		return ""
	})
	s := &scenario{client: client, log: t.Logf}
	record(t, cp, NewRecording("scenario", pfb, explain.DefaultConfig()), func(ctx context.Context) error { return s.run(ctx, d) })
}

// recordWorkload runs one workload on a fresh embedded control plane, as
// schedq-perf run does, and records explain next to the queue meanwhile.
func recordWorkload(t *testing.T, pfb bool, file, testCase, name string, logs *testsupport.TailBuffer) {
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
	inst, err := embedded.Provider{}.Start(sctx, provider.Spec{Workload: s, FeatureGates: gates, EmulationVersion: emulation, RunLabels: labels, Log: logs})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := inst.Stop(context.Background()); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	record(t, inst.Backend.(*embedded.ControlPlane), NewRecording(s.Name(), pfb, explain.DefaultConfig()), func(ctx context.Context) error {
		_, err := runner.Run(ctx, s, inst.Cluster, runner.Options{Labels: labels, QueueInterval: -1, Ledger: inst.Ledger})
		return err
	})
}

// record samples explain's input and the queue while drive runs, and saves
// the recording where the parent said.
func record(t *testing.T, cp *embedded.ControlPlane, rec *Recording, drive func(context.Context) error) {
	t.Helper()
	ctx := context.Background()
	rec.PollInterval = pollInterval
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	pt := NewPopTracker()
	var end time.Time
	var gaps []time.Duration
	wg.Add(2)
	go func() { // the ground truth, every 10 ms
		defer wg.Done()
		tick := time.NewTicker(pollInterval)
		defer tick.Stop()
		for {
			q := cp.Queue()
			now := time.Now()
			pt.Observe(now, q)
			if !end.IsZero() {
				gaps = append(gaps, now.Sub(end))
			}
			end = now
			select {
			case <-runCtx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	var sampleErr error
	o, err := explainOptions(cp.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	go func() { // explain's input, every quarter second
		defer wg.Done()
		tick := time.NewTicker(sampleInterval)
		defer tick.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-tick.C:
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
	err = drive(ctx)
	stop()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if sampleErr != nil {
		t.Fatal(sampleErr)
	}
	rec.End = end
	rec.Pops = pt.Pops()
	rec.PollGaps = [3]time.Duration{percentile(gaps, 0.5), percentile(gaps, 0.99), percentile(gaps, 1)}
	var reads []time.Duration
	for _, s := range rec.Samples {
		reads = append(reads, s.Done.Sub(s.Start))
	}
	t.Logf("%d samples, %d pod versions, %d event versions over %v; reading took %v at the median, %v at most; the queue was read every %v at the median, %v at p99, %v at most",
		len(rec.Samples), len(rec.Pods), len(rec.Events), rec.End.Sub(rec.Start).Round(time.Millisecond),
		percentile(reads, 0.5).Round(time.Millisecond), percentile(reads, 1).Round(time.Millisecond),
		rec.PollGaps[0].Round(time.Millisecond), rec.PollGaps[1].Round(time.Millisecond), rec.PollGaps[2].Round(time.Millisecond))
	if err := rec.Save(os.Getenv(childOutEnv)); err != nil {
		t.Fatal(err)
	}
}

// explainOptions returns `kubectl schedq explain -A`, completed: its Gather
// reads what the command reads. One command gathers every sample, without
// the client's rate limit, which a single run of the command never reaches.
func explainOptions(kubeconfig string) (*cmd.ExplainOptions, error) {
	flags := genericclioptions.NewConfigFlags(true).WithWrapConfigFn(func(c *rest.Config) *rest.Config {
		c.QPS = -1
		return c
	})
	flags.KubeConfig = &kubeconfig
	o := cmd.NewExplainOptions(flags, genericiooptions.NewTestIOStreamsDiscard())
	o.AllNamespaces = true
	// A test binary's scheduler reports no release in its build info (the
	// version comes from ldflags): name the version perf/ builds, as a user
	// of such a scheduler would with --scheduler-version.
	o.SchedulerVersion = kubeversion.Get()
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
