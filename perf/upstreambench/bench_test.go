package upstreambench

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	schedperf "k8s.io/kubernetes/test/integration/scheduler_perf"
)

// TestMain sets up logging and upstream's flags (-perf-scheduling-label-filter,
// -data-items-dir, …) the way every scheduler_perf test package does.
func TestMain(m *testing.M) {
	if err := schedperf.InitTests(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// ensureEtcd makes sure the harness finds an etcd binary: on PATH, or the
// one `make etcd` builds into bin/.
func ensureEtcd(b *testing.B) {
	b.Helper()
	if _, err := exec.LookPath("etcd"); err == nil {
		return
	}
	bin, err := filepath.Abs(filepath.Join("..", "..", "bin"))
	if err != nil {
		b.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(bin, "etcd")); err == nil && !fi.IsDir() {
		b.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		return
	}
	b.Fatal("upstream's scheduler_perf harness needs an etcd binary on PATH: run `make etcd` (it builds one from Go modules into bin/)")
}

// BenchmarkPerfSchedulingBasic is upstream's BenchmarkPerfScheduling on
// scheduling-basic.yaml, topic misc; its DataItems file is
// BenchmarkPerfScheduling_benchmark_misc_<date>.json in -data-items-dir.
func BenchmarkPerfSchedulingBasic(b *testing.B) {
	ensureEtcd(b)
	if f := flag.Lookup("data-items-dir"); f != nil && f.Value.String() != "" {
		abs, err := filepath.Abs(f.Value.String()) // before Chdir
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Value.Set(abs); err != nil {
			b.Fatal(err)
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	b.Chdir(filepath.Join("..", "testdata"))
	schedperf.RunBenchmarkPerfScheduling(b, "scheduling-basic.yaml", "misc", nil)
}
