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

	"github.com/kubectl-schedq/kubectl-schedq/perf/embedded"
	"github.com/kubectl-schedq/kubectl-schedq/perf/groundtruth"
	"github.com/kubectl-schedq/kubectl-schedq/perf/internal/testsupport"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/cmd"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
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

// TestExplainAccuracy runs the scenario on an embedded control plane with
// SchedulerPopFromBackoffQ on, then off, each in a process of its own (the
// gate is process-global). Each process samples, every quarter second,
// what `kubectl schedq explain -A` reads next to the scheduler's own queue,
// and reads the queue every 10 ms to see when each pod is popped. This
// process scores explain.Infer on both recordings and holds it to the
// targets: at least 95% of pending pods placed in the right queue, and the
// next-retry window within 1 s of the actual next pop at p90, per queue.
//
// SCHEDQ_EXPLAINACC_DURATION makes the runs longer (make explain-accuracy),
// SCHEDQ_EXPLAINACC_OUT keeps the report and the recordings.
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
	var report strings.Builder
	fmt.Fprintf(&report, "## explain accuracy against kube-scheduler v1.36.3 (embedded control plane)\n\n")
	for _, pfb := range []bool{true, false} {
		t.Run(fmt.Sprintf("popFromBackoffQ=%v", pfb), func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("recording-pfb-%v.json.gz", pfb))
			began := time.Now()
			c := exec.Command(os.Args[0], "-test.run=^TestExplainAccuracyChild$", "-test.v", "-test.count=1", "-test.timeout=2h")
			c.Env = append(os.Environ(), childEnv+"="+strconv.FormatBool(pfb), childOutEnv+"="+path)
			out, err := c.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestExplainAccuracyChild") {
				t.Fatalf("child process (%v):\n%s", err, out)
			}
			for _, line := range strings.Split(string(out), "\n") {
				if _, msg, ok := strings.Cut(line, "accuracy_test.go:"); ok {
					t.Logf("child: %s", msg)
				}
			}
			rec, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			res := Score(rec, explain.Infer)
			var text strings.Builder
			res.WriteText(&text)
			t.Logf("child ran %v\n%s", time.Since(began).Round(time.Second), text.String())
			report.WriteString(text.String())
			checkTargets(t, res)
		})
	}
	if os.Getenv(OutEnv) != "" {
		if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(report.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("report and recordings in %s", dir)
	}
}

func checkTargets(t *testing.T, res *Result) {
	t.Helper()
	if tot := res.Total(); tot.N == 0 || tot.Accuracy() < targetAccuracy {
		t.Errorf("placement accuracy %.1f%% of %d pod-samples, want at least %.0f%%", 100*tot.Accuracy(), tot.N, 100*targetAccuracy)
	}
	for _, q := range queueOrder {
		if res.Placement[q] == nil || res.Placement[q].N == 0 {
			switch {
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
	d := roundLen
	if s := os.Getenv(DurationEnv); s != "" {
		if d, err = time.ParseDuration(s); err != nil {
			t.Fatalf("%s=%q: %v", DurationEnv, s, err)
		}
	}
	ctx := context.Background()
	logs := &testsupport.TailBuffer{Max: 256 << 10}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("control plane logs (tail):\n%s", logs)
		}
	})
	hideAPIServerMetrics()
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

	rec := NewRecording("scenario", pfb, explain.DefaultConfig())
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
	s := &scenario{client: client, log: t.Logf}
	err = s.run(ctx, d)
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
	if err := o.Complete(nil, nil); err != nil {
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
	}
}
