package metricscrape

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// fakePrometheus answers instant queries that are plain selectors
// (`name{a="b",c=~"d"}`) over a fixed set of series, and records them.
type fakePrometheus struct {
	series  model.Vector
	mu      sync.Mutex
	queries []string
	times   []string
}

func (p *fakePrometheus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/query" {
		http.NotFound(w, r)
		return
	}
	_ = r.ParseForm()
	q := r.Form.Get("query")
	p.mu.Lock()
	p.queries = append(p.queries, q)
	p.times = append(p.times, r.Form.Get("time"))
	p.mu.Unlock()
	match, err := parseSelector(q)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "error", "errorType": "bad_data", "error": err.Error()})
		return
	}
	out := model.Vector{}
	for _, s := range p.series {
		if match(s.Metric) {
			out = append(out, s)
		}
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector", "result": out}})
}

var matcherRE = regexp.MustCompile(`^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!=|=)\s*("(?:[^"\\]|\\.)*")\s*(?:,|$)`)

func parseSelector(q string) (func(model.Metric) bool, error) {
	open := strings.IndexByte(q, '{')
	if open < 0 || !strings.HasSuffix(q, "}") {
		return nil, errBadQuery(q)
	}
	type m struct {
		name, op string
		value    string
		re       *regexp.Regexp
	}
	var ms []m
	if name := q[:open]; name != "" {
		ms = append(ms, m{name: model.MetricNameLabel, op: "=", value: name})
	}
	rest := q[open+1 : len(q)-1]
	for strings.TrimSpace(rest) != "" {
		sub := matcherRE.FindStringSubmatch(rest)
		if sub == nil {
			return nil, errBadQuery(q)
		}
		v, err := strconv.Unquote(sub[3])
		if err != nil {
			return nil, err
		}
		mm := m{name: sub[1], op: sub[2], value: v}
		if mm.op == "=~" {
			if mm.re, err = regexp.Compile("^(?:" + v + ")$"); err != nil {
				return nil, err
			}
		}
		ms = append(ms, mm)
		rest = rest[len(sub[0]):]
	}
	return func(metric model.Metric) bool {
		for _, mm := range ms {
			got := string(metric[model.LabelName(mm.name)])
			switch mm.op {
			case "=":
				if got != mm.value {
					return false
				}
			case "!=":
				if got == mm.value {
					return false
				}
			case "=~":
				if !mm.re.MatchString(got) {
					return false
				}
			}
		}
		return true
	}, nil
}

type errBadQuery string

func (e errBadQuery) Error() string { return "cannot parse " + string(e) }

// seriesOf turns a text exposition into the series a Prometheus server
// would store for a target with the given labels.
func seriesOf(t *testing.T, exposition string, target model.LabelSet) model.Vector {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	var all []*dto.MetricFamily
	for _, f := range fams {
		all = append(all, f)
	}
	vec, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{Timestamp: model.Now()}, all...)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range vec {
		for k, v := range target {
			s.Metric[k] = v
		}
	}
	return vec
}

func TestPrometheusSource_ScrapeAt(t *testing.T) {
	a := model.LabelSet{"job": "kube-scheduler", "instance": "10.0.0.1:10259"}
	b := model.LabelSet{"job": "kube-scheduler", "instance": "10.0.0.2:10259"}
	kubelet := model.LabelSet{"job": "kubelet", "instance": "node-1"}
	standby := strings.ReplaceAll(smallExposition, `scheduler_pending_pods{queue="unschedulable"} 7`, `scheduler_pending_pods{queue="unschedulable"} 0`) +
		"# TYPE leader_election_master_status gauge\nleader_election_master_status{name=\"kube-scheduler\"} 0\n"
	leader := smallExposition + "# TYPE leader_election_master_status gauge\nleader_election_master_status{name=\"kube-scheduler\"} 1\n"
	prom := &fakePrometheus{}
	prom.series = append(prom.series, seriesOf(t, standby, a)...)
	prom.series = append(prom.series, seriesOf(t, leader, b)...)
	prom.series = append(prom.series, seriesOf(t, "# TYPE kubernetes_feature_enabled gauge\nkubernetes_feature_enabled{name=\"SchedulerPopFromBackoffQ\",stage=\"BETA\"} 0\n", kubelet)...)
	srv := httptest.NewServer(prom)
	defer srv.Close()

	s, err := NewPrometheusSource(PrometheusAccess{URL: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1_800_000_000, 0)
	snap, err := s.ScrapeAt(context.Background(), at)
	if err != nil {
		t.Fatalf("ScrapeAt: %v (queries %q)", err, prom.queries)
	}
	if snap.Pending[QueueUnschedulable] != 7 {
		t.Errorf("Pending[unschedulable] = %v, want the leader's 7", snap.Pending[QueueUnschedulable])
	}
	if g := snap.FeatureGates[GateSchedulerPopFromBackoffQ]; !g.Enabled {
		t.Errorf("PopFromBackoffQ gate = %+v: the kubelet's series leaked in", g)
	}
	if snap.Leader == nil || !*snap.Leader {
		t.Errorf("Leader = %v, want true", snap.Leader)
	}
	if snap.SLI["1"].Count != 8 || snap.PodSchedulingAttempts.Count != 12 {
		t.Errorf("histograms not rebuilt: SLI %+v, attempts %+v", snap.SLI, snap.PodSchedulingAttempts)
	}
	if !snap.Time.Equal(at) || snap.Origin.Kind != OriginPrometheus || snap.Origin.Candidates != 2 || !strings.Contains(snap.Origin.Target, "10.0.0.2:10259") {
		t.Errorf("Time %v, Origin %+v", snap.Time, snap.Origin)
	}
	for _, ts := range prom.times {
		if ts != "1800000000" {
			t.Errorf("query time = %q, want 1800000000", ts)
		}
	}

	// The same file through the text path gives the same snapshot.
	text, err := ParseText("x", []byte(leader))
	if err != nil {
		t.Fatal(err)
	}
	text.Time, text.Origin = snap.Time, snap.Origin
	if got, want := len(snap.Incoming), len(text.Incoming); got != want {
		t.Errorf("Prometheus path has %d incoming series, text path %d", got, want)
	}

	// A selector narrows the choice and is passed on.
	s, err = NewPrometheusSource(PrometheusAccess{URL: srv.URL, Selector: `instance="10.0.0.1:10259"`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap, err = s.Scrape(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if snap.Pending[QueueUnschedulable] != 0 || snap.Origin.Candidates != 1 {
		t.Errorf("with the selector: pending %v, origin %+v", snap.Pending, snap.Origin)
	}
}

func TestPrometheusSource_errors(t *testing.T) {
	srv := httptest.NewServer(&fakePrometheus{})
	defer srv.Close()
	s, err := NewPrometheusSource(PrometheusAccess{URL: srv.URL, Selector: `job="kube-scheduler"`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Scrape(context.Background())
	if err == nil || !strings.Contains(err.Error(), `has no scheduler_pending_pods series matching {job="kube-scheduler"}`) {
		t.Errorf("err = %v", err)
	}

	for _, bad := range []struct{ url, sel string }{{"prometheus:9090", ""}, {"http://p:9090", `job="x"}`}} {
		if _, err := NewPrometheusSource(PrometheusAccess{URL: bad.url, Selector: bad.sel}, nil); err == nil {
			t.Errorf("NewPrometheusSource(%q, %q) succeeded", bad.url, bad.sel)
		}
	}

	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	s, _ = NewPrometheusSource(PrometheusAccess{URL: down.URL}, nil)
	_, err = s.Scrape(context.Background())
	var te *TransportError
	if !errors.As(err, &te) || te.Kind != Unreachable {
		t.Errorf("err = %v, want Unreachable", err)
	}
}

// historyPrometheus answers instant queries (`sel` and `sel[window]`) over
// series with samples at given times, as a Prometheus server with the
// default five-minute lookback would.
type historyPrometheus struct {
	series map[string]historySeries // by description, for error messages
}

type historySeries struct {
	metric  model.Metric
	samples []model.SamplePair // oldest first
}

const lookback = 5 * time.Minute

func (p *historyPrometheus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/query" {
		http.NotFound(w, r)
		return
	}
	_ = r.ParseForm()
	q := r.Form.Get("query")
	sec, err := strconv.ParseFloat(r.Form.Get("time"), 64)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	at := model.TimeFromUnixNano(int64(sec * 1e9))
	window := time.Duration(0)
	if i := strings.LastIndexByte(q, '['); i > 0 && strings.HasSuffix(q, "]") {
		d, err := model.ParseDuration(q[i+1 : len(q)-1])
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		q, window = q[:i], time.Duration(d)
	}
	match, err := parseSelector(q)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "error", "errorType": "bad_data", "error": err.Error()})
		return
	}
	if window > 0 {
		out := model.Matrix{}
		for _, s := range p.series {
			if !match(s.metric) {
				continue
			}
			ss := &model.SampleStream{Metric: s.metric}
			for _, v := range s.samples {
				if v.Timestamp > at.Add(-window) && v.Timestamp <= at {
					ss.Values = append(ss.Values, v)
				}
			}
			if len(ss.Values) > 0 {
				out = append(out, ss)
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "matrix", "result": out}})
		return
	}
	out := model.Vector{}
	for _, s := range p.series {
		if !match(s.metric) {
			continue
		}
		for i := len(s.samples) - 1; i >= 0; i-- {
			v := s.samples[i]
			if v.Timestamp <= at && v.Timestamp > at.Add(-lookback) {
				out = append(out, &model.Sample{Metric: s.metric, Value: v.Value, Timestamp: at})
				break
			}
		}
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector", "result": out}})
}

// scraped returns the samples of a target scraped every interval from
// first to last (inclusive), with value v.
func scraped(first, last time.Time, interval time.Duration, v float64) []model.SamplePair {
	var out []model.SamplePair
	for t := first; !t.After(last); t = t.Add(interval) {
		out = append(out, model.SamplePair{Timestamp: model.TimeFromUnixNano(t.UnixNano()), Value: model.SampleValue(v)})
	}
	return out
}

func TestPrometheusSource_HeldSpan(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	pending := func(instance string) model.Metric {
		return model.Metric{model.MetricNameLabel: PendingPodsMetric, "job": "kube-scheduler", "instance": model.LabelValue(instance), QueueLabel: "active"}
	}
	tests := []struct {
		name     string
		series   []historySeries
		selector string
		from, to time.Time
		wantErr  string
	}{
		{
			name:   "an hour of data: the start of the window",
			series: []historySeries{{pending("a"), scraped(now.Add(-time.Hour), now, 15*time.Second, 1)}},
			from:   now.Add(-5*time.Minute + 15*time.Second), to: now,
		},
		{
			name:   "a new Prometheus scraped three times",
			series: []historySeries{{pending("a"), scraped(now.Add(-40*time.Second), now.Add(-10*time.Second), 15*time.Second, 1)}},
			from:   now.Add(-40 * time.Second), to: now.Add(-10 * time.Second),
		},
		{
			name:   "one sample",
			series: []historySeries{{pending("a"), scraped(now.Add(-10*time.Second), now.Add(-10*time.Second), 15*time.Second, 1)}},
			from:   now.Add(-10 * time.Second), to: now.Add(-10 * time.Second),
		},
		{
			name: "a standby scraped for an hour, the leader restarted 30s ago: the leader's start",
			series: []historySeries{
				{pending("standby"), scraped(now.Add(-time.Hour), now, 15*time.Second, 0)},
				{pending("leader"), scraped(now.Add(-30*time.Second), now, 15*time.Second, 3)},
			},
			from: now.Add(-30 * time.Second), to: now,
		},
		{
			name: "the selector leaves out the restarted target",
			series: []historySeries{
				{pending("standby"), scraped(now.Add(-time.Hour), now, 15*time.Second, 0)},
				{pending("leader"), scraped(now.Add(-30*time.Second), now, 15*time.Second, 3)},
			},
			selector: `instance="standby"`,
			from:     now.Add(-5*time.Minute + 15*time.Second), to: now,
		},
		{
			name:     "no series in the window",
			series:   []historySeries{{pending("a"), scraped(now.Add(-time.Hour), now.Add(-10*time.Minute), 15*time.Second, 1)}},
			selector: `job="kube-scheduler"`,
			wantErr:  `has no scheduler_pending_pods series matching {job="kube-scheduler"} in the 5m0s before 2027-01-15T08:00:00Z`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prom := &historyPrometheus{series: map[string]historySeries{}}
			for _, s := range tt.series {
				prom.series[s.metric.String()] = s
			}
			srv := httptest.NewServer(prom)
			defer srv.Close()
			s, err := NewPrometheusSource(PrometheusAccess{URL: srv.URL, Selector: tt.selector}, nil)
			if err != nil {
				t.Fatal(err)
			}
			from, to, err := s.HeldSpan(context.Background(), now, 5*time.Minute)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !from.Equal(tt.from) || !to.Equal(tt.to) {
				t.Errorf("HeldSpan = %s to %s, want %s to %s", from.UTC(), to.UTC(), tt.from.UTC(), tt.to.UTC())
			}
			// A scrape at the span's start finds the series: rates can
			// start there.
			if _, err := s.ScrapeAt(context.Background(), from); err != nil {
				t.Errorf("ScrapeAt(from): %v", err)
			}
		})
	}
}
