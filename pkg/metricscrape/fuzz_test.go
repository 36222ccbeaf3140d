package metricscrape

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
)

// checkSnapshot asserts what every Snapshot the builder returns must hold.
func checkSnapshot(t *testing.T, s *Snapshot) {
	t.Helper()
	for q, v := range s.Pending {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("Pending[%q] = %v", q, v)
		}
	}
	for k, v := range s.Incoming {
		if !(v >= 0) || math.IsInf(v, 0) {
			t.Fatalf("Incoming[%v] = %v", k, v)
		}
	}
	for k, v := range s.Attempts {
		if !(v >= 0) || math.IsInf(v, 0) {
			t.Fatalf("Attempts[%q] = %v", k, v)
		}
	}
	if !sort.StringsAreSorted(s.Profiles) {
		t.Fatalf("Profiles not sorted: %v", s.Profiles)
	}
	hists := []Histogram{s.PodSchedulingAttempts}
	for _, h := range s.SLI {
		hists = append(hists, h)
	}
	for _, h := range hists {
		for i, b := range h.Buckets {
			if math.IsNaN(b.UpperBound) || (i > 0 && h.Buckets[i-1].UpperBound >= b.UpperBound) {
				t.Fatalf("buckets not strictly ascending: %+v", h.Buckets)
			}
		}
		_ = h.Quantile(0.5)
		_ = h.Quantile(0.99)
		_ = h.Mean()
	}
	keys := s.IncomingKeys()
	if len(keys) != len(s.Incoming) {
		t.Fatalf("IncomingKeys() has %d keys, Incoming %d", len(keys), len(s.Incoming))
	}
	// A snapshot compared to itself a second later moves nothing.
	later := *s
	later.Time = s.Time.Add(time.Second)
	r, err := NewRates(s, &later)
	if err != nil {
		t.Fatal(err)
	}
	if r.Reset || r.AttemptsTotal() != 0 {
		t.Fatalf("rates against itself: %+v", r)
	}
	for k, v := range r.Incoming {
		if v != 0 {
			t.Fatalf("rate of %v against itself = %v", k, v)
		}
	}
}

// FuzzParseText feeds arbitrary text to the parser and the Snapshot builder.
func FuzzParseText(f *testing.F) {
	f.Add([]byte(smallExposition))
	f.Add(readRecorded(f, "v1.36-idle.prom"))
	f.Add([]byte("# TYPE scheduler_pending_pods gauge\nscheduler_pending_pods{queue=\"active\"} 1e308\n"))
	f.Add([]byte("# TYPE scheduler_pod_scheduling_attempts histogram\nscheduler_pod_scheduling_attempts_bucket{le=\"x\"} 1\nscheduler_pending_pods 1\n"))
	f.Add([]byte("scheduler_pending_pods{queue=\"active\"} 1\nscheduler_pending_pods{queue=\"active\"} 2\n"))
	f.Add([]byte("Forbidden\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseText("fuzz", data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		checkSnapshot(t, s)
	})
}

// FuzzFromSamples drives the builder the way a Prometheus query does: flat
// samples with arbitrary labels and values.
func FuzzFromSamples(f *testing.F) {
	f.Add(uint8(0), "active", "", "", 3.0, uint8(1), "backoff", "NodeAdd", "", 2.0)
	f.Add(uint8(6), "", "", "0.5", 4.0, uint8(7), "", "", "", 1.5)
	f.Add(uint8(9), "", "", "+Inf", -1.0, uint8(10), "SchedulerPopFromBackoffQ", "BETA", "", 1.0)
	names := []string{
		PendingPodsMetric, QueueIncomingPodsMetric, ScheduleAttemptsMetric, UnschedulablePodsMetric,
		InFlightEventsMetric, PodScheduledAfterFlushMetric,
		PodSchedulingSLIDurationMetric + histogramBucketSuffix, PodSchedulingSLIDurationMetric + histogramSumSuffix,
		PodSchedulingSLIDurationMetric + histogramCountSuffix,
		PodSchedulingAttemptsMetric + histogramBucketSuffix, FeatureEnabledMetric, BuildInfoMetric,
		LeaderElectionMasterStatusMetric, "unrelated_metric",
	}
	sample := func(n uint8, a, b, le string, v float64) *model.Sample {
		m := model.Metric{model.MetricNameLabel: model.LabelValue(names[int(n)%len(names)])}
		for _, l := range []model.LabelName{QueueLabel, NameLabel, ResultLabel, PluginLabel, AttemptsLabel} {
			m[l] = model.LabelValue(a)
		}
		for _, l := range []model.LabelName{EventLabel, StageLabel, ProfileLabel} {
			m[l] = model.LabelValue(b)
		}
		if le != "" {
			m[model.BucketLabel] = model.LabelValue(le)
		}
		return &model.Sample{Metric: m, Value: model.SampleValue(v)}
	}
	f.Fuzz(func(t *testing.T, n1 uint8, a1, b1, le1 string, v1 float64, n2 uint8, a2, b2, le2 string, v2 float64) {
		s, err := FromSamples(model.Vector{sample(n1, a1, b1, le1, v1), sample(n2, a2, b2, le2, v2), nil})
		if err != nil {
			return
		}
		checkSnapshot(t, s)
	})
}

// answers is a round tripper that answers the i-th request with bodies[i]
// (the last one for every later request), as a Prometheus server would.
type answers struct {
	bodies [][]byte
	n      int
}

func (a *answers) RoundTrip(req *http.Request) (*http.Response, error) {
	body := a.bodies[min(a.n, len(a.bodies)-1)]
	a.n++
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK", Request: req,
		Header: http.Header{"Content-Type": {"application/json"}},
		Body:   io.NopCloser(bytes.NewReader(body)),
	}, nil
}

// fuzzPrometheusCap keeps the fuzzer's inputs well within the cap's path.
const fuzzPrometheusCap = 1 << 20

// prometheusAnswering is a PrometheusSource whose server answers with
// bodies, through the same client the command builds (origin policy, cap).
func prometheusAnswering(bodies ...[]byte) *PrometheusSource {
	origin := bound.Origin{Scheme: "http", Host: "prom", Port: "9090"}
	client, err := api.NewClient(api.Config{Address: "http://prom:9090", Client: bound.Client(origin, bound.CapBodies(fuzzPrometheusCap)(&answers{bodies: bodies}))})
	if err != nil {
		panic(err)
	}
	return &PrometheusSource{address: "http://prom:9090", api: promv1.NewAPI(client)}
}

// vectorAnswer is a query answer holding vec.
func vectorAnswer(tb testing.TB, vec model.Vector) []byte {
	data, err := json.Marshal(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector", "result": vec}})
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// FuzzPrometheusAnswer feeds arbitrary answers to the two queries of a
// scrape (the scheduler's target, then its series) and to the range query
// status reads rates over: the JSON decoding of client_golang, then
// FromSamples. Whatever the answers, the source returns a Snapshot that
// holds what a Snapshot must, or an error that says something.
func FuzzPrometheusAnswer(f *testing.F) {
	series := testsupport.SeriesOf(f, smallExposition, model.LabelSet{"job": "kube-scheduler", "instance": "10.0.0.1:10259"})
	var pending model.Vector
	for _, s := range series {
		if s.Metric[model.MetricNameLabel] == PendingPodsMetric {
			pending = append(pending, s)
		}
	}
	f.Add(vectorAnswer(f, pending), vectorAnswer(f, series))
	f.Add(vectorAnswer(f, pending), vectorAnswer(f, model.Vector{}))
	f.Add(vectorAnswer(f, pending), []byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"scheduler_pending_pods","queue":"active"},"value":[1700000000,"NaN"]}]}}`))
	f.Add(vectorAnswer(f, pending), []byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"scheduler_pending_pods","queue":"active"},"value":[1700000000,"1e309"]},{"metric":{"__name__":"scheduler_pod_scheduling_attempts_bucket","le":"x"},"value":[1,"1"]}]}}`))
	f.Add([]byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"scheduler_pending_pods"},"values":[[1700000000,"1"],[1700000015,"2"]]}]}}`), []byte(`{}`))
	f.Add([]byte(`{"status":"error","errorType":"bad_data","error":"parse error"}`), []byte(`null`))
	f.Add([]byte(`{"status":"success","data":{"resultType":"scalar","result":[1700000000,"1"]}}`), []byte(`{"status":"success","data":{"resultType":"string","result":[1700000000,"x"]}}`))
	f.Add([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"0"]}]}}`), []byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"0"]}]}}`))
	f.Add([]byte(`{"status":"success","warnings":["w"],"data":{"resultType":"vector","result":[{"metric":{"__name__":"scheduler_pending_pods","instance":"a"},"value":[1,"1"]},{"metric":{"__name__":"scheduler_pending_pods","instance":"b"},"value":[1,"1"]}]}}`), []byte(`<html>Forbidden</html>`))
	at := time.Unix(1_700_000_000, 0)
	// The first seed is a whole scrape, so that the fuzzer starts from
	// answers that reach FromSamples.
	if snap, err := prometheusAnswering(vectorAnswer(f, pending), vectorAnswer(f, series)).ScrapeAt(context.Background(), at); err != nil || snap.Pending[QueueUnschedulable] != 7 {
		f.Fatalf("the first seed does not scrape: %v", err)
	}
	f.Fuzz(func(t *testing.T, first, second []byte) {
		snap, err := prometheusAnswering(first, second).ScrapeAt(context.Background(), at)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
		} else {
			if snap.Pending == nil || snap.Origin.Kind != OriginPrometheus {
				t.Fatalf("snapshot without its parts: %+v", snap)
			}
			checkSnapshot(t, snap)
		}
		from, to, err := prometheusAnswering(first).HeldSpan(context.Background(), at, 5*time.Minute)
		if err == nil && from.After(to) {
			t.Fatalf("HeldSpan = %s to %s: it ends before it starts", from, to)
		}
	})
}
