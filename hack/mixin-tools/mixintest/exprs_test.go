package mixintest

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// scrapeFile is a recorded exposition of a real kube-scheduler v1.36.3
// (see testdata/metrics/README.md).
var scrapeFile = filepath.Join(repoRoot, "testdata", "metrics", "v1.36-parked.prom")

// Labels every series has by the time Prometheus stores it, or that the
// mixin's rules add; not the scheduler's own.
var targetLabels = []string{"job", "instance", "cluster", "le", "quantile"}

// scrape is metric name → label name → values seen.
type scrape map[string]map[string]map[string]bool

func readScrape(t *testing.T, path string) scrape {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := parser.NewParser(parser.Options{})
	out := scrape{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		series := line[:strings.LastIndexByte(line, ' ')]
		ls, err := p.ParseMetric(series)
		if err != nil {
			t.Fatalf("%s: %q: %v", path, line, err)
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

// eventValues are the event labels the mixin may name beyond those the
// recorded scrape happened to hold: the queue's own events, as v1.36.3's
// pkg/scheduler/framework/events.go and pkg/queue spell them.
var eventValues = []string{"PopFromBackoffQ", "BackoffComplete", "ScheduleAttemptFailure", "UnschedulableTimeout", "ForceActivate"}

// checkSelectors parses expr and checks each series it selects against the
// scrape: the metric exists, every label it matches on exists on it, and
// every value it asks for by equality is one the scheduler serves. recorded
// are the recording rules' outputs, valid names too.
func checkSelectors(t *testing.T, where, expr string, sc scrape, recorded map[string]bool) {
	t.Helper()
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		t.Errorf("%s: %q does not parse: %v", where, expr, err)
		return
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
			t.Errorf("%s: kube-scheduler v1.36.3 serves no series %s", where, vs.Name)
			return nil
		}
		for _, m := range vs.LabelMatchers {
			if m.Name == labels.MetricName || slices.Contains(targetLabels, m.Name) {
				continue
			}
			values, ok := family[m.Name]
			if !ok {
				t.Errorf("%s: %s has no label %s", where, vs.Name, m.Name)
				continue
			}
			if m.Type != labels.MatchEqual && m.Type != labels.MatchNotEqual {
				continue
			}
			if !values[m.Value] && !(m.Name == "event" && slices.Contains(eventValues, m.Value)) {
				t.Errorf("%s: %s{%s} is a value kube-scheduler v1.36.3 does not serve", where, vs.Name, m)
			}
		}
		return nil
	})
	if n == 0 {
		t.Errorf("%s: %q selects no series", where, expr)
	}
}

func TestRuleExpressionsNameServedSeries(t *testing.T) {
	sc := readScrape(t, scrapeFile)
	for _, r := range append(readRules(t, rulesFile), readRules(t, alertFile)...) {
		checkSelectors(t, r.Record+r.Alert, r.Expr, sc, nil)
	}
}

// Grafana's variables, replaced by values of the same type before parsing.
var grafanaVariables = strings.NewReplacer("$__rate_interval", "5m", "$cluster", "c", "$instance", "i")

var labelValuesQuery = regexp.MustCompile(`^label_values\((.*), *\w+\)$`)

func TestDashboardExpressionsNameServedOrRecordedSeries(t *testing.T) {
	sc := readScrape(t, scrapeFile)
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
			for _, tg := range p.Targets {
				targets++
				checkSelectors(t, filepath.Base(path)+": panel "+p.Title, grafanaVariables.Replace(tg.Expr), sc, recorded)
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
			checkSelectors(t, filepath.Base(path)+": variable "+v.Name, grafanaVariables.Replace(m[1]), sc, recorded)
		}
		if !slices.Equal(vars, []string{"datasource", "cluster", "instance"}) {
			t.Errorf("%s: variables %v, want datasource, cluster, instance", path, vars)
		}
	}
}
