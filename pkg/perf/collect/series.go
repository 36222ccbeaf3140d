package collect

import (
	"sort"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
)

// QueueInterval is how often the queue time series is sampled.
const QueueInterval = time.Second

// QueueSeries is the scheduler's queue over a workload, one sample per
// QueueInterval, read from its metrics: scheduler_pending_pods by queue,
// scheduler_queue_incoming_pods_total by queue and event, and
// scheduler_schedule_attempts_total by result (the counters are
// cumulative, as the scheduler reports them).
type QueueSeries struct {
	// Start is when the workload's first op started; Seconds count from it.
	Start   time.Time     `json:"start"`
	Samples []QueueSample `json:"samples"`
	// Windows are the measurement windows, for shading charts.
	Windows []SeriesWindow `json:"windows,omitempty"`
	// Errors counts failed reads; LastError is the last one.
	Errors    int    `json:"errors,omitempty"`
	LastError string `json:"lastError,omitempty"`
}

// QueueSample is the queue at one instant.
type QueueSample struct {
	Seconds float64 `json:"t"`
	// Pending is by queue: active, backoff, unschedulable, gated.
	Pending map[string]float64 `json:"pending"`
	// Incoming is by "<queue>/<event>", cumulative.
	Incoming map[string]float64 `json:"incoming,omitempty"`
	// Attempts is by result, cumulative.
	Attempts map[string]float64 `json:"attempts,omitempty"`
	// InFlight is the number of pods popped and not done yet.
	InFlight float64 `json:"inFlight"`
}

// SeriesWindow is a measurement window on the series' time axis.
type SeriesWindow struct {
	Name  string  `json:"name"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

// Add appends the snapshot s, read at now.
func (q *QueueSeries) Add(now time.Time, s *metricscrape.Snapshot) {
	smp := QueueSample{
		Seconds:  now.Sub(q.Start).Seconds(),
		Pending:  map[string]float64{},
		Incoming: map[string]float64{},
		Attempts: map[string]float64{},
	}
	for k, v := range s.Pending {
		smp.Pending[k] = v
	}
	for k, v := range s.Incoming {
		smp.Incoming[k.Queue+"/"+k.Event] = v
	}
	for k, v := range s.Attempts {
		smp.Attempts[k] = v
	}
	smp.InFlight = s.InFlightEvents["PodPopped"]
	q.Samples = append(q.Samples, smp)
}

// Fail records a failed read.
func (q *QueueSeries) Fail(err error) {
	q.Errors++
	q.LastError = err.Error()
}

// IncomingKeys lists every "<queue>/<event>" seen, sorted.
func (q *QueueSeries) IncomingKeys() []string {
	seen := map[string]bool{}
	for _, s := range q.Samples {
		for k := range s.Incoming {
			seen[k] = true
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Bracket returns the indexes of the samples that enclose [from, to]
// seconds: the last one taken at or before from, and the first one at or
// after to (the nearest ones inside when there are none outside). ok is
// false for an empty series.
func (q *QueueSeries) Bracket(from, to float64) (first, last int, ok bool) {
	n := len(q.Samples)
	if n == 0 {
		return 0, 0, false
	}
	first, last = 0, n-1
	for i, s := range q.Samples {
		if s.Seconds <= from {
			first = i
		}
	}
	for i := n - 1; i >= 0; i-- {
		if q.Samples[i].Seconds >= to {
			last = i
		}
	}
	if last < first {
		last = first
	}
	return first, last, true
}

// IncomingDelta is how much the "<queue>/<event>" counter grew over
// [from, to] seconds, between the samples that enclose it.
func (q *QueueSeries) IncomingDelta(key string, from, to float64) float64 {
	first, last, ok := q.Bracket(from, to)
	if !ok {
		return 0
	}
	return q.Samples[last].Incoming[key] - q.Samples[first].Incoming[key]
}

// AttemptsDelta is how much the attempts counter of result grew over
// [from, to] seconds, between the samples that enclose it.
func (q *QueueSeries) AttemptsDelta(result string, from, to float64) float64 {
	first, last, ok := q.Bracket(from, to)
	if !ok {
		return 0
	}
	return q.Samples[last].Attempts[result] - q.Samples[first].Attempts[result]
}

// MaxPending is the largest value of the queue's gauge in the series.
func (q *QueueSeries) MaxPending(queue string) float64 {
	m := 0.0
	for _, s := range q.Samples {
		if v := s.Pending[queue]; v > m {
			m = v
		}
	}
	return m
}
