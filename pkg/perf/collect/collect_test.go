package collect

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/utils/ptr"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

func TestThroughput_Observe(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	tests := []struct {
		name   string
		ticks  []float64 // seconds
		counts []int     // bound pods seen at each tick
		want   []float64 // recorded samples, in order
	}{
		{
			name:   "no pod bound: no baseline, no sample",
			ticks:  []float64{1, 2, 3},
			counts: []int{0, 0, 0},
		},
		{
			name:   "the first tick with a bound pod is only the baseline",
			ticks:  []float64{1, 2},
			counts: []int{50, 50},
			want:   nil,
		},
		{
			name:   "one sample per second",
			ticks:  []float64{1, 2, 3, 4},
			counts: []int{10, 110, 310, 320},
			want:   []float64{100, 200, 10},
		},
		{
			name:   "seconds without a bind merge into the next and count once each",
			ticks:  []float64{1, 2, 3, 4, 5},
			counts: []int{10, 10, 10, 70, 80},
			want:   []float64{20, 20, 20, 10},
		},
		{
			name:   "the real interval, not the nominal one, divides",
			ticks:  []float64{1, 2.5},
			counts: []int{1, 31},
			want:   []float64{20},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tp := NewThroughput(map[string]string{LabelName: "x"}, 0)
			for i, s := range tc.ticks {
				tp.Observe(at(s), tc.counts[i])
			}
			if diff := cmp.Diff(tc.want, tp.Samples()); diff != "" {
				t.Errorf("samples (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestThroughput_DataItems(t *testing.T) {
	t0 := time.Unix(0, 0)
	tp := NewThroughput(map[string]string{LabelName: "BenchmarkPerfScheduling/A/b/namespace-2"}, 30)
	// Baseline at 0 s, then rates 1..10 pods/s, one per second; the 11th
	// interval lasts 1.5 s and adds a warning.
	count := 100
	tp.Observe(t0, count)
	for i := 1; i <= 10; i++ {
		count += i
		tp.Observe(t0.Add(time.Duration(i)*time.Second), count)
	}
	count += 15
	tp.Observe(t0.Add(11500*time.Millisecond), count)
	items := tp.DataItems()
	if len(items) != 1 {
		t.Fatalf("got %d items", len(items))
	}
	it := items[0]
	// Samples sorted: 1..10 and 10; n=11. Perc50 = element ceil(5.5)-1 = 5
	// (value 6), Perc90 = ceil(9.9)-1 = 9 (10), Perc95/99 = element 10.
	want := map[string]float64{"Average": 65.0 / 11, "Perc50": 6, "Perc90": 10, "Perc95": 10, "Perc99": 10}
	if diff := cmp.Diff(want, it.Data, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })); diff != "" {
		t.Errorf("data (-want, +got):\n%s", diff)
	}
	if it.Unit != "pods/s" || it.Labels[LabelMetric] != MetricSchedulingThroughput || it.Labels[LabelName] != "BenchmarkPerfScheduling/A/b/namespace-2" {
		t.Errorf("item = %+v", it)
	}
	if w := tp.Warnings(); len(w) != 1 || !strings.Contains(w[0], "50.0%") {
		t.Errorf("warnings = %q, want one about a 50%% longer interval", w)
	}
	if tl := tp.Timeline(); len(tl) != 11 || tl[10].Seconds != 11.5 || tl[10].Total != count {
		t.Errorf("timeline = %+v", tl)
	}
}

func TestThroughput_DataItems_noSample(t *testing.T) {
	tp := NewThroughput(map[string]string{LabelName: "n"}, 0)
	tp.Observe(time.Unix(1, 0), 5)
	items := tp.DataItems()
	// Upstream's item for an unmeasured window: its labels only.
	if len(items) != 1 || items[0].Data != nil || items[0].Labels[LabelMetric] != "" || tp.Measured() {
		t.Errorf("items = %+v, measured %v; want one without data or Metric", items, tp.Measured())
	}
}

func TestPercentile(t *testing.T) {
	v := []float64{1, 2, 3, 4}
	for p, want := range map[int]float64{50: 2, 90: 4, 95: 4, 99: 4, 25: 1, 26: 2} {
		if got := Percentile(v, p); got != want {
			t.Errorf("Percentile(%v, %d) = %v, want %v", v, p, got, want)
		}
	}
}

func TestApplyThreshold(t *testing.T) {
	item := func(metric string, avg float64, labels map[string]string) DataItem {
		lb := map[string]string{LabelMetric: metric, LabelName: "w/ns"}
		for k, v := range labels {
			lb[k] = v
		}
		return DataItem{Data: map[string]float64{"Average": avg}, Labels: lb}
	}
	tests := []struct {
		name      string
		items     []DataItem
		threshold float64
		sel       ThresholdSelector
		wantErr   string
		wantTh    bool
	}{
		{"off", []DataItem{item("SchedulingThroughput", 1, nil)}, 0, ThresholdSelector{Name: "SchedulingThroughput", DataBucket: "Average"}, "", false},
		{"met", []DataItem{item("SchedulingThroughput", 300, nil)}, 270, ThresholdSelector{Name: "SchedulingThroughput", DataBucket: "Average"}, "", true},
		{"missed", []DataItem{item("SchedulingThroughput", 200, nil)}, 270, ThresholdSelector{Name: "SchedulingThroughput", DataBucket: "Average"},
			`w/ns: expected "SchedulingThroughput" "Average" to be higher: got 200.000000, want 270.000000`, true},
		{"equal is not higher", []DataItem{item("SchedulingThroughput", 270, nil)}, 270, ThresholdSelector{Name: "SchedulingThroughput", DataBucket: "Average"}, "to be higher", true},
		{"lower wanted", []DataItem{item("scheduler_scheduling_attempt_duration_seconds", 12, map[string]string{"result": "scheduled"})}, 10,
			ThresholdSelector{Name: "scheduler_scheduling_attempt_duration_seconds", Labels: map[string]string{"result": "scheduled"}, DataBucket: "Average", ExpectLower: true},
			"to be lower: got 12.000000, want 10.000000", true},
		{"labels do not match", []DataItem{item("scheduler_scheduling_attempt_duration_seconds", 12, map[string]string{"result": "error"})}, 10,
			ThresholdSelector{Name: "scheduler_scheduling_attempt_duration_seconds", Labels: map[string]string{"result": "scheduled"}, DataBucket: "Average", ExpectLower: true}, "", false},
		{"no such bucket", []DataItem{item("SchedulingThroughput", 300, nil)}, 1, ThresholdSelector{Name: "SchedulingThroughput", DataBucket: "Perc42"}, `no data present for "SchedulingThroughput" metric "Perc42" bucket`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ApplyThreshold(tc.items, tc.threshold, tc.sel)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("ApplyThreshold() = %v, want %q", err, tc.wantErr)
			}
			_, got := tc.items[0].Data["AverageThreshold"]
			if got != tc.wantTh {
				t.Errorf("AverageThreshold recorded = %v, want %v (data %v)", got, tc.wantTh, tc.items[0].Data)
			}
		})
	}
}

func TestFillLabels(t *testing.T) {
	items := []DataItem{
		{Labels: map[string]string{LabelMetric: "SchedulingThroughput", LabelName: "a"}},
		{Labels: map[string]string{LabelMetric: "scheduler_scheduling_attempt_duration_seconds", LabelName: "a", "result": "scheduled"}},
		{Labels: map[string]string{LabelMetric: "PodSchedulingLatency", LabelName: "a", "namespace": "ns"}},
	}
	FillLabels(items)
	for _, it := range items {
		if len(it.Labels) != 4 {
			t.Errorf("labels %v, want 4 keys", it.Labels)
		}
	}
	if items[0].Labels["result"] != NotApplicable || items[1].Labels["namespace"] != NotApplicable || items[2].Labels["result"] != NotApplicable {
		t.Errorf("missing keys not filled: %+v", items)
	}
}

// histFamily builds a histogram family with one series per label value of
// "result", buckets at 0.01, 0.1 and 1 s.
func histFamily(name string, series map[string][4]uint64, sums map[string]float64) *dto.MetricFamily {
	mf := &dto.MetricFamily{Name: ptr.To(name), Type: dto.MetricType_HISTOGRAM.Enum()}
	for result, counts := range series {
		h := &dto.Histogram{SampleCount: ptr.To(counts[3]), SampleSum: ptr.To(sums[result])}
		for i, ub := range []float64{0.01, 0.1, 1} {
			h.Bucket = append(h.Bucket, &dto.Bucket{UpperBound: ptr.To(ub), CumulativeCount: ptr.To(counts[i])})
		}
		mf.Metric = append(mf.Metric, &dto.Metric{
			Label:     []*dto.LabelPair{{Name: ptr.To("profile"), Value: ptr.To("default-scheduler")}, {Name: ptr.To("result"), Value: ptr.To(result)}},
			Histogram: h,
		})
	}
	return mf
}

func TestHistograms_DataItems(t *testing.T) {
	const m = AttemptDurationMetric
	cfg := &workload.MetricsCollectorConfig{Metrics: map[string][]*workload.LabelValues{
		m:                      {{Label: "result", Values: []string{"scheduled", "unschedulable", "error"}}},
		"no_such_metric":       nil,
		SLIDurationMetric:      nil,
		"scheduler_goroutines": {{Label: "operation", Values: []string{"binding"}}},
	}}
	h := NewHistograms(cfg, map[string]string{LabelName: "w"})
	h.Start(Families{m: histFamily(m,
		map[string][4]uint64{"scheduled": {10, 10, 10, 10}, "unschedulable": {0, 5, 5, 5}},
		map[string]float64{"scheduled": 0.05, "unschedulable": 0.25})})
	// In the window: 100 scheduled attempts, all in (0.01, 0.1]; no new
	// unschedulable one; 4 errors (a series that appeared).
	items := h.DataItems(Families{m: histFamily(m,
		map[string][4]uint64{"scheduled": {10, 110, 110, 110}, "unschedulable": {0, 5, 5, 5}, "error": {0, 0, 4, 4}},
		map[string]float64{"scheduled": 0.05 + 5, "unschedulable": 0.25, "error": 2})})
	if len(items) != 2 {
		t.Fatalf("items = %+v, want scheduled and error only", items)
	}
	byResult := map[string]DataItem{}
	for _, it := range items {
		if it.Unit != "ms" || it.Labels[LabelMetric] != m || it.Labels[LabelName] != "w" {
			t.Errorf("item %+v", it)
		}
		byResult[it.Labels["result"]] = it
	}
	s := byResult["scheduled"].Data
	// 100 samples in (10ms, 100ms]: median interpolated at 55 ms; mean 50 ms.
	if math.Abs(s["Perc50"]-55) > 1e-6 || math.Abs(s["Average"]-50) > 1e-6 || math.Abs(s["Perc99"]-99.1) > 1e-6 {
		t.Errorf("scheduled = %v", s)
	}
	e := byResult["error"].Data
	if math.Abs(e["Average"]-500) > 1e-6 {
		t.Errorf("error = %v", e)
	}
}

func TestWithRequired(t *testing.T) {
	got := WithRequired(&workload.MetricsCollectorConfig{Metrics: map[string][]*workload.LabelValues{
		AttemptDurationMetric: {{Label: "result", Values: []string{"error"}}},
	}})
	if lv := got.Metrics[AttemptDurationMetric]; len(lv) != 1 || len(lv[0].Values) != 1 {
		t.Errorf("the workload's own combos were replaced: %+v", lv)
	}
	if _, ok := got.Metrics[SLIDurationMetric]; !ok {
		t.Errorf("SLI duration missing")
	}
}

func TestLatencies_DataItem(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	l := NewLatencies("ns", ds, 3)
	it, ok := l.DataItem(map[string]string{LabelName: "w/ns"})
	if !ok {
		t.Fatal("no item")
	}
	want := map[string]float64{"Average": 50.5, "Perc50": 50, "Perc90": 90, "Perc95": 95, "Perc99": 99, "Max": 100}
	if diff := cmp.Diff(want, it.Data); diff != "" {
		t.Errorf("data (-want, +got):\n%s", diff)
	}
	if it.Labels[LabelNamespace] != "ns" || it.Labels[LabelMetric] != MetricPodSchedulingLatency || l.Unmatched != 3 {
		t.Errorf("item %+v, unmatched %d", it, l.Unmatched)
	}
	if _, ok := NewLatencies("ns", nil, 0).DataItem(nil); ok {
		t.Error("an empty window gave an item")
	}
}

func TestQueueSeries_Bracket(t *testing.T) {
	q := &QueueSeries{}
	for i, v := range []float64{0, 5, 9, 20} {
		q.Samples = append(q.Samples, QueueSample{Seconds: float64(i), Incoming: map[string]float64{"active/PopFromBackoffQ": v}})
	}
	if got := q.IncomingDelta("active/PopFromBackoffQ", 0.5, 2.5); got != 20 {
		t.Errorf("delta over (0.5, 2.5) = %v, want 20 (samples 0 and 3 enclose it)", got)
	}
	if got := q.IncomingDelta("active/PopFromBackoffQ", 1, 2); got != 4 {
		t.Errorf("delta over [1, 2] = %v, want 4", got)
	}
}
