// kube-scheduler's scheduling queue as a monitoring mixin: alerts,
// recording rules and a dashboard for the conditions `kubectl schedq status`
// reports. Render with `make mixin`.
(import 'config.libsonnet') +
(import 'alerts.libsonnet') +
(import 'rules.libsonnet') +
(import 'dashboards.libsonnet')
