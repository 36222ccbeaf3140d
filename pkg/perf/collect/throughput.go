package collect

import (
	"fmt"
	"math"
	"time"
)

// ThroughputInterval is upstream's throughputSampleInterval.
const ThroughputInterval = time.Second

// Throughput is upstream's SchedulingThroughput collector without its
// informer: feed it, once per ThroughputInterval, the number of pods seen
// bound so far (Observe), then read DataItems.
//
// Sampling starts with the first tick that sees a bound pod; that tick only
// sets the baseline (it is likely an outlier, since sampling and pod
// creation start independently). A tick with no new bound pod records
// nothing; the next tick that has some records its rate once for itself and
// once for every tick merged into it, so that percentiles weigh each second
// equally.
type Throughput struct {
	labels map[string]string
	// errorMargin is upstream's: when > 0, a sample whose interval deviates
	// by more than this percentage from the nominal one adds a warning.
	errorMargin float64

	started    bool
	lastCount  int
	lastSample time.Time
	skipped    int

	// start is the baseline tick.
	start    time.Time
	values   []float64
	timeline []RateSample
	warnings []string
}

// RateSample is one recorded throughput sample, for charts.
type RateSample struct {
	// Seconds since the baseline tick, at the end of the interval.
	Seconds float64 `json:"seconds"`
	// Rate in pods/s over the interval (merged seconds included).
	Rate float64 `json:"rate"`
	// Total bound pods seen so far.
	Total int `json:"total"`
}

// NewThroughput returns a collector whose item carries labels (at least
// Name). errorMargin is a percentage; upstream uses 30 when benchmarking.
func NewThroughput(labels map[string]string, errorMargin float64) *Throughput {
	return &Throughput{labels: cloneLabels(labels), errorMargin: errorMargin}
}

// Observe records the tick at now, when scheduled pods had been seen bound
// in total.
func (t *Throughput) Observe(now time.Time, scheduled int) {
	if scheduled == 0 {
		return
	}
	if !t.started {
		t.started = true
		t.lastCount = scheduled
		t.lastSample = now
		t.start = now
		return
	}
	newScheduled := scheduled - t.lastCount
	if newScheduled == 0 {
		t.skipped++
		return
	}
	duration := now.Sub(t.lastSample)
	expected := ThroughputInterval * time.Duration(t.skipped+1)
	margin := (duration - expected).Seconds() / expected.Seconds() * 100
	if t.errorMargin > 0 && math.Abs(margin) > t.errorMargin {
		t.warnings = append(t.warnings, fmt.Sprintf("the %d most recent throughput intervals took %s instead of %s, a difference of %0.1f%%",
			t.skipped+1, duration, expected, margin))
	}
	rate := float64(newScheduled) / duration.Seconds()
	for i := 0; i <= t.skipped; i++ {
		t.values = append(t.values, rate)
	}
	t.timeline = append(t.timeline, RateSample{Seconds: now.Sub(t.start).Seconds(), Rate: rate, Total: scheduled})
	t.lastCount = scheduled
	t.lastSample = now
	t.skipped = 0
}

// Samples returns the recorded per-second rates, in time order (a merged
// interval appears once per second it spans).
func (t *Throughput) Samples() []float64 { return append([]float64(nil), t.values...) }

// Timeline returns one entry per recorded interval.
func (t *Throughput) Timeline() []RateSample { return append([]RateSample(nil), t.timeline...) }

// Warnings are the interval deviations beyond the error margin.
func (t *Throughput) Warnings() []string { return append([]string(nil), t.warnings...) }

// DataItems returns upstream's SchedulingThroughput item: Average and
// Perc50/90/95/99 in pods/s. With no sample (everything was bound within
// about a second) upstream returns an item with only its labels and no data
// and no Metric label; so does this, and Measured reports false.
func (t *Throughput) DataItems() []DataItem {
	item := DataItem{Labels: cloneLabels(t.labels)}
	if len(t.values) == 0 {
		return []DataItem{item}
	}
	item.Labels[LabelMetric] = MetricSchedulingThroughput
	item.Data = Summary(append([]float64(nil), t.values...))
	item.Unit = "pods/s"
	return []DataItem{item}
}

// Start is the baseline tick (zero before the first bound pod); Timeline's
// seconds count from it.
func (t *Throughput) Start() time.Time { return t.start }

// Measured reports whether at least one sample was recorded.
func (t *Throughput) Measured() bool { return len(t.values) > 0 }
