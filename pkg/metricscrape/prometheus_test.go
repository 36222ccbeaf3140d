package metricscrape

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
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
	match, err := testsupport.ParseSelector(q)
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

func TestPrometheusSource_ScrapeAt(t *testing.T) {
	a := model.LabelSet{"job": "kube-scheduler", "instance": "10.0.0.1:10259"}
	b := model.LabelSet{"job": "kube-scheduler", "instance": "10.0.0.2:10259"}
	kubelet := model.LabelSet{"job": "kubelet", "instance": "node-1"}
	standby := strings.ReplaceAll(smallExposition, `scheduler_pending_pods{queue="unschedulable"} 7`, `scheduler_pending_pods{queue="unschedulable"} 0`) +
		"# TYPE leader_election_master_status gauge\nleader_election_master_status{name=\"kube-scheduler\"} 0\n"
	leader := smallExposition + "# TYPE leader_election_master_status gauge\nleader_election_master_status{name=\"kube-scheduler\"} 1\n"
	prom := &fakePrometheus{}
	prom.series = append(prom.series, testsupport.SeriesOf(t, standby, a)...)
	prom.series = append(prom.series, testsupport.SeriesOf(t, leader, b)...)
	prom.series = append(prom.series, testsupport.SeriesOf(t, "# TYPE kubernetes_feature_enabled gauge\nkubernetes_feature_enabled{name=\"SchedulerPopFromBackoffQ\",stage=\"BETA\"} 0\n", kubelet)...)
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

func TestPrometheusSource_HeldSpan(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	pending := func(instance string) model.Metric {
		return model.Metric{model.MetricNameLabel: PendingPodsMetric, "job": "kube-scheduler", "instance": model.LabelValue(instance), QueueLabel: "active"}
	}
	tests := []struct {
		name     string
		series   []testsupport.PrometheusSeries
		selector string
		from, to time.Time
		wantErr  string
	}{
		{
			name:   "an hour of data: the start of the window",
			series: []testsupport.PrometheusSeries{{Metric: pending("a"), Samples: testsupport.Scraped(now.Add(-time.Hour), now, 15*time.Second, 1)}},
			from:   now.Add(-5*time.Minute + 15*time.Second), to: now,
		},
		{
			name:   "a new Prometheus scraped three times",
			series: []testsupport.PrometheusSeries{{Metric: pending("a"), Samples: testsupport.Scraped(now.Add(-40*time.Second), now.Add(-10*time.Second), 15*time.Second, 1)}},
			from:   now.Add(-40 * time.Second), to: now.Add(-10 * time.Second),
		},
		{
			name:   "one sample",
			series: []testsupport.PrometheusSeries{{Metric: pending("a"), Samples: testsupport.Scraped(now.Add(-10*time.Second), now.Add(-10*time.Second), 15*time.Second, 1)}},
			from:   now.Add(-10 * time.Second), to: now.Add(-10 * time.Second),
		},
		{
			name: "a standby scraped for an hour, the leader restarted 30s ago: the leader's start",
			series: []testsupport.PrometheusSeries{
				{Metric: pending("standby"), Samples: testsupport.Scraped(now.Add(-time.Hour), now, 15*time.Second, 0)},
				{Metric: pending("leader"), Samples: testsupport.Scraped(now.Add(-30*time.Second), now, 15*time.Second, 3)},
			},
			from: now.Add(-30 * time.Second), to: now,
		},
		{
			name: "the selector leaves out the restarted target",
			series: []testsupport.PrometheusSeries{
				{Metric: pending("standby"), Samples: testsupport.Scraped(now.Add(-time.Hour), now, 15*time.Second, 0)},
				{Metric: pending("leader"), Samples: testsupport.Scraped(now.Add(-30*time.Second), now, 15*time.Second, 3)},
			},
			selector: `instance="standby"`,
			from:     now.Add(-5*time.Minute + 15*time.Second), to: now,
		},
		{
			name:     "no series in the window",
			series:   []testsupport.PrometheusSeries{{Metric: pending("a"), Samples: testsupport.Scraped(now.Add(-time.Hour), now.Add(-10*time.Minute), 15*time.Second, 1)}},
			selector: `job="kube-scheduler"`,
			wantErr:  `has no scheduler_pending_pods series matching {job="kube-scheduler"} in the 5m0s before 2027-01-15T08:00:00Z`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(&testsupport.Prometheus{Series: tt.series})
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
