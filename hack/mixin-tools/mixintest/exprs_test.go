package mixintest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// Labels every series has by the time Prometheus stores it, or that the
// mixin's rules add; not the scheduler's own.
var targetLabels = []string{"job", "instance", "cluster", "le", "quantile"}

// scrape is metric name → label name → values seen.
type scrape map[string]map[string]map[string]bool

// versions are the kube-scheduler minor versions the mixin is for, oldest
// first.
var versions = []string{"v1.34", "v1.35", "v1.36", "v1.37"}

// versionScrapes returns, for each version, the series its scheduler
// serves: the recorded scrape of a real kube-scheduler of that version
// (recordedScrapes).
func versionScrapes(t *testing.T) map[string]scrape {
	t.Helper()
	out := map[string]scrape{}
	for _, v := range versions {
		data, err := os.ReadFile(recordedScrapes[v])
		if err != nil {
			t.Fatal(err)
		}
		out[v] = parseScrape(t, v, string(data))
	}
	return out
}

func parseScrape(t *testing.T, where, text string) scrape {
	t.Helper()
	p := parser.NewParser(parser.Options{})
	out := scrape{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		series := line[:strings.LastIndexByte(line, ' ')]
		ls, err := p.ParseMetric(series)
		if err != nil {
			t.Fatalf("%s: %q: %v", where, line, err)
		}
		name := ls.Get(labels.MetricName)
		if out[name] == nil {
			out[name] = map[string]map[string]bool{}
		}
		ls.Range(func(l labels.Label) {
			if out[name][l.Name] == nil {
				out[name][l.Name] = map[string]bool{}
			}
			out[name][l.Name][l.Value] = true
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// servedValues are label values the mixin may name beyond those a scrape
// happened to hold (a counter's series appears with its first increment):
// the queue's own events, as pkg/queue spells them (the same in every
// version), and the attempt results of upstream's metrics.go.
var servedValues = map[string][]string{
	"event":  {"PopFromBackoffQ", "BackoffComplete", "ScheduleAttemptFailure", "UnschedulableTimeout", "ForceActivate"},
	"result": {"scheduled", "unschedulable", "error"},
}

// served says whether a version's scheduler serves metric with label=value.
func served(sc scrape, metric, label, value string) bool {
	return sc[metric][label][value] || slices.Contains(servedValues[label], value)
}

// selectorProblems parses expr and checks each series it selects against
// one version's scrape: the metric exists, every label it matches on exists
// on it, every value it asks for by equality is one the scheduler serves,
// and a regexp of alternatives (`a|b`) matches at least one served value.
// recorded are the recording rules' outputs, valid names too. It returns
// the metrics the version does not serve apart from the other problems.
func selectorProblems(expr string, sc scrape, recorded map[string]bool) (missing []string, problems []string) {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return nil, []string{fmt.Sprintf("%q does not parse: %v", expr, err)}
	}
	n := 0
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		n++
		if recorded[vs.Name] {
			return nil
		}
		family := sc[vs.Name]
		if family == nil {
			missing = append(missing, vs.Name)
			return nil
		}
		for _, m := range vs.LabelMatchers {
			if m.Name == labels.MetricName || slices.Contains(targetLabels, m.Name) {
				continue
			}
			if _, ok := family[m.Name]; !ok {
				problems = append(problems, fmt.Sprintf("%s has no label %s", vs.Name, m.Name))
				continue
			}
			switch m.Type {
			case labels.MatchEqual, labels.MatchNotEqual:
				if !served(sc, vs.Name, m.Name, m.Value) {
					problems = append(problems, fmt.Sprintf("%s{%s} is a value the scheduler does not serve", vs.Name, m))
				}
			case labels.MatchRegexp:
				if !literalAlternatives.MatchString(m.Value) {
					continue
				}
				any := false
				for _, alt := range strings.Split(m.Value, "|") {
					any = any || served(sc, vs.Name, m.Name, alt)
				}
				if !any {
					problems = append(problems, fmt.Sprintf("%s{%s} matches no value the scheduler serves", vs.Name, m))
				}
			}
		}
		return nil
	})
	if n == 0 {
		problems = append(problems, fmt.Sprintf("%q selects no series", expr))
	}
	return missing, problems
}

var literalAlternatives = regexp.MustCompile(`^[A-Za-z0-9_]+(\|[A-Za-z0-9_]+)*$`)

// sinceVersion are the series some versions lack, with the version that
// introduced them (versions.md §2).
var sinceVersion = map[string]string{
	"scheduler_pod_scheduled_after_flush_total": "v1.36",
	"scheduler_queued_entities":                 "v1.37",
	"scheduler_queue_incoming_entities_total":   "v1.37",
}

// checkVersions checks expr on every version: selectors are right where the
// series exist, and a series is missing only on versions before the one in
// sinceVersion. It returns the series some version lacks.
func checkVersions(t *testing.T, where, expr string, scrapes map[string]scrape, recorded map[string]bool) map[string]bool {
	t.Helper()
	lacking := map[string]bool{}
	for _, v := range versions {
		missing, problems := selectorProblems(expr, scrapes[v], recorded)
		for _, p := range problems {
			t.Errorf("%s on kube-scheduler %s: %s", where, v, p)
		}
		for _, m := range missing {
			since, ok := sinceVersion[m]
			switch {
			case !ok:
				t.Errorf("%s: kube-scheduler %s serves no series %s", where, v, m)
			case v >= since:
				t.Errorf("%s: %s should exist on %s (from %s)", where, m, v, since)
			default:
				lacking[m] = true
			}
		}
	}
	return lacking
}

// TestRuleExpressionsNameServedSeries: the recording rules hold on every
// version; an alert may read a series some versions lack only if its
// description names the version the series comes with.
func TestRuleExpressionsNameServedSeries(t *testing.T) {
	scrapes := versionScrapes(t)
	for _, r := range readRules(t, rulesFile) {
		for m := range checkVersions(t, r.Record, r.Expr, scrapes, nil) {
			t.Errorf("recording rule %s reads %s, which kube-scheduler before %s lacks: the dashboard could not say so", r.Record, m, sinceVersion[m])
		}
	}
	for _, r := range readRules(t, alertFile) {
		for m := range checkVersions(t, r.Alert, r.Expr, scrapes, nil) {
			if !strings.Contains(r.Annotations["description"], sinceVersion[m]) {
				t.Errorf("alert %s reads %s (from kube-scheduler %s) and its description does not say so", r.Alert, m, sinceVersion[m])
			}
		}
	}
}

// Grafana's variables, replaced by values of the same type before parsing.
var grafanaVariables = strings.NewReplacer("$__rate_interval", "5m", "$cluster", "c", "$instance", "i")

var labelValuesQuery = regexp.MustCompile(`^label_values\((.*), *\w+\)$`)

// TestDashboardExpressionsNameServedOrRecordedSeries: every panel and
// variable query selects what each version serves or the rules record; a
// panel reading a series some versions lack says so in its noValue text,
// naming the version the series comes with, instead of a bare "No data".
func TestDashboardExpressionsNameServedOrRecordedSeries(t *testing.T) {
	scrapes := versionScrapes(t)
	recorded := map[string]bool{}
	for _, r := range readRules(t, rulesFile) {
		recorded[r.Record] = true
	}
	paths, err := filepath.Glob(filepath.Join(rendered, "dashboards", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no dashboards in %s (%v)", rendered, err)
	}
	for _, path := range paths {
		var d struct {
			Panels []struct {
				Title   string `json:"title"`
				Targets []struct {
					Expr string `json:"expr"`
				} `json:"targets"`
				FieldConfig struct {
					Defaults struct {
						NoValue string `json:"noValue"`
					} `json:"defaults"`
				} `json:"fieldConfig"`
			} `json:"panels"`
			Templating struct {
				List []struct {
					Name  string `json:"name"`
					Type  string `json:"type"`
					Query any    `json:"query"`
				} `json:"list"`
			} `json:"templating"`
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &d); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		targets := 0
		for _, p := range d.Panels {
			lacking := map[string]bool{}
			for _, tg := range p.Targets {
				targets++
				for m := range checkVersions(t, filepath.Base(path)+": panel "+p.Title, grafanaVariables.Replace(tg.Expr), scrapes, recorded) {
					lacking[m] = true
				}
			}
			for m := range lacking {
				if nv := p.FieldConfig.Defaults.NoValue; !strings.Contains(nv, m) || !strings.Contains(nv, sinceVersion[m]) {
					t.Errorf("%s: panel %s reads %s, which kube-scheduler before %s lacks; its noValue %q does not say so", filepath.Base(path), p.Title, m, sinceVersion[m], nv)
				}
			}
		}
		if targets == 0 {
			t.Errorf("%s: no panel queries anything", path)
		}
		var vars []string
		for _, v := range d.Templating.List {
			vars = append(vars, v.Name)
			q, ok := v.Query.(map[string]any)
			if v.Type != "query" || !ok {
				continue
			}
			m := labelValuesQuery.FindStringSubmatch(q["query"].(string))
			if m == nil {
				t.Errorf("%s: variable %s: %q is not label_values(selector, label)", path, v.Name, q["query"])
				continue
			}
			if lacking := checkVersions(t, filepath.Base(path)+": variable "+v.Name, grafanaVariables.Replace(m[1]), scrapes, recorded); len(lacking) > 0 {
				t.Errorf("%s: variable %s reads series some versions lack: %v", path, v.Name, lacking)
			}
		}
		if !slices.Equal(vars, []string{"datasource", "cluster", "instance"}) {
			t.Errorf("%s: variables %v, want datasource, cluster, instance", path, vars)
		}
	}
}
