package metricscrape

import "github.com/kubectl-schedq/kubectl-schedq/pkg/queue"

// The series and label names kubectl-schedq reads from kube-scheduler
// (k8s.io/kubernetes v1.34–v1.37, pkg/scheduler/metrics/metrics.go and
// component-base). The queue's own series, queue labels and event labels are
// spelled once, in pkg/queue, and only referred to here; this file spells
// the rest and is the only place in pkg/metricscrape that names any of them.

// Series names.
const (
	// PendingPodsMetric is a gauge per sub-queue (label queue).
	PendingPodsMetric = queue.MetricPendingPods
	// QueueIncomingPodsMetric counts moves into a sub-queue (labels queue, event).
	QueueIncomingPodsMetric = queue.MetricQueueIncomingPods
	// ScheduleAttemptsMetric counts attempts by result (labels result, profile).
	ScheduleAttemptsMetric = queue.MetricScheduleAttempts
	// PodSchedulingSLIDurationMetric is the pod scheduling SLI histogram
	// (label attempts).
	PodSchedulingSLIDurationMetric = queue.MetricPodSchedulingSLI
	// PodSchedulingAttemptsMetric is the attempts-per-scheduled-pod histogram.
	PodSchedulingAttemptsMetric = queue.MetricPodSchedulingAttempts
	// UnschedulablePodsMetric counts pods whose last failure involved a plugin
	// (labels plugin, profile), wherever the pod sits now.
	UnschedulablePodsMetric = queue.MetricUnschedulablePods
	// PodScheduledAfterFlushMetric counts pods bound after the leftover flush
	// (new in 1.36).
	PodScheduledAfterFlushMetric = "scheduler_pod_scheduled_after_flush_total"
	// QueuedEntitiesMetric is v1.37's gauge of queued entities (labels
	// queue, type: pod or a pod group's kind).
	QueuedEntitiesMetric = queue.MetricQueuedEntities
	// InFlightEventsMetric is the number of events tracked for in-flight pods
	// (label event; event="PodPopped" counts the in-flight pods themselves).
	InFlightEventsMetric = "scheduler_inflight_events"
	// FeatureEnabledMetric is component-base's gate gauge (labels name, stage).
	FeatureEnabledMetric = "kubernetes_feature_enabled"
	// BuildInfoMetric is component-base's version gauge.
	BuildInfoMetric = "kubernetes_build_info"
	// LeaderElectionMasterStatusMetric is 1 on the leader (label name).
	LeaderElectionMasterStatusMetric = "leader_election_master_status"
	// InFlightPodPoppedEvent is the scheduler_inflight_events{event} value
	// that counts the in-flight pods themselves.
	InFlightPodPoppedEvent = "PodPopped"

	// histogramBucketSuffix and friends expand a histogram into series.
	histogramBucketSuffix = "_bucket"
	histogramSumSuffix    = "_sum"
	histogramCountSuffix  = "_count"
)

// Label names.
const (
	QueueLabel    = "queue"
	EventLabel    = "event"
	ResultLabel   = "result"
	ProfileLabel  = "profile"
	AttemptsLabel = "attempts"
	PluginLabel   = "plugin"
	TypeLabel     = "type"
	NameLabel     = "name"
	StageLabel    = "stage"
	// Labels of kubernetes_build_info.
	GitVersionLabel = "git_version"
	GitCommitLabel  = "git_commit"
	GoVersionLabel  = "go_version"
	PlatformLabel   = "platform"
	// leaseNameLabel is leader_election_master_status's lease name.
	leaseNameLabel = "name"
)

// Values of scheduler_pending_pods{queue} (scheduler_queue_incoming_pods_total
// uses the first three; gated pods are counted there as unschedulable).
const (
	QueueActive        = queue.LabelActive
	QueueBackoff       = queue.LabelBackoff
	QueueUnschedulable = queue.LabelUnschedulable
	QueueGated         = queue.LabelGated
	QueueIncomplete    = queue.LabelIncomplete
	QueuePending       = queue.LabelPending
)

// Queues lists the queue values every modelled version reports, in the
// order the scheduler moves pods through them; KnownQueues adds v1.37's
// pod-group queues (incomplete, pending).
var (
	Queues      = queue.PendingLabels[:]
	KnownQueues = queue.PendingLabelsOf(queue.Versions[len(queue.Versions)-1])
)

// Values of scheduler_schedule_attempts_total{result}.
const (
	ResultScheduled     = "scheduled"
	ResultUnschedulable = "unschedulable"
	ResultError         = "error"
)

// Results lists the attempt results in display order.
var Results = []string{ResultScheduled, ResultUnschedulable, ResultError}

// Event labels of scheduler_queue_incoming_pods_total that the status signals
// read. The full set comes from cluster events (NodeAdd, AssignedPodDelete, …).
const (
	EventPopFromBackoffQ        = queue.PopFromBackoffQ
	EventBackoffComplete        = queue.BackoffComplete
	EventScheduleAttemptFailure = queue.ScheduleAttemptFailure
	EventUnschedulableTimeout   = queue.UnschedulableTimeout
	EventForceActivate          = queue.ForceActivate
)

// Feature gates that change the queue's behaviour (queue-spec §3.12).
const (
	GateSchedulerPopFromBackoffQ = "SchedulerPopFromBackoffQ"
	GateSchedulerQueueingHints   = "SchedulerQueueingHints"
	GateSchedulerAsyncAPICalls   = "SchedulerAsyncAPICalls"
	GateSchedulerAsyncPreemption = "SchedulerAsyncPreemption"
	GateGenericWorkload          = "GenericWorkload"
	GateGangScheduling           = "GangScheduling"
	GateOpportunisticBatching    = "OpportunisticBatching"
	// GateSchedulerPreQueueingHints is v1.37's (alpha): a plugin's
	// pre-queueing hint narrows the pods an event is offered to.
	GateSchedulerPreQueueingHints = "SchedulerPreQueueingHints"
)

// QueueGates lists those gates in display order.
var QueueGates = []string{
	GateSchedulerPopFromBackoffQ,
	GateSchedulerQueueingHints,
	GateSchedulerAsyncAPICalls,
	GateSchedulerAsyncPreemption,
	GateGenericWorkload,
	GateGangScheduling,
	GateOpportunisticBatching,
	GateSchedulerPreQueueingHints,
}

// SchedulerLeaseName is the Lease kube-scheduler elects its leader with,
// in SchedulerNamespace.
const (
	SchedulerNamespace = "kube-system"
	SchedulerLeaseName = "kube-scheduler"
	// SchedulerSecurePort is kube-scheduler's HTTPS port.
	SchedulerSecurePort = 10259
	// MetricsPath is where kube-scheduler serves its metrics.
	MetricsPath = "/metrics"
)

// wantedFamilies are the metric families a Snapshot is built from.
var wantedFamilies = map[string]bool{
	PendingPodsMetric:                true,
	QueueIncomingPodsMetric:          true,
	ScheduleAttemptsMetric:           true,
	PodSchedulingSLIDurationMetric:   true,
	PodSchedulingAttemptsMetric:      true,
	UnschedulablePodsMetric:          true,
	PodScheduledAfterFlushMetric:     true,
	QueuedEntitiesMetric:             true,
	InFlightEventsMetric:             true,
	FeatureEnabledMetric:             true,
	BuildInfoMetric:                  true,
	LeaderElectionMasterStatusMetric: true,
}
