// The queue dashboard, as plain Grafana JSON (schemaVersion 39): no
// grafonnet, so the mixin renders with jsonnet alone.
local util = import 'lib/util.libsonnet';

{
  grafanaDashboards+:: {
    local c = $._config,
    local rate = 'rate' + c.rateInterval,
    // The dashboard's variables, as a selector.
    local vars = '%s="$cluster", instance=~"$instance"' % c.clusterLabel,
    local ds = { type: 'prometheus', uid: '${datasource}' },

    local target(expr, legend, instant=false) = {
      datasource: ds,
      expr: expr,
      legendFormat: legend,
      refId: 'A',
      [if instant then 'instant']: true,
      [if instant then 'range']: false,
    },
    // noValue is what the panel says instead of Grafana's bare "No data",
    // for series that some kube-scheduler versions lack.
    local timeseries(id, title, description, unit, targets, gridPos, stack=false, noValue=null) = {
      id: id,
      type: 'timeseries',
      title: title,
      description: description,
      datasource: ds,
      gridPos: gridPos,
      targets: [t { refId: std.char(65 + i) } for i in std.range(0, std.length(targets) - 1) for t in [targets[i]]],
      fieldConfig: {
        defaults: {
          unit: unit,
          min: 0,
          custom: { drawStyle: 'line', lineWidth: 1, fillOpacity: if stack then 20 else 0, stacking: { mode: if stack then 'normal' else 'none' } },
          [if noValue != null then 'noValue']: noValue,
        },
        overrides: [],
      },
      options: { legend: { showLegend: true, displayMode: 'table', placement: 'right', calcs: ['lastNotNull', 'max'] }, tooltip: { mode: 'multi', sort: 'desc' } },
    },
    local variable(name, label, query, includeAll=false) = {
      name: name,
      label: label,
      type: 'query',
      datasource: ds,
      query: { query: query, refId: name },
      definition: query,
      refresh: 2,
      sort: 1,
      includeAll: includeAll,
      multi: includeAll,
      [if includeAll then 'allValue']: '.+',
      // Grafana's schema requires a current value; Grafana replaces it with
      // the first value it finds (or All) on load.
      current: if includeAll then { text: 'All', value: '$__all' } else { text: '', value: '' },
    },

    'schedq-queue.json': {
      uid: c.dashboardUID,
      title: 'Kubernetes / Scheduler / Queue',
      description: "kube-scheduler's scheduling queue: activeQ, backoffQ, unschedulablePods and gated pods, what moves pods between them, attempts and the scheduling SLI.",
      tags: c.dashboardTags,
      editable: true,
      graphTooltip: 1,
      refresh: c.dashboardRefresh,
      schemaVersion: 39,
      time: { from: c.dashboardFrom, to: 'now' },
      timezone: 'utc',
      templating: {
        list: [
          {
            name: 'datasource',
            label: 'Data source',
            type: 'datasource',
            query: 'prometheus',
            current: { text: 'default', value: 'default' },
            hide: 0,
          },
          variable('cluster', 'cluster', 'label_values(scheduler_pending_pods{%s}, %s)' % [c.schedulerSelector, c.clusterLabel]) { hide: 2 },
          variable('instance', 'scheduler', 'label_values(scheduler_pending_pods{%s, %s="$cluster"}, instance)' % [c.schedulerSelector, c.clusterLabel], includeAll=true),
        ],
      },
      annotations: { list: [] },
      links: [],
      panels: [
        timeseries(
          1,
          'Pending pods per queue',
          'scheduler_pending_pods: activeQ (active), backoffQ (backoff), unschedulablePods (unschedulable) and pods held by schedulingGates (gated); from kube-scheduler v1.37 also pod-group members waiting for the rest of their group (incomplete) and members of a complete group not yet queued (pending).',
          'short',
          [target('sum by (queue) (queue:scheduler_pending_pods:sum{%s})' % vars, '{{queue}}')],
          { x: 0, y: 0, w: 12, h: 8 },
          stack=true,
        ),
        timeseries(
          2,
          'Scheduling attempts by result',
          'scheduler_schedule_attempts_total per second: scheduled, unschedulable (a plugin rejected the pod) and error (the error backoff follows).',
          'ops',
          [target('sum by (result) (result:scheduler_schedule_attempts:%s{%s})' % [rate, vars], '{{result}}')],
          { x: 12, y: 0, w: 12, h: 8 },
        ),
        timeseries(
          3,
          'Pods entering a queue, by event',
          'scheduler_queue_incoming_pods_total per second by event and destination queue. PopFromBackoffQ: popped from backoffQ early while activeQ was empty (SchedulerPopFromBackoffQ on). BackoffComplete: backoff expired. ScheduleAttemptFailure: an attempt failed. UnschedulableTimeout: the 5-minute leftover flush moved a parked pod (from v1.37 it also re-checks gated pods). A new pod is UnschedulablePodAdd on v1.34-v1.36 and UnscheduledPodAdd from v1.37; a pod\'s own updates UnschedulablePod… before v1.37, TargetPod… from v1.37. Other events are the cluster events the queueing hints accepted.',
          'ops',
          [target('sum by (event, queue) (queue_event:scheduler_queue_incoming_pods:%s{%s})' % [rate, vars], '{{event}} → {{queue}}')],
          { x: 0, y: 8, w: 16, h: 9 },
        ),
        timeseries(
          7,
          'New pods entering the queue',
          'New pods per second by the queue they enter (activeQ, or unschedulablePods when gated): event UnschedulablePodAdd on v1.34-v1.36, UnscheduledPodAdd from v1.37, both counted.',
          'ops',
          [target('sum by (queue) (queue:scheduler_queue_incoming_pods_added:%s{%s})' % [rate, vars], '{{queue}}')],
          { x: 16, y: 8, w: 8, h: 9 },
        ),
        timeseries(
          4,
          'Pod scheduling SLI latency',
          'scheduler_pod_scheduling_sli_duration_seconds: from the pod\'s first entry into activeQ to bound, over all its attempts, excluding time spent gated.',
          's',
          [target('max by (quantile) (quantile:scheduler_pod_scheduling_sli_duration_seconds:histogram_quantile{%s})' % vars, 'p{{quantile}}')],
          { x: 0, y: 17, w: 8, h: 8 },
        ),
        timeseries(
          5,
          'Leftover flush: pods moved',
          'Pods moved out of unschedulablePods by the 5-minute leftover flush (UnschedulableTimeout). Pods no event can help are moved every 5 minutes and fail again: normal. From v1.37 the flush also re-checks gated pods. A scheduler serves the event\'s series only from its first flush on; until then the panel shows 0.',
          'ops',
          // 0 while the scheduler is scraped but has flushed nothing yet (no
          // UnschedulableTimeout series), rather than "No data".
          [target('sum(queue_event:scheduler_queue_incoming_pods:%s{event="UnschedulableTimeout", %s}) or (0 * sum(queue:scheduler_pending_pods:sum{%s}))' % [rate, vars, vars], 'moved by the flush')],
          { x: 8, y: 17, w: 8, h: 8 },
        ),
        timeseries(
          8,
          'Pods bound right after the flush',
          'scheduler_pod_scheduled_after_flush_total per second (kube-scheduler v1.36+): pods bound in the attempt right after the leftover flush moved them. They were schedulable while parked and a queueing hint missed their event (KubeSchedulerPodsParkedUntilFlush). Normal is 0.',
          'ops',
          [target('sum(rate(scheduler_pod_scheduled_after_flush_total{%s, %s}[$__rate_interval]))' % [c.schedulerSelector, vars], 'bound after the flush')],
          { x: 16, y: 17, w: 8, h: 8 },
          noValue='No data: scheduler_pod_scheduled_after_flush_total exists from kube-scheduler v1.36',
        ),
        timeseries(
          9,
          'Queued entities (pods and pod groups)',
          'scheduler_queued_entities (kube-scheduler v1.37+): what each queue holds, counting a pod group as one entity (type podgroup) beside single pods (type pod).',
          'short',
          [target('sum by (queue, type) (scheduler_queued_entities{%s, %s})' % [c.schedulerSelector, vars], '{{queue}} {{type}}')],
          { x: 0, y: 25, w: 12, h: 8 },
          stack=true,
          noValue='No data: scheduler_queued_entities exists from kube-scheduler v1.37',
        ),
        timeseries(
          10,
          'Entities entering a queue, by event',
          'scheduler_queue_incoming_entities_total per second (kube-scheduler v1.37+) by event, destination queue and type (pod or podgroup).',
          'ops',
          [target('sum by (event, queue, type) (rate(scheduler_queue_incoming_entities_total{%s, %s}[$__rate_interval]))' % [c.schedulerSelector, vars], '{{event}} → {{queue}} ({{type}})')],
          { x: 12, y: 25, w: 12, h: 8 },
          noValue='No data: scheduler_queue_incoming_entities_total exists from kube-scheduler v1.37',
        ),
        {
          id: 6,
          type: 'table',
          title: 'Feature gates in force',
          description: 'kubernetes_feature_enabled for the gates that change the queue (1 on, 0 off). SchedulerQueueingHints and GangScheduling are gone from v1.37; SchedulerPreQueueingHints comes with v1.37.',
          datasource: ds,
          gridPos: { x: 0, y: 33, w: 24, h: 7 },
          targets: [target(
            'max by (instance, name, stage) (kubernetes_feature_enabled{%s, %s, name=~"%s"})' % [c.schedulerSelector, vars, std.join('|', c.queueGates)],
            '',
            instant=true,
          ) { format: 'table' }],
          transformations: [{ id: 'organize', options: { excludeByName: { Time: true } } }],
          fieldConfig: {
            defaults: { mappings: [{ type: 'value', options: { '0': { text: 'off' }, '1': { text: 'on' } } }] },
            overrides: [],
          },
          options: { showHeader: true, frameIndex: 0 },
        },
      ],
    },
  },
}
