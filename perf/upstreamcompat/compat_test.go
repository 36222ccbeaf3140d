package upstreamcompat

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/pkg/features"
	schedperf "k8s.io/kubernetes/test/integration/scheduler_perf"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// failOnStall makes an observed stall (see observer) fail the test. It is off
// by default: a stall is upstream's bug, not a broken workload.
var failOnStall = flag.Bool("fail-on-stall", false, "fail when the scheduler is seen idle with an empty activeQ and a non-empty podBackoffQ while SchedulerPopFromBackoffQ is on")

// repoRoot is the repository root, from this package's directory (where go
// test runs it).
func repoRoot(tb testing.TB) string {
	tb.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

// workloadFiles returns the workloads directory and the workload files in
// it, by name.
func workloadFiles(tb testing.TB) (dir string, files []string) {
	tb.Helper()
	dir = filepath.Join(repoRoot(tb), "workloads")
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(paths) == 0 {
		tb.Fatalf("no workload files in %s", dir)
	}
	for _, p := range paths {
		files = append(files, filepath.Base(p))
	}
	return dir, files
}

// ensureEtcd makes sure upstream's harness finds an etcd binary: on PATH, or
// the one `make etcd` builds into bin/.
func ensureEtcd(tb testing.TB) {
	tb.Helper()
	if _, err := exec.LookPath("etcd"); err == nil {
		return
	}
	bin := filepath.Join(repoRoot(tb), "bin")
	if fi, err := os.Stat(filepath.Join(bin, "etcd")); err == nil && !fi.IsDir() {
		tb.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		return
	}
	tb.Fatal("upstream's scheduler_perf harness needs an etcd binary on PATH: run `make etcd` (it builds one from Go modules into bin/)")
}

// expected returns the workloads of file that upstream's harness runs under
// filter, as pkg/workload selects them.
func expected(tb testing.TB, file, filter string) []string {
	tb.Helper()
	f, err := workload.Load(file)
	if err != nil {
		tb.Fatal(err)
	}
	sel, err := f.Select("", "", filter)
	if errors.Is(err, workload.ErrNoMatch) {
		return nil
	}
	if err != nil {
		tb.Fatal(err)
	}
	names := make([]string, len(sel))
	for i, s := range sel {
		names[i] = s.Workload
	}
	return names
}

// TestWorkloadsRunInUpstreamHarness runs every workload file through
// upstream's RunIntegrationPerfScheduling, unmodified, from the workloads
// directory, with upstream's own label filter (-test-scheduling-label-filter,
// default "integration-test,-performance"): each file's integration-test
// sizes run on a fresh etcd, kube-apiserver and kube-scheduler, with the
// feature gates as the file sets them (SchedulerPopFromBackoffQ at its
// default, on). A workload that fails there fails this test.
//
// Under -short upstream adds "+short" to the filter; these workloads carry no
// short label, so upstream parses and validates each file and skips every
// workload, and no control plane starts.
func TestWorkloadsRunInUpstreamHarness(t *testing.T) {
	dir, files := workloadFiles(t)
	if !testing.Short() {
		ensureEtcd(t)
	}
	t.Chdir(dir)
	for _, file := range files {
		t.Run(strings.TrimSuffix(file, ".yaml"), func(t *testing.T) {
			filter := schedperf.TestSchedulingLabelFilter
			if testing.Short() {
				filter = workload.ShortLabelFilter(filter)
			}
			want := expected(t, file, filter)
			var obs observers
			schedperf.RunIntegrationPerfScheduling(t, file, obs.options()...)
			if testing.Short() {
				return
			}
			for _, r := range obs.report() {
				t.Log(r)
			}
			if len(want) == 0 {
				t.Errorf("no workload in %s matches upstream's label filter %q: give one the integration-test label", file, filter)
			}
			if got := obs.workloadsRun(); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("upstream ran workloads %q, want %q", got, want)
			}
			for _, s := range obs.stallsSeen() {
				if *failOnStall {
					t.Errorf("stall: %s", s)
				} else {
					t.Logf("stall (kubernetes#130976?): %s", s)
				}
			}
		})
	}
}

// BenchmarkWorkloadsUpstream runs every workload file through upstream's
// RunBenchmarkPerfScheduling, once with SchedulerPopFromBackoffQ on and once
// off, with upstream's -perf-scheduling-label-filter (default
// "performance"; pass integration-test for the small sizes). Upstream writes
// its DataItems JSON to -data-items-dir, by default perf/out/upstreamcompat.
// go test -bench reports each data item as <Metric>/<bucket>.
func BenchmarkWorkloadsUpstream(b *testing.B) {
	dir, files := workloadFiles(b)
	ensureEtcd(b)
	out := filepath.Join(repoRoot(b), "perf", "out", "upstreamcompat")
	if f := flag.Lookup("data-items-dir"); f != nil {
		if v := f.Value.String(); v != "" {
			out = v
		}
		var err error
		if out, err = filepath.Abs(out); err != nil { // before Chdir
			b.Fatal(err)
		}
		if err := f.Value.Set(out); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		b.Fatal(err)
	}
	b.Chdir(dir)
	for _, file := range files {
		for _, on := range []bool{true, false} {
			name := fmt.Sprintf("%s/SchedulerPopFromBackoffQ=%t", strings.TrimSuffix(file, ".yaml"), on)
			b.Run(name, func(b *testing.B) {
				featuregatetesting.SetFeatureGateDuringTest(b, utilfeature.DefaultFeatureGate, features.SchedulerPopFromBackoffQ, on)
				var obs observers
				schedperf.RunBenchmarkPerfScheduling(b, file, "schedq", nil, obs.options()...)
				// The observer's summaries go next to upstream's DataItems.
				report := strings.Join(obs.report(), "\n") + "\n"
				path := filepath.Join(out, strings.ReplaceAll(name, "/", "_")+"_queue.txt")
				if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
					b.Error(err)
				}
				b.Log(report)
				for _, s := range obs.stallsSeen() {
					b.Logf("stall (kubernetes#130976?): %s", s)
				}
			})
		}
	}
}
