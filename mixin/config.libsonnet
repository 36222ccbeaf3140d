// Selectors, thresholds and durations of the mixin. Override any of them:
//   (import 'mixin.libsonnet') + { _config+:: { schedulerSelector: 'job="scheduler"' } }
{
  _config+:: {
    // Selects kube-scheduler's series (kubernetes-mixin uses the same).
    schedulerSelector: 'job="kube-scheduler"',
    // The label telling clusters apart in a multi-cluster Prometheus;
    // alerts and rules keep it, with the scheduler's instance.
    clusterLabel: 'cluster',
    // Window of every rate() in the alerts and recording rules; the
    // recording rules carry it in their names (rate5m).
    rateInterval: '5m',

    // 1. Pods scheduled right after the leftover flush
    // (podMaxInUnschedulablePodsDuration, 5 minutes) moved them out of
    // unschedulablePods: they were schedulable while parked, and a queueing
    // hint missed the event that made them so
    // (scheduler_pod_scheduled_after_flush_total, kube-scheduler v1.36+).
    // The flush's own moves (event UnschedulableTimeout) are the normal fate
    // of any pod no event can help and are not alerted on.
    // At least this many such pods over the window (one alone may be a
    // coincidence: a node freed in the second between flush and attempt):
    scheduledAfterFlushThreshold: 3,
    scheduledAfterFlushWindow: '1h',
    scheduledAfterFlushFor: '5m',

    // 2. backoffQ holds pods while activeQ is empty and
    // SchedulerPopFromBackoffQ is off: the scheduler idles until backoffs
    // expire.
    backoffQWaitsFor: '5m',

    // 3. Error backoff storm: attempts ending in an error (not a plugin's
    // rejection) per second. Such pods sit in the error backoff, which
    // SchedulerPopFromBackoffQ never pops early.
    errorAttemptsRateThreshold: 0.1,
    errorBackoffFor: '10m',

    // 4. Gated pods piling up while nothing releases them: at least
    // gatedPodsThreshold pods held by schedulingGates, more of them at each
    // of the last gatedPodsGrowthSteps marks gatedPodsGrowthStep apart, and
    // not one fewer than gatedPodsReleaseStep earlier anywhere in that span
    // (no gate was removed, no gated pod deleted). A backlog that waits for
    // quota (Kueue), however long, or one that drains stays quiet.
    gatedPodsThreshold: 100,
    gatedPodsGrowthStep: '20m',
    gatedPodsGrowthSteps: 3,
    gatedPodsReleaseStep: '1m',
    gatedPodsFor: '15m',

    // 5. The queue grows while the scheduling rate falls: pods waiting
    // (activeQ + backoffQ + unschedulablePods; not gated, nor v1.37's
    // pod-group members waiting for their group, incomplete and pending)
    // grew by at least
    // queueGrowthThreshold over queueGrowthWindow, and pods are scheduled
    // at less than queueGrowthRateRatio of the rate queueGrowthWindow ago.
    queueGrowthWindow: '30m',
    queueGrowthThreshold: 10,
    queueGrowthRateRatio: 0.5,
    queueGrowthFor: '15m',

    // Queues whose pods wait for the scheduler (every version): v1.37 adds
    // incomplete and pending, pod-group members that wait for the rest of
    // their group, not for the scheduler.
    waitingQueues: ['active', 'backoff', 'unschedulable'],
    // The incoming event of a new pod: UnschedulablePodAdd on v1.34–v1.36,
    // UnscheduledPodAdd from v1.37.
    podAddEvents: ['UnschedulablePodAdd', 'UnscheduledPodAdd'],

    // The dashboard. queueGates are the feature gates that change the
    // queue, shown with their state.
    queueGates: [
      'SchedulerPopFromBackoffQ',
      'SchedulerQueueingHints',
      'SchedulerAsyncAPICalls',
      'SchedulerAsyncPreemption',
      'GenericWorkload',
      'GangScheduling',
      'OpportunisticBatching',
      'SchedulerPreQueueingHints',
    ],
    dashboardUID: 'schedq-queue',
    dashboardTags: ['kubernetes-mixin', 'kube-scheduler', 'schedq'],
    // Grafana's refresh interval and default time range.
    dashboardRefresh: '30s',
    dashboardFrom: 'now-1h',
  },
}
