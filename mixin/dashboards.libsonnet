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
    local timeseries(id, title, description, unit, targets, gridPos, stack=false) = {
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
        },
        overrides: [],
      },
      options: { legend: { displayMode: 'table', placement: 'right', calcs: ['lastNotNull', 'max'] }, tooltip: { mode: 'multi', sort: 'desc' } },
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
      current: {},
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
            current: {},
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
          'scheduler_pending_pods: activeQ (active), backoffQ (backoff), unschedulablePods (unschedulable) and pods held by schedulingGates (gated).',
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
          'scheduler_queue_incoming_pods_total per second by event and destination queue. PopFromBackoffQ: popped from backoffQ early while activeQ was empty (SchedulerPopFromBackoffQ on). BackoffComplete: backoff expired. ScheduleAttemptFailure: an attempt failed. UnschedulableTimeout: the 5-minute leftover flush moved a parked pod. Other events are the cluster events the queueing hints accepted.',
          'ops',
          [target('sum by (event, queue) (queue_event:scheduler_queue_incoming_pods:%s{%s})' % [rate, vars], '{{event}} → {{queue}}')],
          { x: 0, y: 8, w: 24, h: 9 },
        ),
        timeseries(
          4,
          'Pod scheduling SLI latency',
          'scheduler_pod_scheduling_sli_duration_seconds: from the pod\'s first entry into activeQ to bound, over all its attempts, excluding time spent gated.',
          's',
          [target('max by (quantile) (quantile:scheduler_pod_scheduling_sli_duration_seconds:histogram_quantile{%s})' % vars, 'p{{quantile}}')],
          { x: 0, y: 17, w: 12, h: 8 },
        ),
        timeseries(
          5,
          'Leftover flush',
          'Pods moved out of unschedulablePods by the 5-minute leftover flush (UnschedulableTimeout), and pods bound after it (scheduler_pod_scheduled_after_flush_total): the latter were schedulable all along, and a queueing hint missed their event.',
          'ops',
          [
            target('sum(queue_event:scheduler_queue_incoming_pods:%s{event="UnschedulableTimeout", %s})' % [rate, vars], 'moved by the flush'),
            target('sum(rate(scheduler_pod_scheduled_after_flush_total{%s, %s}[$__rate_interval]))' % [c.schedulerSelector, vars], 'scheduled after the flush'),
          ],
          { x: 12, y: 17, w: 12, h: 8 },
        ),
        {
          id: 6,
          type: 'table',
          title: 'Feature gates in force',
          description: 'kubernetes_feature_enabled for the gates that change the queue (1 on, 0 off).',
          datasource: ds,
          gridPos: { x: 0, y: 25, w: 24, h: 7 },
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
          options: { showHeader: true },
        },
      ],
    },
  },
}
