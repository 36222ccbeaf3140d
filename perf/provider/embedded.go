package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/kubectl-schedq/kubectl-schedq/perf/embedded"
	"github.com/kubectl-schedq/kubectl-schedq/perf/runner"
)

// Embedded starts etcd, kube-apiserver and kube-scheduler in this process
// (package embedded): upstream's in-process environment, and the fastest
// to start (about 3 s). One gate setting per process.
type Embedded struct{}

// Name implements Provider.
func (Embedded) Name() string { return NameEmbedded }

// Start implements Provider.
func (Embedded) Start(ctx context.Context, spec Spec) (*Instance, error) {
	cfg, err := SchedulerConfig(spec.Workload.SchedulerConfigPath)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "schedq-perf-")
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "scheduler-config.yaml")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if spec.EmulationVersion != "" {
		if err := setEmulationVersion(spec.EmulationVersion); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	// etcd in a process of its own, as upstream's harness runs it: in
	// process, its writes wait on the other components and throughput on
	// 2 cores halves. Without an etcd binary (make etcd), in process.
	var etcd *embedded.EtcdProcess
	var etcdServers []string
	if bin, ok := embedded.FindEtcdBinary(); ok {
		if etcd, err = embedded.StartEtcdProcess(ctx, bin, spec.Log); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		etcdServers = []string{etcd.URL}
	}
	stopEtcd := func() error {
		if etcd == nil {
			return nil
		}
		return etcd.Stop()
	}
	cp, err := embedded.Start(ctx, embedded.Options{
		FeatureGates:        spec.FeatureGates,
		SchedulerConfigFile: cfgPath,
		LogOutput:           spec.Log,
		LogLevel:            spec.LogLevel,
		EtcdServers:         etcdServers,
	})
	if err != nil {
		stopEtcd()
		os.RemoveAll(dir)
		if spec.Workload.SchedulerConfigPath != "" {
			return nil, fmt.Errorf("embedded control plane (scheduler config %s): %w", spec.Workload.SchedulerConfigPath, err)
		}
		return nil, fmt.Errorf("embedded control plane: %w", err)
	}
	return &Instance{
		Cluster: runner.Cluster{
			Name:       "embedded control plane",
			RESTConfig: cp.RESTConfig,
			Metrics:    runner.GathererReader{Func: legacyregistry.DefaultGatherer.Gather, Name: "kube-scheduler in this process"},
			InProcess:  true,
		},
		StartDuration: cp.StartDuration,
		ControlPlane:  cp,
		stop: func(context.Context) error {
			return errors.Join(cp.Stop(), stopEtcd(), os.RemoveAll(dir))
		},
	}, nil
}

// setEmulationVersion makes the process's components emulate v, as
// upstream's harness does for a workload that turns SchedulerQueueingHints
// off (the gate is locked on since 1.34).
func setEmulationVersion(v string) error {
	ver, err := version.Parse(v)
	if err != nil {
		return fmt.Errorf("emulation version %q: %w", v, err)
	}
	reg := compatibility.DefaultComponentGlobalsRegistry
	if reg.EffectiveVersionFor(basecompatibility.DefaultKubeComponent) == nil {
		// What kube-scheduler's options do when they are first made.
		if err := reg.Register(basecompatibility.DefaultKubeComponent, compatibility.DefaultBuildEffectiveVersion(), utilfeature.DefaultMutableFeatureGate); err != nil {
			return fmt.Errorf("emulation version %s: %w", v, err)
		}
	}
	mev, ok := reg.EffectiveVersionFor(basecompatibility.DefaultKubeComponent).(basecompatibility.MutableEffectiveVersion)
	if !ok {
		return fmt.Errorf("emulation version %s: the kube component's version cannot be changed", v)
	}
	mev.SetEmulationVersion(ver)
	if err := utilfeature.DefaultMutableFeatureGate.SetEmulationVersion(ver); err != nil {
		return fmt.Errorf("emulation version %s: %w", v, err)
	}
	return nil
}
