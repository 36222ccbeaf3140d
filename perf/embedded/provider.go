package embedded

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/kubectl-schedq/kubectl-schedq/perf/internal/clusterconfig"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/provider"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
)

func init() {
	provider.Register(provider.Registration{
		Name:     provider.NameEmbedded,
		Starting: "starting an embedded control plane",
		New:      func(provider.Settings) provider.Provider { return Provider{} },
	})
}

// Provider starts etcd, kube-apiserver and kube-scheduler in this process:
// upstream's in-process environment, and the fastest to start
// (docs/results.md, Embedded control plane).
// One gate setting per process. The Instance's Backend is the
// *ControlPlane.
type Provider struct {
	// RecordPops is Options.RecordPops.
	RecordPops bool
}

// Name implements provider.Provider.
func (Provider) Name() string { return provider.NameEmbedded }

// HarnessLogVerbosity is upstream's scheduler_perf's DefaultLoggingVerbosity.
const HarnessLogVerbosity = 2

// Start implements provider.Provider.
func (p Provider) Start(ctx context.Context, spec provider.Spec) (*provider.Instance, error) {
	cfg, err := provider.SchedulerConfigFrom(spec.Workload.SchedulerConfig, spec.Workload.SchedulerConfigPath)
	if err != nil {
		return nil, err
	}
	if spec.EmulationVersion != "" {
		if err := setEmulationVersion(spec.EmulationVersion); err != nil {
			return nil, err
		}
	}
	// etcd in a process of its own, with upstream's harness's flags and its
	// WAL fsynced (EtcdProcess).
	etcd, err := StartEtcdProcess(ctx, spec.Log)
	if err != nil {
		return nil, err
	}
	stopEtcd := etcd.Stop
	source := spec.Workload.SchedulerConfigPath
	if source == "" {
		source = "(default)"
	}
	// Logs shown (-v) are at the level asked for; else at upstream's
	// harness's level, into a file, so that logging costs what it costs
	// upstream.
	logLevel := spec.LogLevel
	if spec.Log == nil {
		logLevel = HarnessLogVerbosity
	}
	cp, err := Start(ctx, Options{
		FeatureGates:          spec.FeatureGates,
		SchedulerConfigData:   cfg,
		SchedulerConfigSource: source,
		LogOutput:             spec.Log,
		LogLevel:              logLevel,
		LogToFile:             spec.Log == nil,
		EtcdServers:           []string{etcd.URL},
		// kube-apiserver's default, which upstream's harness keeps
		// (cmd/kube-apiserver/app/testing.StartTestServer): authorizing
		// every request with RBAC costs about 1% of the control plane's
		// CPU in a workload run (docs/results.md).
		AuthorizationModes: []string{"AlwaysAllow"},
		RecordPops:         p.RecordPops,
	})
	if err != nil {
		stopEtcd()
		if spec.Workload.SchedulerConfigPath != "" {
			return nil, fmt.Errorf("embedded control plane (scheduler config %s): %w", spec.Workload.SchedulerConfigPath, err)
		}
		return nil, fmt.Errorf("embedded control plane: %w", err)
	}
	inst := provider.NewInstance(runner.Cluster{
		Name:       "embedded control plane",
		RESTConfig: cp.RESTConfig,
		Metrics:    runner.GathererReader{Func: legacyregistry.DefaultGatherer.Gather, Name: "kube-scheduler in this process"},
		InProcess:  true,
	}, func(context.Context) error {
		return errors.Join(cp.Stop(), stopEtcd())
	})
	inst.StartDuration = cp.StartDuration
	inst.Backend = cp
	inst.Configuration = clusterconfig.Read(ctx, clusterconfig.Inputs{
		APIServer:        cp.RESTConfig,
		Gather:           legacyregistry.DefaultGatherer.Gather,
		SchedulerClient:  cp.sched.clientConfig,
		SchedulerProcess: "cmd/kube-scheduler/app (Setup, Run), in the workload's process",
	})
	return inst, nil
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
