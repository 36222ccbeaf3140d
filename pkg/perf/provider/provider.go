// Package provider brings up, or connects to, the cluster a workload runs
// on: a kind cluster running the real kube-scheduler binary in a node image
// (Kind), or a cluster a kubeconfig names (Kubeconfig). Providers register
// themselves (Register); the embedded control plane registers from the perf
// module, which links kube-apiserver, so that this module never does.
//
// A provider that starts a control plane starts a fresh one per workload,
// with the workload's feature gates and scheduler configuration, as
// upstream's scheduler_perf does. Feature gates are process-global, so the
// embedded provider can start control planes with one gate setting per
// process; the run package runs each workload in a child process.
package provider

import (
	"context"
	"fmt"
	"io"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// Names of the providers, as --cluster takes them.
const (
	NameEmbedded   = "embedded"
	NameKind       = "kind"
	NameKubeconfig = "kubeconfig"
)

// Provider brings up a cluster for one workload.
type Provider interface {
	// Name is the provider's --cluster value.
	Name() string
	// Start returns a cluster ready for spec's workload.
	Start(ctx context.Context, spec Spec) (*Instance, error)
}

// Spec is what a workload needs from its cluster.
type Spec struct {
	Workload *workload.Selected
	// FeatureGates and EmulationVersion are what the control plane must
	// run with (workload.Selected.EffectiveFeatureGates, plus a comparison's
	// override).
	FeatureGates     map[string]bool
	EmulationVersion string
	// RunLabels are the labels the runner puts on everything it creates.
	RunLabels map[string]string
	// Log receives the components' logs (nil discards them) at klog
	// verbosity LogLevel.
	Log      io.Writer
	LogLevel int
}

// Instance is a cluster a workload runs on.
type Instance struct {
	Cluster runner.Cluster
	// Ledger, when not nil, must be handed to the runner: Stop deletes what
	// it records.
	Ledger *runner.Ledger
	// StartDuration is how long Start took.
	StartDuration time.Duration
	// Notes are facts about the cluster worth printing once (its version,
	// what it does differently from upstream's harness).
	Notes []string
	// NamespacePrefix, when set, goes before every namespace the workload
	// names (runner.Options.NamespacePrefix): set on a cluster the run
	// shares with others, so that two runs never meet.
	NamespacePrefix string
	// Removed says what Stop removed ("3300 pods, 50 nodes, …"), once it
	// has run; empty when it deleted a whole cluster.
	Removed string
	// Configuration is how the cluster is set up, as the provider read it
	// back; nil when it does not say. The run records it in its result.
	Configuration *runner.Configuration
	// Backend is the provider's own handle on the cluster (the embedded
	// control plane, whose queue is the ground truth); nil when there is
	// nothing more to reach than Cluster.
	Backend any
	stop    func(ctx context.Context) error
}

// NewInstance returns an Instance whose Stop calls stop.
func NewInstance(cluster runner.Cluster, stop func(ctx context.Context) error) *Instance {
	return &Instance{Cluster: cluster, stop: stop}
}

// Stop tears the cluster down, or deletes what the run created on a
// cluster that was not started for it. It may be called more than once.
func (in *Instance) Stop(ctx context.Context) error {
	if in == nil || in.stop == nil {
		return nil
	}
	stop := in.stop
	in.stop = nil
	return stop(ctx)
}

// Upstream's harness gives the scheduler's client this QPS and burst,
// whatever the configuration says.
const (
	upstreamSchedulerQPS   = 5000
	upstreamSchedulerBurst = 5000
)

// SchedulerConfig returns the scheduler configuration a provider that
// starts the scheduler uses for a workload: the workload's file (or the
// default configuration) with clientConnection.qps and burst set to
// upstream's 5000 where the file does not set them. Upstream's harness
// ignores clientConnection and always uses 5000; kube-scheduler's default
// (50, burst 100) would cap bindings near 50 per second and measure the
// client, not the scheduler. A file that sets them is honoured.
func SchedulerConfig(path string) ([]byte, error) {
	data := []byte(workload.DefaultSchedulerConfig)
	if path != "" {
		var err error
		if data, err = bound.ReadFile(context.Background(), path, workload.MaxFileBytes); err != nil {
			return nil, fmt.Errorf("scheduler config: %w", err)
		}
	}
	return SchedulerConfigFrom(data, path)
}

// SchedulerConfigFrom is SchedulerConfig on the file's content; path
// names it in errors.
func SchedulerConfigFrom(data []byte, path string) ([]byte, error) {
	if len(data) == 0 {
		data = []byte(workload.DefaultSchedulerConfig)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("scheduler config %s: %w", orDefault(path), err)
	}
	if obj == nil {
		obj = map[string]any{}
	}
	cc, _ := obj["clientConnection"].(map[string]any)
	if cc == nil {
		cc = map[string]any{}
	}
	if _, ok := cc["qps"]; !ok {
		cc["qps"] = upstreamSchedulerQPS
	}
	if _, ok := cc["burst"]; !ok {
		cc["burst"] = upstreamSchedulerBurst
	}
	obj["clientConnection"] = cc
	return yaml.Marshal(obj)
}

func orDefault(path string) string {
	if path == "" {
		return "(default)"
	}
	return path
}
