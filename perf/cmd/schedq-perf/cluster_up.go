package main

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/kubectl-schedq/kubectl-schedq/perf/embedded"
	"github.com/kubectl-schedq/kubectl-schedq/perf/flushdemo"
)

const clusterUpExample = `  # Start a control plane with 10 nodes and keep it running until Ctrl-C
  schedq-perf cluster up --nodes 10

  # The same with KEP-5142 off, a scheduler configuration, and a fixed kubeconfig path
  schedq-perf cluster up --feature-gates SchedulerPopFromBackoffQ=false \
    --scheduler-config sched.yaml --kubeconfig-out /tmp/schedq.kubeconfig

  # Read the addresses it prints
  schedq-perf cluster up --nodes 3 | while read -r key value; do echo "$key -> $value"; done`

// ClusterUpOptions are the options of `schedq-perf cluster up`.
type ClusterUpOptions struct {
	genericiooptions.IOStreams
	root *rootOptions

	featureGates          string // --feature-gates, as typed
	schedulerConfig       string
	kubeconfigOut         string
	nodes                 int
	queuePort             int
	podMaxInUnschedulable time.Duration

	gates map[string]bool // Complete: featureGates parsed
}

// NewClusterUpOptions returns the defaults.
func NewClusterUpOptions(ro *rootOptions, streams genericiooptions.IOStreams) *ClusterUpOptions {
	return &ClusterUpOptions{IOStreams: streams, root: ro}
}

func newCmdClusterUp(ro *rootOptions, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewClusterUpOptions(ro, streams)
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start an embedded control plane and keep it running until interrupted",
		Long: `Start etcd, kube-apiserver and kube-scheduler in this process, create fake Ready
nodes (4 CPU, 32Gi, 110 pods), and run until SIGINT or SIGTERM; then stop
everything and remove every file written, the kubeconfig included.

When the control plane is ready, the command prints four lines to stdout:

  ready
  kubeconfig PATH
  metrics URL      the scheduler's /metrics (HTTPS; the kubeconfig's credentials may read it)
  queue URL        the scheduler's queue as JSON (GET, loopback HTTP)

The kubeconfig's user is in system:masters, and its cluster carries the
scheduler endpoint, so kubectl schedq run with it needs no metrics flags.

The scheduler is built with one out-of-tree plugin, ` + flushdemo.Name + `, a Filter
plugin that deliberately misses the event freeing the pods it rejects (they wait
for the leftover flush); it runs only where --scheduler-config enables it.`,
		Example: clusterUpExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.featureGates, "feature-gates", o.featureGates, "feature gates for the whole control plane, e.g. SchedulerPopFromBackoffQ=false")
	f.StringVar(&o.schedulerConfig, "scheduler-config", o.schedulerConfig, "a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) file; its clientConnection.kubeconfig and leader election are replaced")
	f.StringVar(&o.kubeconfigOut, "kubeconfig-out", o.kubeconfigOut, "where to write the kubeconfig, a path that does not exist yet (default: a temporary file); removed on exit")
	f.IntVar(&o.nodes, "nodes", o.nodes, "how many fake nodes to create")
	f.IntVar(&o.queuePort, "queue-port", o.queuePort, "loopback port of the queue endpoint (0: any free port)")
	f.DurationVar(&o.podMaxInUnschedulable, "pod-max-in-unschedulable-pods-duration", o.podMaxInUnschedulable, "how long a pod may wait in unschedulablePods before the leftover flush (every 30s) moves it, kube-scheduler's flag of that name (0: its default, 5m)")
	_ = cmd.MarkFlagFilename("scheduler-config", "yaml", "yml", "json")
	return cmd
}

// Complete parses --feature-gates.
func (o *ClusterUpOptions) Complete() error {
	gates, err := embedded.ParseFeatureGates(o.featureGates)
	if err != nil {
		return fmt.Errorf("--feature-gates: %w", err)
	}
	o.gates = gates
	return nil
}

// Validate checks the flags without I/O.
func (o *ClusterUpOptions) Validate() error {
	if o.nodes < 0 {
		return fmt.Errorf("--nodes must not be negative, got %d", o.nodes)
	}
	if o.queuePort < 0 || o.queuePort > 65535 {
		return fmt.Errorf("--queue-port must be 0 to 65535, got %d", o.queuePort)
	}
	if o.podMaxInUnschedulable < 0 {
		return fmt.Errorf("--pod-max-in-unschedulable-pods-duration must not be negative, got %v", o.podMaxInUnschedulable)
	}
	return nil
}

// Run starts the control plane, prints where it is, and stops it on SIGINT or
// SIGTERM, or when ctx ends.
func (o *ClusterUpOptions) Run(ctx context.Context) error {
	ctx, stopSignals := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stopSignals()

	opts := embedded.Options{
		FeatureGates:        o.gates,
		SchedulerConfigFile: o.schedulerConfig,
		Nodes:               o.nodes,
		KubeconfigPath:      o.kubeconfigOut,
		QueuePort:           o.queuePort,

		PodMaxInUnschedulablePodsDuration: o.podMaxInUnschedulable,
		OutOfTreePlugins:                  runtime.Registry{flushdemo.Name: flushdemo.New},
	}
	if o.root != nil && o.root.showLogs {
		opts.LogOutput, opts.LogLevel = o.ErrOut, o.root.logLevel
	}
	cp, err := embedded.Start(ctx, opts)
	if errors.Is(err, embedded.ErrPortInUse) {
		return fmt.Errorf("--queue-port %d is in use; pick another, or 0 for any free port", o.queuePort)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "ready\nkubeconfig %s\nmetrics %s\nqueue %s\n", cp.KubeconfigPath, cp.MetricsURL, cp.QueueURL)
	fmt.Fprintf(o.ErrOut, "control plane ready in %v (%s) with %d nodes, feature gates: %s; stop with Ctrl-C\n",
		cp.StartDuration.Round(time.Millisecond), embedded.FormatStartPhases(cp.StartPhases), o.nodes, embedded.FormatFeatureGates(o.gates))

	var runErr error
	select {
	case <-ctx.Done():
	case <-cp.Done():
		runErr = cp.Err()
	}
	// A second signal now ends the process at once.
	stopSignals()
	if err := cp.Stop(); err != nil {
		return errors.Join(runErr, fmt.Errorf("stop: %w", err))
	}
	if runErr != nil {
		return runErr
	}
	fmt.Fprintln(o.ErrOut, "stopped")
	return nil
}
