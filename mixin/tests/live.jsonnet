// The alerts as hack/test-prometheus.sh loads them into a real Prometheus
// that scrapes the embedded scheduler every second: the windows and `for`
// durations of recorded-runs.jsonnet (minutes scaled to seconds), and the
// gated-pods alert scaled further, through _config only, to fire within a
// run of tens of seconds.
local mixin = (import '../mixin.libsonnet') + {
  _config+:: {
    rateInterval: '10s',
    scheduledAfterFlushWindow: '60s',
    scheduledAfterFlushFor: '5s',
    backoffQWaitsFor: '5s',
    errorBackoffFor: '5s',
    gatedPodsThreshold: 10,
    gatedPodsGrowthStep: '5s',
    gatedPodsReleaseStep: '1s',
    gatedPodsFor: '5s',
    queueGrowthWindow: '10s',
    queueGrowthFor: '5s',
  },
};

{
  'prometheus_alerts.yaml': std.manifestYamlDoc(mixin.prometheusAlerts, quote_keys=false) + '\n',
}
