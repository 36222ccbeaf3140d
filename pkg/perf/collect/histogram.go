package collect

import (
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/utils/ptr"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// Families are gathered metric families by name.
type Families map[string]*dto.MetricFamily

// FamiliesFrom indexes a gatherer's output by name.
func FamiliesFrom(list []*dto.MetricFamily) Families {
	f := make(Families, len(list))
	for _, mf := range list {
		f[mf.GetName()] = mf
	}
	return f
}

// Histograms is upstream's metricsCollector, measured as a difference: the
// scheduler's histograms named by a metricsCollectorConfig, read at the
// start and at the end of the window, and every series' end minus start.
//
// Upstream means to measure the window too (it "resets" the families at
// the start), but the reset clears only its gathered copy, so upstream's
// items cover everything since the workload's control plane started; here
// they cover the window, which is what the threshold and a comparison of
// two windows need.
type Histograms struct {
	config *workload.MetricsCollectorConfig
	labels map[string]string
	start  Families
}

// NewHistograms returns a collector for config's metrics; its items carry
// labels (at least Name).
func NewHistograms(config *workload.MetricsCollectorConfig, labels map[string]string) *Histograms {
	return &Histograms{config: config, labels: cloneLabels(labels)}
}

// Start records the window's baseline.
func (h *Histograms) Start(f Families) { h.start = f }

// MetricNames are the configured metrics, sorted.
func (h *Histograms) MetricNames() []string {
	names := make([]string, 0, len(h.config.Metrics))
	for n := range h.config.Metrics {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// DataItems returns, for every configured metric and every combination of
// its label values (the whole family when it has none), Perc50/90/95/99 and
// Average in ms over the window; combinations without a sample in the window
// are left out, as are metrics the scheduler does not have.
func (h *Histograms) DataItems(end Families) []DataItem {
	var items []DataItem
	for _, metric := range h.MetricNames() {
		lvs := h.config.Metrics[metric]
		combos := []map[string]string{nil}
		if lvs != nil {
			combos = workload.UniqueLabelCombos(lvs)
		}
		deltas := histogramDeltas(h.start[metric], end[metric])
		for _, combo := range combos {
			if item := h.item(metric, deltas, combo); item != nil {
				items = append(items, *item)
			}
		}
	}
	return items
}

type series struct {
	labels []*dto.LabelPair
	hist   *dto.Histogram
}

// histogramDeltas returns end minus start for every histogram series of a
// family; series without a sample in between are dropped (upstream's
// Validate rejects a vector with an empty series).
func histogramDeltas(start, end *dto.MetricFamily) []series {
	if end == nil {
		return nil
	}
	before := map[string]*dto.Histogram{}
	if start != nil {
		for _, m := range start.GetMetric() {
			if m.GetHistogram() != nil {
				before[labelKey(m.GetLabel())] = m.GetHistogram()
			}
		}
	}
	var out []series
	for _, m := range end.GetMetric() {
		cur := m.GetHistogram()
		if cur == nil {
			continue
		}
		d := subtract(cur, before[labelKey(m.GetLabel())])
		if d.GetSampleCount() == 0 {
			continue
		}
		out = append(out, series{labels: m.GetLabel(), hist: d})
	}
	return out
}

// subtract returns cur − prev (prev may be nil). A series whose count went
// down was reset (a restarted scheduler): cur is taken whole.
func subtract(cur, prev *dto.Histogram) *dto.Histogram {
	if prev == nil || prev.GetSampleCount() > cur.GetSampleCount() || len(prev.GetBucket()) != len(cur.GetBucket()) {
		return cur
	}
	d := &dto.Histogram{
		SampleCount: ptr.To(cur.GetSampleCount() - prev.GetSampleCount()),
		SampleSum:   ptr.To(cur.GetSampleSum() - prev.GetSampleSum()),
	}
	for i, b := range cur.GetBucket() {
		d.Bucket = append(d.Bucket, &dto.Bucket{
			UpperBound:      ptr.To(b.GetUpperBound()),
			CumulativeCount: ptr.To(b.GetCumulativeCount() - prev.GetBucket()[i].GetCumulativeCount()),
		})
	}
	return d
}

func labelKey(pairs []*dto.LabelPair) string {
	parts := make([]string, len(pairs))
	for i, p := range pairs {
		parts[i] = p.GetName() + "=" + p.GetValue()
	}
	sort.Strings(parts)
	return strings.Join(parts, "\x00")
}

// item is upstream's collectHistogramVec on the deltas.
func (h *Histograms) item(metric string, deltas []series, combo map[string]string) *DataItem {
	var vec histogramVec
	for _, s := range deltas {
		if pairsMatch(s.labels, combo) {
			vec = append(vec, s.hist)
		}
	}
	if len(vec) == 0 || vec.validate() != nil || vec.sampleCount() == 0 {
		return nil
	}
	ms := float64(time.Second) / float64(time.Millisecond)
	labels := cloneLabels(h.labels)
	labels[LabelMetric] = metric
	for k, v := range combo {
		labels[k] = v
	}
	return &DataItem{
		Labels: labels,
		Data: map[string]float64{
			"Perc50":  vec.quantile(0.50) * ms,
			"Perc90":  vec.quantile(0.90) * ms,
			"Perc95":  vec.quantile(0.95) * ms,
			"Perc99":  vec.quantile(0.99) * ms,
			"Average": vec.average() * ms,
		},
		Unit: "ms",
	}
}

// WithRequired returns config plus the histograms every run reports
// whatever the workload's config says: attempt duration by result and the
// pod scheduling SLI duration. config itself is not changed.
func WithRequired(config *workload.MetricsCollectorConfig) *workload.MetricsCollectorConfig {
	out := &workload.MetricsCollectorConfig{Metrics: map[string][]*workload.LabelValues{}}
	if config != nil {
		for k, v := range config.Metrics {
			out.Metrics[k] = v
		}
	}
	if _, ok := out.Metrics[AttemptDurationMetric]; !ok {
		out.Metrics[AttemptDurationMetric] = []*workload.LabelValues{{Label: "result", Values: []string{"scheduled", "unschedulable", "error"}}}
	}
	if _, ok := out.Metrics[SLIDurationMetric]; !ok {
		out.Metrics[SLIDurationMetric] = nil
	}
	return out
}

// The scheduler histograms every run reports.
const (
	AttemptDurationMetric = "scheduler_scheduling_attempt_duration_seconds"
	SLIDurationMetric     = "scheduler_pod_scheduling_sli_duration_seconds"
)
