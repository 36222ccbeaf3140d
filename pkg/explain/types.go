// Package explain infers, for each pending pod, where it is in
// kube-scheduler's scheduling queue, why, and when it will next be tried —
// from what is visible outside the scheduler: the pod, its FailedScheduling
// events, the scheduler's queue metrics and its backoff configuration. It is
// pure: values in, values out; the rules (backoff, windows, PopFromBackoffQ,
// the leftover flush, plugins' events) come from pkg/queue.
package explain

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

// Config is the scheduler's queue configuration.
type Config struct {
	PodInitialBackoff         time.Duration
	PodMaxBackoff             time.Duration
	PodMaxInUnschedulablePods time.Duration
}

// DefaultConfig is kube-scheduler's default (1 s, 10 s, 5 min).
func DefaultConfig() Config {
	return Config{
		PodInitialBackoff:         queue.DefaultPodInitialBackoffDuration,
		PodMaxBackoff:             queue.DefaultPodMaxBackoffDuration,
		PodMaxInUnschedulablePods: queue.DefaultPodMaxInUnschedulablePodsDuration,
	}
}

// QueueMetrics is what one scrape of the scheduler tells about its queue.
type QueueMetrics struct {
	// Pending is scheduler_pending_pods by queue label (active, backoff,
	// unschedulable, gated).
	Pending map[string]float64
	// InFlight is scheduler_inflight_events{event="PodPopped"}: the pods
	// popped and not yet done with (scheduled, or back in the queue). The
	// scheduler updates it once a second, so it lags; nil if not reported.
	InFlight *float64
	// PopFromBackoffQ is the SchedulerPopFromBackoffQ gate, nil if the
	// scheduler does not say (kubernetes_feature_enabled missing).
	PopFromBackoffQ *bool
	// Version is the scheduler's gitVersion, if known.
	Version string
	// GenericWorkload is that feature gate, nil if the scheduler does not
	// say: with it, v1.37 queues each pod group as one entity.
	GenericWorkload *bool
	// Attempts is scheduler_schedule_attempts_total by result (scheduled,
	// unschedulable, error), since the scheduler started: with the failures
	// the events show, it tells how many they hide.
	Attempts map[string]float64 `json:",omitempty"`
	// Incoming is scheduler_queue_incoming_pods_total by queue, then
	// event, since the scheduler started.
	Incoming map[string]map[string]float64 `json:",omitempty"`
	// AttemptRate is scheduler_schedule_attempts_total per second between
	// two scrapes RateWindow apart (explain --attempt-rate, or a watch's
	// rounds): the scheduler's pace now. Nil with one scrape.
	AttemptRate *float64      `json:",omitempty"`
	RateWindow  time.Duration `json:",omitempty"`
}

// Input is everything Infer looks at.
type Input struct {
	Now time.Time
	// Pods are the pods to explain.
	Pods []*corev1.Pod
	// PendingPods are all the scheduler's pending pods (the queue metrics are
	// cluster-wide, so placement reasons over all of them); nil means Pods.
	PendingPods []*corev1.Pod
	// Events are FailedScheduling events (core/v1 view), any namespace.
	Events []corev1.Event
	// EventsNamespaced says the events are those of one namespace only
	// (the user may not list them cluster-wide).
	EventsNamespaced bool
	// PodGroups are the PodGroups (scheduling.k8s.io/v1beta1) of the
	// pending pods' groups; nil when they were not read.
	PodGroups []*schedulingv1beta1.PodGroup
	// Nodes are the cluster's nodes; nil when they could not be listed.
	// A node created after a pod's last failure may have moved the pod out
	// of unschedulablePods.
	Nodes []*corev1.Node
	// Metrics is nil when the scheduler's metrics could not be read;
	// MetricsMissing then says why.
	Metrics        *QueueMetrics
	MetricsMissing string
	Config         Config
	// SchedulerName is the profile whose pods are explained; others are
	// reported as handled by another scheduler. Empty: default-scheduler.
	SchedulerName string
	// Profiles are the scheduler names of all the profiles of the
	// scheduler whose metrics were read, when known (its /configz): they
	// share its one queue, so the pods of each are placed in it. Empty:
	// SchedulerName's alone.
	Profiles []string
	// NotServed, when set, says that no kube-scheduler serves
	// SchedulerName (and why): its pods are in no queue explain can see,
	// and no pod is placed.
	NotServed string
	// Version is the scheduler's version, whose queue rules and event names
	// apply; zero: queue.DefaultVersion.
	Version queue.Version
	// VersionSource says where Version came from (shown to the user).
	VersionSource string
}

// version is in.Version, or the default when none was given.
func (in Input) version() queue.Version {
	if in.Version == 0 {
		return queue.DefaultVersion
	}
	return in.Version
}

// State is whether a pod is waiting for the scheduler at all.
type State string

// States.
const (
	StatePending        State = "Pending"
	StateBound          State = "Bound"
	StateDeleting       State = "Deleting"
	StateFinished       State = "Finished"
	StateOtherScheduler State = "OtherScheduler"
)

// Explanation is the answer for one pod. Its JSON shape (namespace, name,
// queue, confidence, attempts, reasons, nextRetry{estimate, earliest,
// latest, triggers}) is stable; fields may be added.
type Explanation struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	State     State  `json:"state"`
	// Queue is where the pod most likely is; JSON gives it in upstream's
	// words (activeQ, backoffQ, errorBackoffQ, unschedulablePods, gated,
	// inFlight) or unknown, see QueueName; empty when the pod is not pending.
	Queue queue.Location `json:"queue,omitempty"`
	// Confidence is the probability the evidence gives Queue, 0..1.
	Confidence float64 `json:"confidence"`
	// Alternatives are the other places the evidence allows.
	Alternatives []Alternative `json:"alternatives,omitempty"`
	// Attempts is the number of scheduling attempts that ended (the pods'
	// failures), as AttemptsCount says: counted from the events, a lower
	// bound, or an estimate.
	Attempts int `json:"attempts"`
	// AttemptsCount says how Attempts was found; nil: counted.
	AttemptsCount *AttemptsCount `json:"attemptsCount,omitempty"`
	// Summary is one human sentence.
	Summary string `json:"summary"`
	// Reasons say why the pod is not scheduled.
	Reasons []string `json:"reasons"`
	// Plugins are the plugins that rejected it (parsed from the message).
	Plugins     []string     `json:"plugins,omitempty"`
	NodeReasons []NodeReason `json:"nodeReasons,omitempty"`
	Gates       []string     `json:"gates,omitempty"`
	LastFailure *Failure     `json:"lastFailure,omitempty"`
	NextRetry   *NextRetry   `json:"nextRetry,omitempty"`
	// Evidence lists what the answer rests on.
	Evidence []string `json:"evidence"`
	Priority int32    `json:"priority"`
	// PodGroup is the member's group, when the scheduler queues pods by
	// group (v1.37 with GenericWorkload).
	PodGroup *PodGroup `json:"podGroup,omitempty"`
}

// How Attempts was found.
const (
	// AttemptsCounted: every failure is in the events.
	AttemptsCounted = "counted"
	// AttemptsAtLeast: the events hide later failures and nothing tells
	// how many; Attempts is what they show.
	AttemptsAtLeast = "atLeast"
	// AttemptsEstimated: the events hide later failures, and Attempts
	// estimates them from what else is visible, within [Min, Max].
	AttemptsEstimated = "estimated"
)

// AttemptsCount is how the attempts were found, and their bounds.
type AttemptsCount struct {
	Kind string `json:"kind"`
	// Min is the attempts the events show; Max, when known, the most
	// there can have been.
	Min int  `json:"min"`
	Max *int `json:"max,omitempty"`
	// Basis says what an estimate or a bound rests on.
	Basis string `json:"basis,omitempty"`
}

// FormatAttempts writes e's attempts as the table shows them: 3 when
// counted, ≥3 for a lower bound, ~37 for an estimate.
func FormatAttempts(e Explanation) string {
	switch {
	case e.AttemptsCount == nil || e.AttemptsCount.Kind == AttemptsCounted:
		return strconv.Itoa(e.Attempts)
	case e.AttemptsCount.Kind == AttemptsAtLeast:
		return "≥" + strconv.Itoa(e.Attempts)
	default:
		return "~" + strconv.Itoa(e.Attempts)
	}
}

// Alternative is another place the pod may be.
type Alternative struct {
	Queue       queue.Location `json:"queue"`
	Probability float64        `json:"probability"`
}

// Failure is the pod's last scheduling failure as far as it is visible.
type Failure struct {
	// Kind is "unschedulable" (plugins rejected it) or "error".
	Kind    string    `json:"kind"`
	Message string    `json:"message"`
	Time    time.Time `json:"time"`
	// FirstTime is the first failure of the event series.
	FirstTime time.Time `json:"firstTime"`
	// Count is the number of failures the events show (lagging: the event
	// series count is only refreshed every 30 minutes).
	Count int `json:"count"`
}

// NextRetry is when the scheduler will next try the pod.
type NextRetry struct {
	// Estimate is when the next attempt is most likely, between Earliest
	// and Latest; nil when no time can be named (a pod waiting for an
	// event, or for its gates).
	Estimate *time.Time `json:"estimate,omitempty"`
	// Earliest and Latest bound the next attempt; nil Earliest means "when
	// one of Triggers happens", nil Latest means no bound is known.
	Earliest *time.Time `json:"earliest,omitempty"`
	Latest   *time.Time `json:"latest,omitempty"`
	// Triggers are the cluster events that would requeue the pod.
	Triggers []string `json:"triggers,omitempty"`
	// PopFromBackoffQ says the pod may be taken before its backoff ends,
	// because activeQ is empty and the gate is on.
	PopFromBackoffQ bool   `json:"popFromBackoffQ,omitempty"`
	Note            string `json:"note,omitempty"`
}
