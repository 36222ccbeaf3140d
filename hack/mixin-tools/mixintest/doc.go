// Package mixintest holds the monitoring mixin's tests (`make test-mixin`):
// the committed render is current, promtool accepts the rules, every
// expression parses and names series a v1.36.3 kube-scheduler serves, the
// alerts fire on the recorded runs built to cause them and stay quiet on the
// others, and `kubectl schedq status` agrees with them on the same series.
package mixintest
