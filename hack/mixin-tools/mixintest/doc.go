// Package mixintest holds the monitoring mixin's tests (`make test-mixin`):
// the committed render is current, promtool accepts the rules, every
// expression parses and names series kube-scheduler v1.34–v1.37 serve (a
// recorded v1.36.3 scrape and the other versions' shapes derived from it),
// the alerts fire on the recorded runs and synthetic scenarios built to
// cause them and stay quiet on the others, and `kubectl schedq status`
// agrees with them on the same series.
package mixintest
