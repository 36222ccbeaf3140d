// Package mixintest holds the monitoring mixin's tests (`make test-mixin`):
// the committed render is current, promtool accepts the rules, every
// expression names series kube-scheduler v1.34–v1.37 serve and evaluates
// on the recorded scrapes of v1.34.4, v1.35.4, v1.36.3 and v1.37.2, the
// dashboard is valid under Grafana's dashboard schema, the alerts fire on
// the recorded runs and synthetic scenarios built to cause them and stay
// quiet on the others (as mixin/README.md's table says), and
// `kubectl schedq status` agrees with them on the same series.
package mixintest
