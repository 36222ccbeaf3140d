// `jsonnet -S -m rendered render.jsonnet`: every file `make mixin` commits,
// as the text of each. The PrometheusRule carries alerts and recording
// rules for prometheus-operator; the two rules files are for Prometheus'
// rule_files.
local mixin = import 'mixin.libsonnet';
local yaml(x) = std.manifestYamlDoc(x, indent_array_in_object=true, quote_keys=false) + '\n';

{
  'prometheus_alerts.yaml': yaml(mixin.prometheusAlerts),
  'prometheus_rules.yaml': yaml(mixin.prometheusRules),
  'prometheusrule.yaml': yaml({
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: {
      name: 'schedq-queue',
      namespace: 'monitoring',
      labels: { 'app.kubernetes.io/name': 'schedq-mixin' },
    },
    spec: { groups: mixin.prometheusRules.groups + mixin.prometheusAlerts.groups },
  }),
} + {
  ['dashboards/' + name]: std.manifestJsonEx(mixin.grafanaDashboards[name], '  ') + '\n'
  for name in std.objectFields(mixin.grafanaDashboards)
}
