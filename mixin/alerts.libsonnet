local util = import 'lib/util.libsonnet';

{
  prometheusAlerts+:: {
    local c = $._config,
    local sel(extra='') = util.sel(c, extra),
    local by = util.by(c),
    local scheduler = 'Scheduler {{ $labels.instance }}',

    groups+: [{
      name: 'schedq-queue',
      rules: [
        {
          alert: 'KubeSchedulerPodsParkedUntilFlush',
          expr: |||
            sum by (%(by)s) (rate(scheduler_queue_incoming_pods_total%(sel)s[%(w)s])) > %(t)g
          ||| % { by: by, sel: sel('event="UnschedulableTimeout"'), w: c.rateInterval, t: c.unschedulableTimeoutRateThreshold },
          'for': c.unschedulableTimeoutFor,
          labels: { severity: 'warning' },
          annotations: {
            summary: 'Pods wait in unschedulablePods until the 5-minute leftover flush moves them.',
            description: scheduler + ' keeps moving pods out of unschedulablePods with event UnschedulableTimeout: no cluster event its queueing hints accept came for them within podMaxInUnschedulablePodsDuration (5m). If scheduler_pod_scheduled_after_flush_total grows too, those pods were schedulable all along and a queueing hint missed their event. `kubectl schedq explain -A` lists the parked pods, the plugin that rejected each and the events that would move it; `kubectl schedq status` shows the incoming events.',
          },
        },
        {
          alert: 'KubeSchedulerBackoffQWaitsWhileActiveQEmpty',
          expr: |||
            sum by (%(by)s) (scheduler_pending_pods%(backoff)s) > 0
            and on (%(by)s)
            sum by (%(by)s) (scheduler_pending_pods%(active)s) == 0
            and on (%(by)s)
            max by (%(by)s) (kubernetes_feature_enabled%(gate)s) == 0
          ||| % { by: by, backoff: sel('queue="backoff"'), active: sel('queue="active"'), gate: sel('name="SchedulerPopFromBackoffQ"') },
          'for': c.backoffQWaitsFor,
          labels: { severity: 'warning' },
          annotations: {
            summary: 'backoffQ holds pods while activeQ is empty and SchedulerPopFromBackoffQ is off.',
            description: scheduler + ' idles while pods wait out their backoff (1-10 s each by default): with SchedulerPopFromBackoffQ off it does not pop backoffQ early. Turn the gate on (beta, on by default since 1.33) or check why pods keep failing: `kubectl schedq status` shows the BackoffQWaitsWhileActiveQEmpty signal and the gates, `kubectl schedq explain -A` each pod\'s remaining backoff.',
          },
        },
        {
          alert: 'KubeSchedulerErrorBackoffStorm',
          expr: |||
            sum by (%(by)s) (rate(scheduler_schedule_attempts_total%(sel)s[%(w)s])) > %(t)g
          ||| % { by: by, sel: sel('result="error"'), w: c.rateInterval, t: c.errorAttemptsRateThreshold },
          'for': c.errorBackoffFor,
          labels: { severity: 'warning' },
          annotations: {
            summary: 'Scheduling attempts keep ending in errors.',
            description: scheduler + ' has attempts ending in an error, not a plugin\'s rejection (a failed binding, an API error, no nodes): those pods cycle through the error backoff (1-10 s), which SchedulerPopFromBackoffQ never pops early. `kubectl schedq explain -A` shows the pods in errorBackoffQ with the error of their last attempt; check admission webhooks and policies on pods/binding and the API server.',
          },
        },
        {
          alert: 'KubeSchedulerGatedPodsPilingUp',
          expr: |||
            sum by (%(by)s) (scheduler_pending_pods%(sel)s) > %(t)g
            and on (%(by)s)
            sum by (%(by)s) (delta(scheduler_pending_pods%(sel)s[%(w)s])) >= 0
          ||| % { by: by, sel: sel('queue="gated"'), w: c.rateInterval, t: c.gatedPodsThreshold },
          'for': c.gatedPodsFor,
          labels: { severity: 'info' },
          annotations: {
            summary: 'Pods held by scheduling gates pile up.',
            description: scheduler + ' holds more than %d pods with schedulingGates and their number does not go down: the scheduler will not try them until the controller that owns each gate removes it. `kubectl schedq explain -A` names the gates; check that their controllers (a queueing or admission system such as Kueue) run.' % c.gatedPodsThreshold,
          },
        },
        {
          alert: 'KubeSchedulerQueueGrowingWhileSchedulingSlows',
          expr: |||
            sum by (%(by)s) (delta(scheduler_pending_pods%(waiting)s[%(gw)s])) >= %(gt)s
            and on (%(by)s)
            (
              sum by (%(by)s) (rate(scheduler_schedule_attempts_total%(scheduled)s[%(w)s]))
              <
              %(ratio)s * sum by (%(by)s) (rate(scheduler_schedule_attempts_total%(scheduled)s[%(w)s] offset %(gw)s))
            )
          ||| % {
            by: by,
            waiting: sel('queue!="gated"'),
            scheduled: sel('result="scheduled"'),
            w: c.rateInterval,
            gw: c.queueGrowthWindow,
            gt: c.queueGrowthThreshold,
            ratio: c.queueGrowthRateRatio,
          },
          'for': c.queueGrowthFor,
          labels: { severity: 'warning' },
          annotations: {
            summary: 'Pending pods grow while the scheduler schedules fewer of them.',
            description: scheduler + ' gained at least %d pending pods (activeQ, backoffQ, unschedulablePods) over %s while it schedules at less than %g of the rate it had then: the cluster is full, or attempts fail or slow down. `kubectl schedq status` shows attempts by result and where the pods wait; `kubectl schedq explain -A` why each one waits.' % [c.queueGrowthThreshold, c.queueGrowthWindow, c.queueGrowthRateRatio],
          },
        },
      ],
    }],
  },
}
