// Package collect measures a scheduler_perf measurement window the way
// upstream's collectors do (k8s.io/kubernetes v1.36.3,
// test/integration/scheduler_perf/util.go), from outside the scheduler's
// process: SchedulingThroughput from pod bind events, per-pod scheduling
// latency, the scheduler's histograms as deltas over the window, the
// window's duration, the process's heap, and a per-second time series of
// the scheduling queue from the scheduler's metrics.
//
// The arithmetic is upstream's: throughput is sampled once a second, the
// first sample after the first bind is dropped, seconds without a bind are
// merged into the next one and recorded once per merged second, and the
// percentiles of a sorted slice are element ceil(n·p)−1. Histogram
// quantiles are component-base's testutil.HistogramVec ones (linear
// interpolation inside the bucket), in milliseconds.
package collect

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// DataItem is one perf-dash data point, upstream's DataItem.
type DataItem struct {
	// Data maps a bucket ("Average", "Perc50", …) to its value.
	Data map[string]float64 `json:"data"`
	// Unit is the unit of every value in Data.
	Unit string `json:"unit"`
	// Labels carry Metric and Name, plus the histogram's label combination.
	Labels map[string]string `json:"labels,omitempty"`
}

// DataItems is the perf-dash file, upstream's DataItems.
type DataItems struct {
	Version   string     `json:"version"`
	DataItems []DataItem `json:"dataItems"`
}

// DataItemsVersion is the only version perf-dash reads.
const DataItemsVersion = "v1"

// Metric names this package gives its items (the Metric label).
const (
	MetricSchedulingThroughput = "SchedulingThroughput"
	MetricSchedulingDuration   = "SchedulingDuration"
	MetricHeapMemoryUsage      = "heap_memory_usage"
	MetricMemoryGrowthRate     = "memory_growth_rate"
	// MetricPodSchedulingLatency is this project's: per pod, from the
	// create request to the bind seen by the runner's watch.
	MetricPodSchedulingLatency = "PodSchedulingLatency"
)

// Label keys.
const (
	LabelMetric = "Metric"
	LabelName   = "Name"
	// LabelNamespace is on PodSchedulingLatency items.
	LabelNamespace = "namespace"
)

// NotApplicable is the value a data item gets for a label key that another
// item in the same file has and it has not.
const NotApplicable = "not applicable"

// FillLabels gives every item every label key any item has, with the value
// NotApplicable where it was missing: perf-dash builds one drop-down per
// label key and shows only items that have the selected value, so an item
// without a key would never be shown (upstream's dataItems2JSONFile).
func FillLabels(items []DataItem) {
	keys := map[string]bool{}
	for _, it := range items {
		for k := range it.Labels {
			keys[k] = true
		}
	}
	for i := range items {
		if items[i].Labels == nil && len(keys) > 0 {
			items[i].Labels = map[string]string{}
		}
		for k := range keys {
			if _, ok := items[i].Labels[k]; !ok {
				items[i].Labels[k] = NotApplicable
			}
		}
	}
}

// Percentile is upstream's percentile of an ascending slice: element
// ceil(n·p/100)−1. It panics on an empty slice, like upstream.
func Percentile(sorted []float64, p int) float64 {
	return sorted[int(math.Ceil(float64(len(sorted)*p)/100))-1]
}

// Summary returns Average and Perc50/90/95/99 of values (sorted in
// place), upstream's throughput summary; nil for no values.
func Summary(values []float64) map[string]float64 {
	if len(values) == 0 {
		return nil
	}
	sort.Float64s(values)
	sum := 0.0
	for _, v := range values {
		sum += v
	}
	return map[string]float64{
		"Average": sum / float64(len(values)),
		"Perc50":  Percentile(values, 50),
		"Perc90":  Percentile(values, 90),
		"Perc95":  Percentile(values, 95),
		"Perc99":  Percentile(values, 99),
	}
}

// ThresholdSelector picks the items a threshold applies to (upstream's
// thresholdMetricSelector).
type ThresholdSelector struct {
	Name        string
	Labels      map[string]string
	DataBucket  string
	ExpectLower bool
}

// ApplyThreshold is upstream's applyThreshold: for every item whose Metric
// is sel.Name and which carries all of sel.Labels, it records
// "<DataBucket>Threshold" in the item's data and checks that the bucket is
// higher than threshold (lower with ExpectLower). A threshold of 0 checks
// nothing. Items are changed in place.
func ApplyThreshold(items []DataItem, threshold float64, sel ThresholdSelector) error {
	if threshold == 0 {
		return nil
	}
	var errs []error
	for _, item := range items {
		if item.Labels[LabelMetric] != sel.Name || !labelsMatch(item.Labels, sel.Labels) {
			continue
		}
		if item.Data == nil {
			// Upstream writes into the nil map and panics; an item without
			// data has nothing to compare.
			errs = append(errs, fmt.Errorf("%s: no data present for %q metric %q bucket", item.Labels[LabelName], sel.Name, sel.DataBucket))
			continue
		}
		item.Data[sel.DataBucket+"Threshold"] = threshold
		v, ok := item.Data[sel.DataBucket]
		if !ok {
			errs = append(errs, fmt.Errorf("%s: no data present for %q metric %q bucket", item.Labels[LabelName], sel.Name, sel.DataBucket))
			continue
		}
		if sel.ExpectLower && !(v < threshold) {
			errs = append(errs, fmt.Errorf("%s: expected %q %q to be lower: got %f, want %f", item.Labels[LabelName], sel.Name, sel.DataBucket, v, threshold))
		}
		if !sel.ExpectLower && !(v > threshold) {
			errs = append(errs, fmt.Errorf("%s: expected %q %q to be higher: got %f, want %f", item.Labels[LabelName], sel.Name, sel.DataBucket, v, threshold))
		}
	}
	return errors.Join(errs...)
}

func labelsMatch(actual, required map[string]string) bool {
	for k, v := range required {
		if got, ok := actual[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func cloneLabels(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}
