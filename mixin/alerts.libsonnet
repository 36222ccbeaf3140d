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
            sum by (%(by)s) (increase(scheduler_pod_scheduled_after_flush_total%(sel)s[%(w)s])) >= %(t)g
          ||| % { by: by, sel: sel(), w: c.scheduledAfterFlushWindow, t: c.scheduledAfterFlushThreshold },
          'for': c.scheduledAfterFlushFor,
          labels: { severity: 'warning' },
          annotations: {
            summary: 'Schedulable pods waited in unschedulablePods until the 5-minute leftover flush: a queueing hint missed their event.',
            description: scheduler + ' bound at least %(t)g pods in %(w)s right after the leftover flush moved them out of unschedulablePods (scheduler_pod_scheduled_after_flush_total, kube-scheduler v1.36+): they were schedulable while parked, and no queueing hint accepted the event that made them so, so each waited up to podMaxInUnschedulablePodsDuration (5m). Normal is 0: a pod no event can help (a nodeSelector no node has, a request no node meets) is moved by the flush every 5 minutes and fails again, which this alert ignores. kube-scheduler v1.34 and v1.35 lack the counter, and there this alert cannot fire. `kubectl schedq explain -A` shows which plugin rejected each parked pod and the events that would move it; look for a plugin (often an out-of-tree one) whose EventsToRegister or queueing hint leaves out the event that freed these pods; `kubectl schedq status` shows the incoming events.' % { t: c.scheduledAfterFlushThreshold, w: c.scheduledAfterFlushWindow },
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
            description: scheduler + ' idles while pods wait out their backoff (1-10 s each by default): with SchedulerPopFromBackoffQ off it does not pop backoffQ early. Turn the gate on (beta, on by default since 1.33) or check why pods keep failing: `kubectl schedq status` shows the BackoffQWaitsWhileActiveQEmpty signal and the gates, `kubectl schedq explain -A` each pod\'s remaining backoff. Normal: with the gate on this never fires; with it off, backoffQ drains within 10 s.',
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
            description: scheduler + ' has attempts ending in an error, not a plugin\'s rejection (a failed binding, an API error, no nodes): those pods cycle through the error backoff (1-10 s), which SchedulerPopFromBackoffQ never pops early. `kubectl schedq explain -A` shows the pods in errorBackoffQ with the error of their last attempt; check admission webhooks and policies on pods/binding and the API server. Normal: error attempts are rare, a few around an API server restart.',
          },
        },
        {
          local gated = 'sum by (%s) (scheduler_pending_pods%s' % [by, sel('queue="gated"')],
          local step = c.gatedPodsGrowthStep,
          local span = util.times(step, c.gatedPodsGrowthSteps),
          // gatedAt(n): gated pods n growth steps ago. The last term: at no
          // release step in the span were there fewer than one step before.
          local gatedAt(n) = if n == 0 then gated + ')' else '%s offset %s)' % [gated, util.times(step, n)],
          alert: 'KubeSchedulerGatedPodsPilingUp',
          expr: std.join('\nand on (%s)\n' % by, [gatedAt(0) + ' >= %d' % c.gatedPodsThreshold] + [
            '(%s > %s)' % [gatedAt(n), gatedAt(n + 1)]
            for n in std.range(0, c.gatedPodsGrowthSteps - 1)
          ] + [
            'max_over_time((%s < bool %s offset %s))[%s:%s]) == 0' % [gated + ')', gated, c.gatedPodsReleaseStep, span, c.gatedPodsReleaseStep],
          ]) + '\n',
          'for': c.gatedPodsFor,
          labels: { severity: 'info' },
          annotations: {
            summary: 'Pods held by scheduling gates keep arriving and none is released.',
            description: scheduler + ' holds at least %(t)d pods with schedulingGates, more at every %(step)s mark of the last %(span)s, and in that span not one left the gated pods (no gate was removed, no gated pod was deleted): whatever removes the gates has stopped while pods keep coming. Normal for a queueing system such as Kueue is a backlog that waits for quota, for hours if need be, or drains; neither fires this. `kubectl schedq explain -A` names each pod\'s gates; check that their controller runs and admits work (for Kueue, its controller manager and `kubectl get workloads -A`); `kubectl schedq status` shows the gated count.' % { t: c.gatedPodsThreshold, step: step, span: span },
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
            waiting: sel('queue=~"%s"' % std.join('|', c.waitingQueues)),
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
            description: scheduler + ' gained at least %d pending pods (activeQ, backoffQ, unschedulablePods; not gated pods, nor v1.37\'s pod-group members waiting for their group) over %s while it schedules at less than %g of the rate it had then: the cluster is full and the autoscaler (if any) is not keeping up, or attempts fail or slow down. Normal is pending pods that come and go. `kubectl schedq status` shows attempts by result and where the pods wait; `kubectl schedq explain -A` why each one waits.' % [c.queueGrowthThreshold, c.queueGrowthWindow, c.queueGrowthRateRatio],
          },
        },
      ],
    }],
  },
}
