package upstreamcompat

import (
	"fmt"
	"os"
	"testing"

	schedperf "k8s.io/kubernetes/test/integration/scheduler_perf"
)

// TestMain sets up logging and upstream's flags (-test-scheduling-label-filter,
// -perf-scheduling-label-filter, -data-items-dir, …) the way every
// scheduler_perf test package does.
func TestMain(m *testing.M) {
	if err := schedperf.InitTests(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
