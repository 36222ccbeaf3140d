// The alerts as the tests on recorded runs evaluate them: the same
// expressions and thresholds, with the windows and `for` durations scaled
// from minutes to seconds, because the recorded runs last tens of seconds
// (one, six minutes) and were sampled every second.
local mixin = (import '../mixin.libsonnet') + {
  _config+:: {
    rateInterval: '10s',
    scheduledAfterFlushWindow: '60s',
    scheduledAfterFlushFor: '5s',
    backoffQWaitsFor: '5s',
    errorBackoffFor: '5s',
    gatedPodsGrowthStep: '20s',
    gatedPodsReleaseStep: '1s',
    gatedPodsFor: '15s',
    queueGrowthWindow: '10s',
    queueGrowthFor: '5s',
  },
};

{
  'prometheus_alerts.yaml': std.manifestYamlDoc(mixin.prometheusAlerts, quote_keys=false) + '\n',
}
