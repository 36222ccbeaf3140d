package mixintest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// scenariosDir holds hand-written series (mixin/tests/scenarios/*.yaml):
// the shapes of cases no recorded run covers, at real time scales, evaluated
// against the alerts and rules exactly as rendered.
var scenariosDir = filepath.Join(mixinDir, "tests", "scenarios")

// scenarioFile is one file of scenarios sharing a scrape interval.
type scenarioFile struct {
	// Interval is the scrape (and rule evaluation) interval.
	Interval  string     `json:"interval"`
	Scenarios []scenario `json:"scenarios"`
}

// scenario is a cluster's series over Duration and what the alerts must do
// with them: fire at the time given; every other alert quiet at every
// QuietEvery (default 5m) of Duration.
type scenario struct {
	Name     string           `json:"name"`
	Why      string           `json:"why"`
	Duration string           `json:"duration"`
	Series   []scenarioSeries `json:"series"`
	// Fires: alert → a time at which it fires; it is also checked quiet at
	// every QuietEvery more than QuietEvery before that.
	Fires      map[string]string `json:"fires,omitempty"`
	QuietEvery string            `json:"quietEvery,omitempty"`
	// Exprs are promtool's promql_expr_test, for the recording rules.
	Exprs []exprTest `json:"exprs,omitempty"`
}

// scenarioSeries is one series without the scrape's job and instance
// labels. Values are in promtool's notation (`0+1x10 10x5`), repeated
// Repeat times (default once); or the sum of Stairs.
type scenarioSeries struct {
	Series string   `json:"series"`
	Values string   `json:"values,omitempty"`
	Repeat int      `json:"repeat,omitempty"`
	Stairs []stairs `json:"stairs,omitempty"`
}

// stairs is a counter fed by one cause (one batch of pods, one rate of
// arrivals): it grows by Add every Every samples, from From, after Offset
// samples in which it adds nothing (the series has no value while every
// one of its stairs is before its Offset), until the scenario ends.
type stairs struct {
	From   float64 `json:"from"`
	Add    float64 `json:"add"`
	Every  int     `json:"every"`
	Offset int     `json:"offset,omitempty"`
}

type exprTest struct {
	Expr       string      `json:"expr"`
	EvalTime   string      `json:"eval_time"`
	ExpSamples []expSample `json:"exp_samples"`
}

type expSample struct {
	Labels string  `json:"labels"`
	Value  float64 `json:"value"`
}

func (s *scenarioSeries) values(samples int) (string, error) {
	switch {
	case len(s.Stairs) > 0 && s.Values != "":
		return "", fmt.Errorf("%s: give values or stairs, not both", s.Series)
	case len(s.Stairs) > 0:
		var v []string
		for i := 0; i < samples; i++ {
			sum, started := 0.0, false
			for _, st := range s.Stairs {
				if st.Every < 1 {
					return "", fmt.Errorf("%s: stairs.every must be at least 1", s.Series)
				}
				if i >= st.Offset {
					sum += st.From + st.Add*float64((i-st.Offset)/st.Every)
					started = true
				}
			}
			if !started {
				v = append(v, "_")
				continue
			}
			v = append(v, strconv.FormatFloat(sum, 'f', -1, 64))
		}
		return strings.Join(v, " "), nil
	case s.Values == "":
		return "", fmt.Errorf("%s: no values", s.Series)
	}
	n := max(s.Repeat, 1)
	return strings.TrimSpace(strings.Repeat(s.Values+" ", n)), nil
}

// withTarget adds the labels of the scrape the tests assume to a series.
func withTarget(series string) string {
	target := `instance="` + instance + `",job="` + job + `"`
	name, rest, ok := strings.Cut(series, "{")
	if !ok {
		return name + "{" + target + "}"
	}
	rest = strings.TrimSuffix(rest, "}")
	if rest == "" {
		return name + "{" + target + "}"
	}
	return name + "{" + rest + "," + target + "}"
}

func loadScenarios(t *testing.T) map[string]scenarioFile {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(scenariosDir, "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scenarios in %s (%v)", scenariosDir, err)
	}
	out := map[string]scenarioFile{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f scenarioFile
		if err := yaml.UnmarshalStrict(data, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[p] = f
	}
	return out
}

func mustDuration(t *testing.T, where, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	return d
}

// TestAlertsOnScenarios runs each scenario through `promtool test rules`
// against the rendered rules files, unscaled.
func TestAlertsOnScenarios(t *testing.T) {
	alerts := readRules(t, alertFile)
	dir := t.TempDir()
	for path, f := range loadScenarios(t) {
		base := strings.TrimSuffix(filepath.Base(path), ".yaml")
		interval := mustDuration(t, path, f.Interval)
		for _, sc := range f.Scenarios {
			where := base + "/" + sc.Name
			if sc.Why == "" {
				t.Errorf("%s: say why (what cluster these series stand for)", where)
			}
			duration := mustDuration(t, where, sc.Duration)
			quiet := 5 * time.Minute
			if sc.QuietEvery != "" {
				quiet = mustDuration(t, where, sc.QuietEvery)
			}
			samples := int(duration/interval) + 1
			test := promtoolTest{Interval: f.Interval, Name: where, PromqlExprTest: sc.Exprs}
			for _, s := range sc.Series {
				v, err := s.values(samples)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				test.InputSeries = append(test.InputSeries, inputSeries{Series: withTarget(s.Series), Values: v})
			}
			names := map[string]bool{}
			for _, a := range alerts {
				names[a.Alert] = true
				end := duration + 1 // quiet checks at every multiple of quiet before end
				if at, ok := sc.Fires[a.Alert]; ok {
					fire := mustDuration(t, where, at)
					test.AlertRuleTest = append(test.AlertRuleTest, alertRuleTest{
						EvalTime:  at,
						Alertname: a.Alert,
						ExpAlerts: []expAlert{{
							ExpLabels:      map[string]string{"instance": instance, "severity": a.Labels["severity"]},
							ExpAnnotations: expand(a.Annotations),
						}},
					})
					end = fire - quiet
				}
				for at := time.Duration(0); at < end; at += quiet {
					test.AlertRuleTest = append(test.AlertRuleTest, alertRuleTest{EvalTime: at.String(), Alertname: a.Alert, ExpAlerts: []expAlert{}})
				}
			}
			for a := range sc.Fires {
				if !names[a] {
					t.Errorf("%s: no alert %s", where, a)
				}
			}
			data, err := yaml.Marshal(promtoolTestFile{
				RuleFiles:          []string{abs(t, alertFile), abs(t, rulesFile)},
				EvaluationInterval: f.Interval,
				Tests:              []promtoolTest{test},
			})
			if err != nil {
				t.Fatal(err)
			}
			testPath := filepath.Join(dir, base+"."+sc.Name+".test.yaml")
			if err := os.WriteFile(testPath, data, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Run(where, func(t *testing.T) {
				out, err := goTool(t, "promtool", "test", "rules", testPath)
				if err != nil {
					t.Errorf("promtool test rules (%s): %v", where, err)
				}
				t.Logf("%s", out)
			})
		}
	}
}

// TestEveryAlertHasPositiveAndNegativeCases: each alert fires on at least
// one recorded run or scenario and stays quiet on at least one other.
func TestEveryAlertHasPositiveAndNegativeCases(t *testing.T) {
	fires, quiet := map[string]int{}, map[string]int{}
	count := func(fired map[string]bool) {
		for _, a := range readRules(t, alertFile) {
			if fired[a.Alert] {
				fires[a.Alert]++
			} else {
				quiet[a.Alert]++
			}
		}
	}
	for _, c := range alertCases {
		fired := map[string]bool{}
		for a := range c.fires {
			fired[a] = true
		}
		count(fired)
	}
	for _, f := range loadScenarios(t) {
		for _, sc := range f.Scenarios {
			fired := map[string]bool{}
			for a := range sc.Fires {
				fired[a] = true
			}
			count(fired)
		}
	}
	var names []string
	for _, a := range readRules(t, alertFile) {
		names = append(names, a.Alert)
	}
	slices.Sort(names)
	for _, n := range names {
		if fires[n] == 0 {
			t.Errorf("nothing makes %s fire", n)
		}
		if quiet[n] == 0 {
			t.Errorf("no case where %s must stay quiet", n)
		}
	}
}
