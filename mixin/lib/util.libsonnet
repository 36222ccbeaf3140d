// Selector and grouping helpers shared by the alerts, rules and dashboard.
{
  // sel('queue="active"') → '{job="kube-scheduler", queue="active"}'.
  sel(config, extra=''):: '{%s}' % std.join(', ', [config.schedulerSelector] + (if extra == '' then [] else [extra])),
  // Alerts and rules keep the cluster and the scheduler instance, so that
  // each scheduler is judged on its own queue.
  by(config, extra=[]):: std.join(', ', [config.clusterLabel, 'instance'] + extra),
  // times('20m', 3) → '60m': a duration of one number and one unit
  // (s, m, h, d), multiplied.
  times(d, n)::
    local unit = std.substr(d, std.length(d) - 1, 1);
    assert std.member('smhd', unit) : 'duration %s: want a number and one unit of s, m, h, d' % d;
    '%d%s' % [std.parseInt(std.substr(d, 0, std.length(d) - 1)) * n, unit],
}
