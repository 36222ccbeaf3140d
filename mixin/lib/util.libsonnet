// Selector and grouping helpers shared by the alerts, rules and dashboard.
{
  // sel('queue="active"') → '{job="kube-scheduler", queue="active"}'.
  sel(config, extra=''):: '{%s}' % std.join(', ', [config.schedulerSelector] + (if extra == '' then [] else [extra])),
  // Alerts and rules keep the cluster and the scheduler instance, so that
  // each scheduler is judged on its own queue.
  by(config, extra=[]):: std.join(', ', [config.clusterLabel, 'instance'] + extra),
}
