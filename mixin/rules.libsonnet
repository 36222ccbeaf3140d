local util = import 'lib/util.libsonnet';

{
  prometheusRules+:: {
    local c = $._config,
    local sel(extra='') = util.sel(c, extra),
    local by(extra=[]) = util.by(c, extra),
    local rate = 'rate' + c.rateInterval,

    groups+: [{
      name: 'schedq-queue.rules',
      rules: [
        {
          record: 'queue:scheduler_pending_pods:sum',
          expr: 'sum by (%s) (scheduler_pending_pods%s)' % [by(['queue']), sel()],
        },
        {
          record: 'queue_event:scheduler_queue_incoming_pods:%s' % rate,
          expr: 'sum by (%s) (rate(scheduler_queue_incoming_pods_total%s[%s]))' % [by(['queue', 'event']), sel(), c.rateInterval],
        },
        // New pods entering the queue, by the queue they enter. The event
        // is UnschedulablePodAdd on v1.34–v1.36 and UnscheduledPodAdd from
        // v1.37; both are matched, so the rule holds on every version.
        {
          record: 'queue:scheduler_queue_incoming_pods_added:%s' % rate,
          expr: 'sum by (%s) (rate(scheduler_queue_incoming_pods_total%s[%s]))' % [by(['queue']), sel('event=~"%s"' % std.join('|', c.podAddEvents)), c.rateInterval],
        },
        {
          record: 'result:scheduler_schedule_attempts:%s' % rate,
          expr: 'sum by (%s) (rate(scheduler_schedule_attempts_total%s[%s]))' % [by(['result']), sel(), c.rateInterval],
        },
      ] + [
        {
          record: 'quantile:scheduler_pod_scheduling_sli_duration_seconds:histogram_quantile',
          expr: 'histogram_quantile(%g, sum by (%s) (rate(scheduler_pod_scheduling_sli_duration_seconds_bucket%s[%s])))' % [q, by(['le']), sel(), c.rateInterval],
          labels: { quantile: '%g' % q },
        }
        for q in [0.5, 0.9, 0.99]
      ],
    }],
  },
}
