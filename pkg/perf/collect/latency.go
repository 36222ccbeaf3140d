package collect

import (
	"sort"
	"time"
)

// Latencies are per-pod scheduling latencies of one measured namespace:
// from the request that created the pod to the moment the runner's watch
// saw it bound. They include the watch's delay (milliseconds), so they are
// an upper bound of what the scheduler took, queueing included.
type Latencies struct {
	Namespace string `json:"namespace"`
	// Millis are the latencies in milliseconds, ascending.
	Millis []float64 `json:"millis"`
	// Unmatched counts pods bound in the window that the runner did not
	// create (a churn op's, or another client's): they have no creation
	// time and are not in Millis.
	Unmatched int `json:"unmatched,omitempty"`
}

// NewLatencies sorts ds into a Latencies.
func NewLatencies(namespace string, ds []time.Duration, unmatched int) Latencies {
	ms := make([]float64, len(ds))
	for i, d := range ds {
		ms[i] = float64(d) / float64(time.Millisecond)
	}
	sort.Float64s(ms)
	return Latencies{Namespace: namespace, Millis: ms, Unmatched: unmatched}
}

// DataItem returns the PodSchedulingLatency item: Perc50/90/95/99, Average
// and Max in ms, with the percentile rule of the throughput item. It
// returns false when no pod was measured.
func (l Latencies) DataItem(labels map[string]string) (DataItem, bool) {
	if len(l.Millis) == 0 {
		return DataItem{}, false
	}
	data := Summary(append([]float64(nil), l.Millis...))
	data["Max"] = l.Millis[len(l.Millis)-1]
	lb := cloneLabels(labels)
	lb[LabelMetric] = MetricPodSchedulingLatency
	lb[LabelNamespace] = l.Namespace
	return DataItem{Data: data, Unit: "ms", Labels: lb}, true
}
