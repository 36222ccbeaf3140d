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

    // 1. Pods parked in unschedulablePods until the leftover flush
    // (podMaxInUnschedulablePodsDuration, 5 minutes) moves them: queueing
    // hints missed the event that made them schedulable, or none came.
    // Pods per second moved with event UnschedulableTimeout.
    unschedulableTimeoutRateThreshold: 0,
    // Long enough to span several flushes (one runs every 30 s).
    unschedulableTimeoutFor: '15m',

    // 2. backoffQ holds pods while activeQ is empty and
    // SchedulerPopFromBackoffQ is off: the scheduler idles until backoffs
    // expire.
    backoffQWaitsFor: '5m',

    // 3. Error backoff storm: attempts ending in an error (not a plugin's
    // rejection) per second. Such pods sit in the error backoff, which
    // SchedulerPopFromBackoffQ never pops early.
    errorAttemptsRateThreshold: 0.1,
    errorBackoffFor: '10m',

    // 4. Gated pods piling up: pods held by schedulingGates.
    gatedPodsThreshold: 100,
    gatedPodsFor: '30m',

    // 5. The queue grows while the scheduling rate falls: pods waiting
    // (activeQ + backoffQ + unschedulablePods, not gated) grew by at least
    // queueGrowthThreshold over queueGrowthWindow, and pods are scheduled
    // at less than queueGrowthRateRatio of the rate queueGrowthWindow ago.
    queueGrowthWindow: '30m',
    queueGrowthThreshold: 10,
    queueGrowthRateRatio: 0.5,
    queueGrowthFor: '15m',

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
    ],
    dashboardUID: 'schedq-queue',
    dashboardTags: ['kubernetes-mixin', 'kube-scheduler', 'schedq'],
    // Grafana's refresh interval and default time range.
    dashboardRefresh: '30s',
    dashboardFrom: 'now-1h',
  },
}
