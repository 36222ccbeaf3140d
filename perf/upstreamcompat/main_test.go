package upstreamcompat

import (
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"

	schedperf "k8s.io/kubernetes/test/integration/scheduler_perf"
)

// TestMain sets up logging and upstream's flags (-test-scheduling-label-filter,
// -perf-scheduling-label-filter, -data-items-dir, …) the way every
// scheduler_perf test package does.
func TestMain(m *testing.M) {
	if err := trimpathFixtures(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := schedperf.InitTests(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// trimpathFixtures lets upstream's test apiserver find its serving-cert
// fixtures when this test is built with -trimpath (as CI builds, to share
// the build cache with the node image): it locates its own package from
// its source file name, which -trimpath makes relative to the module cache,
// unless TEST_SRCDIR and TEST_WORKSPACE say where that is.
func trimpathFixtures() error {
	info, ok := debug.ReadBuildInfo()
	if !ok || os.Getenv("TEST_SRCDIR") != "" {
		return nil
	}
	trimmed := false
	for _, s := range info.Settings {
		if s.Key == "-trimpath" && s.Value == "true" {
			trimmed = true
		}
	}
	if !trimmed {
		return nil
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return fmt.Errorf("built with -trimpath: locating the module cache for the test apiserver's fixtures: go env GOMODCACHE: %w", err)
	}
	os.Setenv("TEST_SRCDIR", strings.TrimSpace(string(out)))
	os.Setenv("TEST_WORKSPACE", ".")
	return nil
}
