package mixintest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-schedq/kubectl-schedq/hack/mixin-tools/recording"
)

// recordingsDir holds the runs the alert tests replay (mixin/testdata/README.md
// says how each was recorded; `make mixin-recordings` records them again).
var recordingsDir = filepath.Join(mixinDir, "testdata", "recordings")

// Scrape labels of the replayed series.
const (
	job      = "kube-scheduler"
	instance = "scheduler"
)

// alertCase is what one recording must do to the alerts: fire, at the time
// given (seconds into the run), the alerts it was built to cause; leave every
// other alert quiet for the whole run.
type alertCase struct {
	recording string
	fires     map[string]int
}

var alertCases = []alertCase{
	{"backoff-drain.gate-off", map[string]int{"KubeSchedulerBackoffQWaitsWhileActiveQEmpty": 22}},
	{"backoff-drain.gate-on", nil},
	// With the gate off, the error backoff and the blocked pods behind the
	// gated ones wait in backoffQ with activeQ empty too.
	{"error-backoff.gate-off", map[string]int{"KubeSchedulerErrorBackoffStorm": 12, "KubeSchedulerBackoffQWaitsWhileActiveQEmpty": 10}},
	{"error-backoff.gate-on", map[string]int{"KubeSchedulerErrorBackoffStorm": 12}},
	// A burst of gated pods that is released: gated pods that arrive and
	// are let go are not piling up.
	{"gated-burst.gate-off", map[string]int{"KubeSchedulerBackoffQWaitsWhileActiveQEmpty": 20}},
	{"gated-burst.gate-on", nil},
	{"cluster-full.gate-on", map[string]int{"KubeSchedulerQueueGrowingWhileSchedulingSlows": 23}},
	// Two batches of pods no event helps, flushed every 5 minutes: the
	// flush's moves are their normal fate. The recording holds no
	// scheduler_pod_scheduled_after_flush_total (the runner does not record
	// it); mixin/tests/scenarios/flush.yaml has the series with it.
	{"parked-until-flush.gate-on", nil},
	{"tiny.gate-off", nil},
	{"tiny.gate-on", nil},
}

// quietStep is how often a quiet alert is checked: every few seconds of the
// run, so that it would be seen firing for even the shortest `for`.
const quietStep = 2

func TestAlertsOnRecordedRuns(t *testing.T) {
	dir := render(t, filepath.Join(mixinDir, "tests", "recorded-runs.jsonnet"))
	rulesPath := filepath.Join(dir, "prometheus_alerts.yaml")
	alerts := readRules(t, rulesPath)
	var names []string
	for _, a := range alerts {
		names = append(names, a.Alert)
	}

	var testFiles []string
	for _, c := range alertCases {
		rec, err := recording.Load(filepath.Join(recordingsDir, c.recording+".json"))
		if err != nil {
			t.Fatal(err)
		}
		steps := len(rec.Steps())
		test := promtoolTest{Interval: recording.Interval.String()}
		for _, s := range rec.InputSeries(job, instance) {
			test.InputSeries = append(test.InputSeries, inputSeries{Series: s.Desc, Values: s.Values})
		}
		for alert := range c.fires {
			if !slices.Contains(names, alert) {
				t.Fatalf("%s: no alert %s", c.recording, alert)
			}
		}
		for _, a := range alerts {
			if at, ok := c.fires[a.Alert]; ok {
				test.AlertRuleTest = append(test.AlertRuleTest, alertRuleTest{
					EvalTime:  seconds(at),
					Alertname: a.Alert,
					ExpAlerts: []expAlert{{
						ExpLabels:      map[string]string{"instance": instance, "severity": a.Labels["severity"]},
						ExpAnnotations: expand(a.Annotations),
					}},
				})
				continue
			}
			for at := 0; at < steps; at += quietStep {
				test.AlertRuleTest = append(test.AlertRuleTest, alertRuleTest{EvalTime: seconds(at), Alertname: a.Alert, ExpAlerts: []expAlert{}})
			}
		}
		data, err := yaml.Marshal(promtoolTestFile{
			RuleFiles:          []string{rulesPath},
			EvaluationInterval: recording.Interval.String(),
			Tests:              []promtoolTest{test},
		})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, c.recording+".test.yaml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		testFiles = append(testFiles, path)
	}
	for _, path := range testFiles {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".test.yaml"), func(t *testing.T) {
			out, err := goTool(t, "promtool", "test", "rules", path)
			if err != nil {
				t.Errorf("promtool test rules %s: %v", filepath.Base(path), err)
			}
			t.Logf("%s", out)
		})
	}
}

func seconds(n int) string { return (time.Duration(n) * time.Second).String() }

// expand fills the alert's annotations in as Prometheus would for the
// replayed scheduler; they template nothing but the instance.
func expand(annotations map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range annotations {
		out[k] = strings.ReplaceAll(v, "{{ $labels.instance }}", instance)
		if strings.Contains(out[k], "{{") {
			panic(fmt.Sprintf("annotation %s templates more than the instance: %q", k, v))
		}
	}
	return out
}

// promtool's unit test file (`promtool test rules`).
type promtoolTestFile struct {
	RuleFiles          []string       `json:"rule_files"`
	EvaluationInterval string         `json:"evaluation_interval"`
	Tests              []promtoolTest `json:"tests"`
}

type promtoolTest struct {
	Name           string          `json:"name,omitempty"`
	Interval       string          `json:"interval"`
	InputSeries    []inputSeries   `json:"input_series"`
	AlertRuleTest  []alertRuleTest `json:"alert_rule_test,omitempty"`
	PromqlExprTest []exprTest      `json:"promql_expr_test,omitempty"`
}

type inputSeries struct {
	Series string `json:"series"`
	Values string `json:"values"`
}

type alertRuleTest struct {
	EvalTime  string     `json:"eval_time"`
	Alertname string     `json:"alertname"`
	ExpAlerts []expAlert `json:"exp_alerts"`
}

type expAlert struct {
	ExpLabels      map[string]string `json:"exp_labels"`
	ExpAnnotations map[string]string `json:"exp_annotations"`
}
