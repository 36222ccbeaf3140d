package queue

// The queue's metrics, with upstream's series names and label values
// (pkg/scheduler/metrics, v1.34–v1.37). pkg/metricscrape imports these names;
// this package is the one place they are spelled.

// Series names.
const (
	MetricPendingPods           = "scheduler_pending_pods"
	MetricQueueIncomingPods     = "scheduler_queue_incoming_pods_total"
	MetricScheduleAttempts      = "scheduler_schedule_attempts_total"
	MetricUnschedulablePods     = "scheduler_unschedulable_pods"
	MetricPodSchedulingSLI      = "scheduler_pod_scheduling_sli_duration_seconds"
	MetricPodSchedulingAttempts = "scheduler_pod_scheduling_attempts"
	MetricAttemptDuration       = "scheduler_scheduling_attempt_duration_seconds"
	// v1.37: the queue's entities (a pod, or a pod group queued whole), by
	// queue and type, and their moves; the pods' series count the pods in
	// them.
	MetricQueuedEntities             = "scheduler_queued_entities"
	MetricQueueIncomingEntities      = "scheduler_queue_incoming_entities_total"
	MetricPreQueueingHintEvaluations = "scheduler_pre_queueing_hint_evaluations_total"
)

// Values of the queue label of scheduler_pending_pods and
// scheduler_queue_incoming_pods_total (gated only on the former).
const (
	LabelActive        = "active"
	LabelBackoff       = "backoff"
	LabelUnschedulable = "unschedulable"
	LabelGated         = "gated"
	// v1.37 (metrics.go:764-769): pod-group members that wait for their
	// group to have enough pods (incompletePodGroupPods), and for the
	// group to be queued (pendingPodGroupPods).
	LabelIncomplete = "incomplete"
	LabelPending    = "pending"
)

// PendingLabels lists scheduler_pending_pods' queue values that every
// modelled version reports, in display order; the trace format prints these.
var PendingLabels = [...]string{LabelActive, LabelBackoff, LabelUnschedulable, LabelGated}

// PendingLabelsOf lists the queue values version v reports, in display order.
func PendingLabelsOf(v Version) []string {
	if v >= V1_37 {
		return []string{LabelActive, LabelBackoff, LabelUnschedulable, LabelGated, LabelIncomplete, LabelPending}
	}
	return PendingLabels[:]
}

// MetricRecorder is a gauge the sub-queues move as pods come and go
// (upstream's metrics.MetricRecorder).
type MetricRecorder interface {
	Inc()
	Dec()
	Clear()
}

// Metrics receives the queue's synchronous metrics. The zero Options use a
// no-op; simulate plugs in a Recorder.
type Metrics interface {
	// Pending returns the gauge of scheduler_pending_pods{queue}.
	Pending(queue string) MetricRecorder
	// Incoming adds n to scheduler_queue_incoming_pods_total{queue, event}:
	// the pods of the entities that arrived (upstream adds an entity's size).
	Incoming(queue, event string, n int)
}

type noopGauge struct{}

func (noopGauge) Inc()   {}
func (noopGauge) Dec()   {}
func (noopGauge) Clear() {}

type noopMetrics struct{}

func (noopMetrics) Pending(string) MetricRecorder { return noopGauge{} }
func (noopMetrics) Incoming(string, string, int)  {}

// Gauge is an in-memory gauge.
type Gauge struct{ Value int }

// Inc adds one.
func (g *Gauge) Inc() { g.Value++ }

// Dec subtracts one.
func (g *Gauge) Dec() { g.Value-- }

// Clear sets zero.
func (g *Gauge) Clear() { g.Value = 0 }

// incomingQueues are the queue label values of
// scheduler_queue_incoming_pods_total (gated pods count as unschedulable).
var incomingQueues = [...]string{LabelActive, LabelBackoff, LabelUnschedulable}

// Recorder keeps the queue's metrics in memory.
type Recorder struct {
	pending map[string]*Gauge
	// incoming is the count per incomingQueues entry of each event, in
	// first-seen order: a dozen events at most, found faster by a scan than
	// by hashing; other queue values (none upstream) go to other.
	incoming []incomingCount
	other    map[[2]string]int
}

type incomingCount struct {
	event  string
	counts [len(incomingQueues)]int
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	r := &Recorder{pending: map[string]*Gauge{}, other: map[[2]string]int{}}
	for _, l := range PendingLabels {
		r.pending[l] = &Gauge{}
	}
	return r
}

// Pending implements Metrics.
func (r *Recorder) Pending(queue string) MetricRecorder {
	g, ok := r.pending[queue]
	if !ok {
		g = &Gauge{}
		r.pending[queue] = g
	}
	return g
}

// Incoming implements Metrics.
func (r *Recorder) Incoming(queue, event string, n int) {
	for i, q := range incomingQueues {
		if q == queue {
			r.incomingCounts(event)[i] += n
			return
		}
	}
	r.other[[2]string{queue, event}] += n
}

func (r *Recorder) incomingCounts(event string) *[len(incomingQueues)]int {
	for i := range r.incoming {
		if r.incoming[i].event == event {
			return &r.incoming[i].counts
		}
	}
	r.incoming = append(r.incoming, incomingCount{event: event})
	return &r.incoming[len(r.incoming)-1].counts
}

// PendingPods returns scheduler_pending_pods by queue label.
func (r *Recorder) PendingPods() map[string]int {
	out := make(map[string]int, len(r.pending))
	for l, g := range r.pending {
		out[l] = g.Value
	}
	return out
}

// IncomingPods returns scheduler_queue_incoming_pods_total as queue → event →
// count, leaving out pairs never incremented.
func (r *Recorder) IncomingPods() map[string]map[string]int {
	out := map[string]map[string]int{}
	add := func(queue, event string, v int) {
		if v == 0 {
			return
		}
		m := out[queue]
		if m == nil {
			m = map[string]int{}
			out[queue] = m
		}
		m[event] = v
	}
	for _, c := range r.incoming {
		for i, q := range incomingQueues {
			add(q, c.event, c.counts[i])
		}
	}
	for k, v := range r.other {
		add(k[0], k[1], v)
	}
	return out
}
