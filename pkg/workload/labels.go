package workload

import (
	"slices"
	"strings"
)

// Label filters as upstream's flags default them.
const (
	// DefaultPerfLabelFilter is -perf-scheduling-label-filter's default
	// (BenchmarkPerfScheduling, the ci-benchmark-scheduler-perf job).
	DefaultPerfLabelFilter = "performance"
	// DefaultIntegrationLabelFilter is -test-scheduling-label-filter's
	// default (TestScheduling, the integration jobs).
	DefaultIntegrationLabelFilter = "integration-test,-performance"
	// ShortLabel marks workloads quick enough for presubmits.
	ShortLabel = "short"
)

// ShortLabelFilter is what upstream does to a label filter under go test
// -short: it appends "+short".
func ShortLabelFilter(filter string) string {
	return filter + ",+" + ShortLabel
}

// MatchLabels reports whether labels (a test case's followed by a
// workload's) pass filter, with upstream's semantics (label_selector.go): the
// filter is a comma-separated list; "label" or "+label" must be present,
// "-label" must be absent; empty entries are ignored, so "" matches
// everything.
func MatchLabels(filter string, labels ...string) bool {
	for _, label := range strings.Split(filter, ",") {
		if label == "" {
			continue
		}
		mustHave := label[0] != '-'
		if label[0] == '-' || label[0] == '+' {
			label = label[1:]
		}
		if slices.Contains(labels, label) != mustHave {
			return false
		}
	}
	return true
}
