// Package clusterconfig reads how a running control plane is configured, the
// same way on both sides of make perf-compare-upstream: upstream's
// scheduler_perf harness (perf/upstreambench, from inside its process) and
// schedq-perf's embedded control plane (its workload process). Each side is
// read, not described: kube-apiserver's flags from its /flagz, etcd's command
// line from the etcd process the side started, the feature gates from the
// process's kubernetes_feature_enabled, and the Go runtime's settings.
package clusterconfig

import (
	"context"
	"debug/buildinfo"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kubectl-schedq/kubectl-schedq/perf/internal/kubeversion"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/schedconfig"
)

// Setting names, in the order a comparison prints them.
const (
	KeyKubernetes       = "Kubernetes"
	KeyGo               = "Go, GOMAXPROCS"
	KeyEtcd             = "etcd"
	KeyEtcdFsync        = "etcd WAL fsynced"
	KeyEtcdArgs         = "etcd flags"
	KeyAuthorization    = "kube-apiserver --authorization-mode"
	KeyAdmissionOff     = "kube-apiserver --disable-admission-plugins"
	KeyRuntimeConfig    = "kube-apiserver --runtime-config"
	KeyEtcdServers      = "kube-apiserver --etcd-servers"
	KeyInflight         = "kube-apiserver --max-requests-inflight, --max-mutating-requests-inflight"
	KeyWatchCache       = "kube-apiserver --watch-cache"
	KeySchedulerClient  = "kube-scheduler client QPS, burst"
	KeySchedulerProcess = "kube-scheduler runs"
	KeyLogVerbosity     = "log verbosity (-v)"
)

// Keys are the Settings' names in print order.
var Keys = []string{KeyKubernetes, KeyGo, KeyEtcd, KeyEtcdFsync, KeyEtcdArgs, KeyEtcdServers, KeyAuthorization,
	KeyAdmissionOff, KeyRuntimeConfig, KeyInflight, KeyWatchCache, KeySchedulerClient, KeySchedulerProcess,
	KeyLogVerbosity}

// Inputs say where to read a side from.
type Inputs struct {
	// Kubernetes is the version of k8s.io/kubernetes the side runs; empty
	// is kubeversion.Get()'s answer.
	Kubernetes string
	// APIServer reaches kube-apiserver (its /flagz).
	APIServer *rest.Config
	// Gather gathers the process's metrics (kubernetes_feature_enabled).
	Gather func() ([]*dto.MetricFamily, error)
	// SchedulerClient is the scheduler's client configuration (QPS, burst).
	SchedulerClient *rest.Config
	// SchedulerProcess says how the scheduler runs, e.g. "in this process,
	// scheduler.New" or "in this process, cmd/kube-scheduler/app".
	SchedulerProcess string
}

// Read reads the configuration of the control plane that in describes.
// What it cannot read it reports as "unknown: <why>", so that a comparison
// still prints.
func Read(ctx context.Context, in Inputs) *runner.Configuration {
	c := &runner.Configuration{Settings: map[string]string{}}
	set := func(k, v string) { c.Settings[k] = v }
	if in.Kubernetes == "" {
		in.Kubernetes = kubeversion.Get()
	}
	set(KeyKubernetes, in.Kubernetes)
	set(KeyGo, fmt.Sprintf("%s, %d", runtime.Version(), runtime.GOMAXPROCS(0)))
	set(KeyLogVerbosity, strconv.Itoa(verbosity()))
	if in.SchedulerClient != nil {
		set(KeySchedulerClient, fmt.Sprintf("%g, %d", in.SchedulerClient.QPS, in.SchedulerClient.Burst))
	}
	if in.SchedulerProcess != "" {
		set(KeySchedulerProcess, in.SchedulerProcess)
	}

	etcd, err := FindEtcd(os.Getpid())
	if err != nil {
		set(KeyEtcd, "unknown: "+err.Error())
	} else {
		set(KeyEtcd, etcd.describe())
		set(KeyEtcdArgs, Args(etcd))
		set(KeyEtcdFsync, strconv.FormatBool(!slices.Contains(etcd.Args, "--unsafe-no-fsync")))
	}

	flags, err := readFlagz(ctx, in.APIServer)
	for _, kv := range []struct{ key, flags string }{
		{KeyAuthorization, "authorization-mode"},
		{KeyAdmissionOff, "disable-admission-plugins"},
		{KeyRuntimeConfig, "runtime-config"},
		{KeyEtcdServers, "etcd-servers"},
		{KeyInflight, "max-requests-inflight,max-mutating-requests-inflight"},
		{KeyWatchCache, "watch-cache"},
	} {
		if err != nil {
			set(kv.key, "unknown: "+err.Error())
			continue
		}
		var vals []string
		for _, name := range strings.Split(kv.flags, ",") {
			vals = append(vals, flags.Values[name])
		}
		v := strings.Join(vals, ", ")
		if kv.key == KeyEtcdServers {
			v = scrubPaths(v)
		}
		set(kv.key, v)
	}

	if in.Gather != nil {
		if mfs, err := in.Gather(); err == nil {
			c.FeatureGates = featureGates(mfs)
		}
	}
	return c
}

// verbosity is klog's -v in this process.
func verbosity() int {
	v := 0
	for klog.V(klog.Level(v+1)).Enabled() && v < 20 {
		v++
	}
	return v
}

func readFlagz(ctx context.Context, cfg *rest.Config) (schedconfig.Flags, error) {
	if cfg == nil {
		return schedconfig.Flags{}, fmt.Errorf("no kube-apiserver to ask")
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return schedconfig.Flags{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var contentType string
	data, err := client.CoreV1().RESTClient().Get().AbsPath("/flagz").
		SetHeader("Accept", schedconfig.FlagzAccept).Do(ctx).ContentType(&contentType).Raw()
	if err != nil {
		return schedconfig.Flags{}, fmt.Errorf("kube-apiserver /flagz: %w", err)
	}
	return schedconfig.ParseFlagz(data, contentType)
}

func featureGates(mfs []*dto.MetricFamily) map[string]bool {
	gates := map[string]bool{}
	for _, mf := range mfs {
		if mf.GetName() != metricscrape.FeatureEnabledMetric {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "name" {
					gates[l.GetValue()] = m.GetGauge().GetValue() == 1
				}
			}
		}
	}
	return gates
}

// Etcd is an etcd process.
type Etcd struct {
	PID int
	// Exe is its executable; Version the etcd server module's version it
	// was built from ("" when the binary does not say).
	Exe, Version string
	// Args are its arguments, without the program name.
	Args []string
}

// FindEtcd returns the etcd process that parent started: its child whose
// command line serves etcd clients (--listen-client-urls and --data-dir).
// Only Linux's /proc is read.
func FindEtcd(parent int) (Etcd, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return Etcd{}, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || ppid(pid) != parent {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if len(argv) < 2 || !hasFlag(argv[1:], "listen-client-urls") || !hasFlag(argv[1:], "data-dir") {
			continue
		}
		etcd := Etcd{PID: pid, Args: argv[1:]}
		etcd.Exe, _ = os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if info, err := buildinfo.ReadFile(etcd.Exe); err == nil {
			for _, d := range info.Deps {
				if d.Path == "go.etcd.io/etcd/server/v3" {
					etcd.Version = d.Version
				}
			}
		}
		return etcd, nil
	}
	return Etcd{}, fmt.Errorf("no etcd process started by process %d", parent)
}

// ppid is pid's parent, or -1.
func ppid(pid int) int {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return -1
	}
	// pid (comm) state ppid …; comm may hold spaces and parentheses.
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return -1
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 2 {
		return -1
	}
	p, err := strconv.Atoi(fields[1])
	if err != nil {
		return -1
	}
	return p
}

func hasFlag(args []string, name string) bool {
	for _, a := range args {
		a = strings.TrimLeft(a, "-")
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

func (e Etcd) describe() string {
	v := e.Version
	if v == "" {
		v = "version unknown"
	}
	return fmt.Sprintf("%s, process of its own (%s)", v, filepath.Base(e.Exe))
}

// Args are e's flags with the per-run directory written as DIR.
func Args(e Etcd) string {
	return scrubPaths(strings.Join(e.Args, " "))
}

// scrubPaths writes temporary directories as DIR, so that two runs' flags
// compare equal.
func scrubPaths(s string) string {
	tmp := os.TempDir()
	var out []string
	for _, f := range strings.Fields(s) {
		if i := strings.Index(f, tmp+"/"); i >= 0 {
			rest := f[i+len(tmp)+1:]
			if j := strings.IndexByte(rest, '/'); j >= 0 {
				f = f[:i] + "DIR" + rest[j:]
			} else {
				f = f[:i] + "DIR"
			}
		}
		out = append(out, f)
	}
	return strings.Join(out, " ")
}
