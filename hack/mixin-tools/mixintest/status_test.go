package mixintest

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/util/teststorage"

	"github.com/kubectl-schedq/kubectl-schedq/hack/mixin-tools/recording"
)

// TestStatusAgreesWithAlerts: `kubectl schedq status` and the alert judge the
// same condition the same way. On every recorded run and at every second,
// status's BackoffQWaitsWhileActiveQEmpty signal (from that sample and the
// one before, as status's two scrapes; hack/mixin-status computes it with
// the plugin's pkg/status) is raised exactly when the alert's condition (its
// expression, without `for`) holds, gate off. With the gate on the alert
// stays quiet while status may still say so, as Info or as a Warning about
// error backoffs.
func TestStatusAgreesWithAlerts(t *testing.T) {
	const alertName = "KubeSchedulerBackoffQWaitsWhileActiveQEmpty"
	var expr string
	for _, r := range readRules(t, alertFile) {
		if r.Alert == alertName {
			expr = r.Expr
		}
	}
	if expr == "" {
		t.Fatal("no alert " + alertName)
	}
	paths, err := filepath.Glob(filepath.Join(recordingsDir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no recordings in %s (%v)", recordingsDir, err)
	}
	signals := statusSignals(t, "BackoffQWaitsWhileActiveQEmpty", paths)

	engine := promqltest.NewTestEngine(t, false, 5*time.Minute, 1e7)
	both := 0
	for _, path := range paths {
		rec, err := recording.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		raised := signals[abs(t, path)]
		if len(raised) != len(rec.Series.Samples) {
			t.Fatalf("%s: %d samples, status judged %d", rec.Name, len(rec.Series.Samples), len(raised))
		}
		var load strings.Builder
		load.WriteString("load " + recording.Interval.String() + "\n")
		for _, s := range rec.InputSeries(job, instance) {
			load.WriteString("  " + s.Desc + " " + s.Values + "\n")
		}
		storage := promqltest.LoadedStorage(t, load.String())
		steps := rec.Steps()
		for step, i := range steps {
			// Status needs the sample before; the series must have both
			// on their own steps, or the alert sees an older value.
			if i < 1 || step == 0 || steps[step-1] != i-1 {
				continue
			}
			alert := holds(t, engine, storage, expr, rec.StepTime(step))
			if want := raised[i] && !rec.PopFromBackoffQ; alert != want {
				t.Errorf("%s at %ds: alert condition %v, status signal %v", rec.Name, step, alert, raised[i])
			}
			if alert && raised[i] {
				both++
			}
		}
	}
	if both == 0 {
		t.Error("no recorded second where both status and the alert saw the condition: the test compares nothing")
	}
}

// statusSignals runs hack/mixin-status: absolute recording path → whether
// status raises signal at each sample.
func statusSignals(t *testing.T, signal string, paths []string) map[string][]bool {
	t.Helper()
	args := []string{"run", ".", "-signal", signal}
	for _, p := range paths {
		args = append(args, abs(t, p))
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = filepath.Join(repoRoot, "hack", "mixin-status")
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("hack/mixin-status: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("hack/mixin-status: %v", err)
	}
	var signals map[string][]bool
	if err := json.Unmarshal(out, &signals); err != nil {
		t.Fatalf("hack/mixin-status: %v\n%s", err, out)
	}
	return signals
}

// holds says whether expr returns anything at ts.
func holds(t *testing.T, engine *promql.Engine, storage *teststorage.TestStorage, expr string, ts time.Time) bool {
	t.Helper()
	q, err := engine.NewInstantQuery(context.Background(), storage, nil, expr, ts)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	res := q.Exec(context.Background())
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	v, err := res.Vector()
	if err != nil {
		t.Fatal(err)
	}
	return len(v) > 0
}
