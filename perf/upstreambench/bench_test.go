package upstreambench

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/component-base/metrics/legacyregistry"
	schedperf "k8s.io/kubernetes/test/integration/scheduler_perf"
	"k8s.io/kubernetes/test/utils/client-go/ktesting"

	"github.com/kubectl-schedq/kubectl-schedq/perf/internal/clusterconfig"
	"github.com/kubectl-schedq/kubectl-schedq/perf/internal/kubeversion"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
)

var (
	configFile = flag.String("config", filepath.Join("..", "testdata", "scheduling-basic.yaml"),
		"the scheduler_perf config file to run (relative to perf/upstreambench)")
	topic = flag.String("topic", "", "the benchmark's topic (default: the file's directory name for performance-config.yaml, else misc)")
)

// ConfigurationFile is the file in -data-items-dir that holds, per workload
// (test case/workload), how upstream's harness set its cluster up, read by
// package clusterconfig while the workload's cluster runs.
const ConfigurationFile = "schedq-configuration.json"

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

// BenchmarkPerfScheduling is upstream's BenchmarkPerfScheduling on -config:
// RunBenchmarkPerfScheduling as every config directory of scheduler_perf
// calls it, unmodified; select workloads with -test.bench
// (BenchmarkPerfScheduling/<test case>/<workload>) and
// -perf-scheduling-label-filter. Its DataItems file is
// BenchmarkPerfScheduling_benchmark_<topic>_<date>.json in -data-items-dir,
// beside ConfigurationFile.
func BenchmarkPerfScheduling(b *testing.B) {
	ensureEtcd(b)
	file, err := filepath.Abs(*configFile)
	if err != nil {
		b.Fatal(err)
	}
	dataDir := ""
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
		dataDir = abs
	}
	t := *topic
	if t == "" {
		t = "misc"
		if filepath.Base(file) == "performance-config.yaml" {
			t = filepath.Base(filepath.Dir(file))
		}
	}
	var rec recorder
	kube := kubeversion.Get() // from perf/go.mod, before leaving perf/
	// The harness resolves the file's paths against the working directory.
	b.Chdir(filepath.Dir(file))
	schedperf.RunBenchmarkPerfScheduling(b, filepath.Base(file), t, nil, schedperf.WithPrepareFn(func(tCtx ktesting.TContext) error {
		// The workload's cluster runs: etcd, kube-apiserver, and the
		// scheduler with the harness's client (tCtx's).
		c := clusterconfig.Read(tCtx, clusterconfig.Inputs{
			Kubernetes:       kube,
			APIServer:        tCtx.RESTConfig(),
			Gather:           legacyregistry.DefaultGatherer.Gather,
			SchedulerClient:  tCtx.RESTConfig(),
			SchedulerProcess: "scheduler.New (test/integration/util.StartSchedulerWithDone), in the harness's process",
		})
		if dataDir == "" {
			return nil
		}
		return rec.add(filepath.Join(dataDir, ConfigurationFile), workloadName(tCtx.Name()), c)
	}))
}

// workloadName is "<test case>/<workload>" of a sub-benchmark's name.
func workloadName(name string) string {
	parts := strings.SplitN(name, "/", 2)
	if len(parts) < 2 {
		return name
	}
	return parts[1]
}

// recorder writes every workload's configuration to one file.
type recorder struct {
	mu      sync.Mutex
	configs map[string]*runner.Configuration
}

func (r *recorder) add(path, name string, c *runner.Configuration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.configs == nil {
		r.configs = map[string]*runner.Configuration{}
		if b, err := os.ReadFile(path); err == nil {
			if err := json.Unmarshal(b, &r.configs); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	r.configs[name] = c
	b, err := json.MarshalIndent(r.configs, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
