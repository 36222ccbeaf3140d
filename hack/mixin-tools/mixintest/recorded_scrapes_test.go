package mixintest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/storage"
)

// recordedScrapes are the /metrics answers of a real kube-scheduler of each
// version the mixin is for (testdata/schedulers/README.md says how they
// were recorded).
var recordedScrapes = map[string]string{
	"v1.34": filepath.Join(repoRoot, "testdata", "schedulers", "v1.34.4", "metrics.prom"),
	"v1.35": filepath.Join(repoRoot, "testdata", "schedulers", "v1.35.4", "metrics.prom"),
	"v1.36": filepath.Join(repoRoot, "testdata", "schedulers", "v1.36.3", "metrics.prom"),
	"v1.37": filepath.Join(repoRoot, "testdata", "schedulers", "v1.37.2", "metrics.prom"),
}

// The labels Prometheus adds to a scraped series in these tests, and the
// values the dashboard's variables take (grafanaVariables).
const targetSelector = `job="kube-scheduler",instance="i",cluster="c"`

const (
	loadStep  = 30 * time.Second
	loadSteps = 360 // three hours: longer than any window or offset of the alerts
)

// loadScrape turns one recorded exposition into promqltest's load lines:
// every series with the target's labels and its recorded value held for
// loadSteps steps (a scheduler at rest: counters flat).
func loadScrape(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "load %s\n", loadStep)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		i := strings.LastIndexByte(text, ' ')
		if i < 0 {
			t.Fatalf("%s:%d: no value in %q", path, line, text)
		}
		series, value := text[:i], text[i+1:]
		if _, err := strconv.ParseFloat(value, 64); err != nil {
			t.Fatalf("%s:%d: value %q: %v", path, line, value, err)
		}
		if j := strings.IndexByte(series, '{'); j >= 0 {
			series = series[:j+1] + targetSelector + "," + series[j+1:]
		} else {
			series += "{" + targetSelector + "}"
		}
		fmt.Fprintf(&b, "  %s %sx%d\n", series, value, loadSteps)
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("%s: no series", path)
	}
	return b.String()
}

// evalEnd is the time every expression is evaluated at: the end of the load.
var evalEnd = time.Unix(0, 0).UTC().Add(loadSteps * loadStep)

// recordRules evaluates every recording rule over the last hour of the
// load, as Prometheus' rule manager would have, and returns load lines
// holding their results.
func recordRules(t *testing.T, ng *promql.Engine, st storage.Storage, rules []rule) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "load %s\n", loadStep)
	const steps = 120
	start := evalEnd.Add(-steps * loadStep)
	for _, r := range rules {
		q, err := ng.NewRangeQuery(context.Background(), st, nil, r.Expr, start, evalEnd, loadStep)
		if err != nil {
			t.Fatalf("recording rule %s: %v", r.Record, err)
		}
		res := q.Exec(context.Background())
		if res.Err != nil {
			t.Fatalf("recording rule %s: %v", r.Record, res.Err)
		}
		m, err := res.Matrix()
		if err != nil {
			t.Fatalf("recording rule %s: %v", r.Record, err)
		}
		for _, s := range m {
			lb := labels.NewBuilder(s.Metric)
			lb.Set(labels.MetricName, r.Record)
			for k, v := range r.Labels {
				lb.Set(k, v)
			}
			// The dashboard's queries select job's series by cluster and
			// instance only; the recorded series keep those.
			values := make([]string, 0, len(s.Floats))
			next := start
			for _, p := range s.Floats {
				for ; next.Before(time.UnixMilli(p.T)); next = next.Add(loadStep) {
					values = append(values, "_")
				}
				values = append(values, formatValue(p.F))
				next = next.Add(loadStep)
			}
			// promqltest loads from time 0: pad the hours before start.
			pad := strings.Repeat("_ ", int(start.Sub(time.Unix(0, 0))/loadStep))
			fmt.Fprintf(&b, "  %s %s%s\n", lb.Labels().String(), pad, strings.Join(values, " "))
		}
		q.Close()
	}
	return b.String()
}

func formatValue(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// instant evaluates expr at evalEnd and returns its series' label sets.
func instant(t *testing.T, ng *promql.Engine, st storage.Storage, where, expr string) []labels.Labels {
	t.Helper()
	q, err := ng.NewInstantQuery(context.Background(), st, nil, expr, evalEnd)
	if err != nil {
		t.Errorf("%s: %v", where, err)
		return nil
	}
	defer q.Close()
	res := q.Exec(context.Background())
	if res.Err != nil {
		t.Errorf("%s: %v", where, res.Err)
		return nil
	}
	v, err := res.Vector()
	if err != nil {
		t.Errorf("%s: %v", where, err)
		return nil
	}
	out := make([]labels.Labels, 0, len(v))
	for _, s := range v {
		out = append(out, s.Metric)
	}
	return out
}

// dashboardQueries returns every panel's queries of the rendered
// dashboards, with the panel's title and the series some version lacks
// that its noValue names.
type panelQuery struct {
	where   string
	expr    string
	noValue string
}

func dashboardQueries(t *testing.T) []panelQuery {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(rendered, "dashboards", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no dashboards in %s (%v)", rendered, err)
	}
	var out []panelQuery
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
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &d); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, p := range d.Panels {
			for _, tg := range p.Targets {
				out = append(out, panelQuery{
					where:   filepath.Base(path) + ": panel " + p.Title,
					expr:    grafanaVariables.Replace(tg.Expr),
					noValue: p.FieldConfig.Defaults.NoValue,
				})
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no panel queries anything")
	}
	return out
}

// TestExpressionsOnRecordedScrapes evaluates the mixin on what a real
// kube-scheduler of each version serves: the recording rules, then every
// panel's query on their results and the raw series, then every alert.
// A recording rule or a panel returns series on every version that serves
// what it reads; where a version lacks a series (sinceVersion) the panel
// returns nothing and its noValue names the series and the version it comes
// with, instead of a bare "No data". The alerts evaluate without error and
// stay quiet on a scheduler at rest.
func TestExpressionsOnRecordedScrapes(t *testing.T) {
	recRules, alerts, panels := readRules(t, rulesFile), readRules(t, alertFile), dashboardQueries(t)
	recorded := map[string]bool{}
	for _, r := range recRules {
		recorded[r.Record] = true
	}
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			raw := loadScrape(t, recordedScrapes[v])
			text, err := os.ReadFile(recordedScrapes[v])
			if err != nil {
				t.Fatal(err)
			}
			sc := parseScrape(t, v, string(text))
			ng := promqltest.NewTestEngine(t, false, 5*time.Minute, 1e8)
			st := promqltest.LoadedStorage(t, raw)
			all := promqltest.LoadedStorage(t, raw+"\n"+recordRules(t, ng, st, recRules))

			lacks := func(expr string) []string {
				missing, _ := selectorProblems(expr, sc, recorded)
				var out []string
				for _, m := range missing {
					if since, ok := sinceVersion[m]; ok && v < since {
						out = append(out, m)
					}
				}
				return out
			}
			for _, r := range recRules {
				if got := instant(t, ng, all, "recording rule "+r.Record, r.Record+`{cluster="c"}`); len(got) == 0 {
					t.Errorf("recording rule %s gives no series on kube-scheduler %s's scrape", r.Record, v)
				}
			}
			for _, p := range panels {
				got := instant(t, ng, all, p.where, p.expr)
				switch missing := lacks(p.expr); {
				case len(missing) > 0 && len(got) > 0:
					t.Errorf("%s: %d series on kube-scheduler %s, which lacks %v", p.where, len(got), v, missing)
				case len(missing) > 0:
					for _, m := range missing {
						if !strings.Contains(p.noValue, m) || !strings.Contains(p.noValue, sinceVersion[m]) {
							t.Errorf("%s: no data on kube-scheduler %s (no %s) and its noValue %q does not say why", p.where, v, m, p.noValue)
						}
					}
				case len(got) == 0:
					t.Errorf("%s: no series on kube-scheduler %s's scrape: %s", p.where, v, p.expr)
				}
			}
			for _, a := range alerts {
				if got := instant(t, ng, all, "alert "+a.Alert, a.Expr); len(got) > 0 {
					t.Errorf("alert %s: %v on kube-scheduler %s at rest, want none", a.Alert, got, v)
				}
			}
			// The queues every version serves are in the recorded queue sizes.
			var queues []string
			for _, l := range instant(t, ng, all, "queues", `queue:scheduler_pending_pods:sum{cluster="c"}`) {
				queues = append(queues, l.Get("queue"))
			}
			slices.Sort(queues)
			for _, q := range []string{"active", "backoff", "gated", "unschedulable"} {
				if !slices.Contains(queues, q) {
					t.Errorf("queue:scheduler_pending_pods:sum on kube-scheduler %s has queues %v, no %s", v, queues, q)
				}
			}
		})
	}
}
