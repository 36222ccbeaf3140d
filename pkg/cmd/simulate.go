package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace"
)

// SimulateOptions replays a queue trace through the model.
type SimulateOptions struct {
	genericiooptions.IOStreams

	TracePath string
	// PopFromBackoffQ overrides the trace header's popFromBackoffQ when set.
	PopFromBackoffQ string
	// SchedulerVersion names the kube-scheduler whose queue replays the
	// trace (--scheduler-version); version is it parsed.
	SchedulerVersion string
	version          queue.Version
}

// NewSimulateOptions returns the defaults.
func NewSimulateOptions(streams genericiooptions.IOStreams) *SimulateOptions {
	return &SimulateOptions{IOStreams: streams, SchedulerVersion: queue.DefaultVersion.String()}
}

// NewCmdSimulate returns `kubectl schedq simulate`.
func NewCmdSimulate(streams genericiooptions.IOStreams) *cobra.Command {
	o := NewSimulateOptions(streams)
	cmd := &cobra.Command{
		Use:   "simulate --trace FILE",
		Short: "Replay a queue trace through the model of kube-scheduler's scheduling queue",
		Long: `Replay a trace of queue operations (add, pop, fail, done, event, activate, ungate,
delete, snapshot; JSON Lines, format version 1) through a model of the scheduling
queue of the kube-scheduler version --scheduler-version names (v1.34 to v1.37, by
default the current release), and print what the queue did: one line per pop and per
snapshot, then a final snapshot, with scheduler_pending_pods and
scheduler_queue_incoming_pods_total as the real scheduler would count them.

A malformed trace is rejected with the line and the problem, and nothing is
printed on stdout. The trace is replayed while it is read: with two cores or
more, a long trace takes little longer than reading it.`,
		Example: `  # Replay a trace
  kubectl schedq simulate --trace trace.jsonl

  # Read the trace from stdin, with SchedulerPopFromBackoffQ forced off
  kubectl schedq simulate --trace - --pop-from-backoffq=false < trace.jsonl

  # Replay it as a v1.34 scheduler's queue would
  kubectl schedq simulate --trace trace.jsonl --scheduler-version v1.34`,
		Args:        cobra.NoArgs,
		Annotations: map[string]string{noClusterFlags: "true"},
		RunE:        validateThenRun(o),
	}
	cmd.Flags().StringVar(&o.TracePath, "trace", o.TracePath, "Trace file to replay, or - for stdin")
	cmd.Flags().StringVar(&o.PopFromBackoffQ, "pop-from-backoffq", o.PopFromBackoffQ, "Override the trace's popFromBackoffQ (true or false)")
	cmd.Flags().StringVar(&o.SchedulerVersion, "scheduler-version", o.SchedulerVersion, "The kube-scheduler whose queue to model: v1.34, v1.35, v1.36 or v1.37 (a patch version such as v1.36.3 is accepted)")
	_ = cmd.MarkFlagFilename("trace", "jsonl", "json")
	_ = cmd.RegisterFlagCompletionFunc("scheduler-version", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		out := make([]string, len(queue.Versions))
		for i, v := range queue.Versions {
			out[i] = v.String()
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// Validate checks the flags.
func (o *SimulateOptions) Validate() error {
	if o.TracePath == "" {
		return errors.New("--trace is required (a file, or - for stdin)")
	}
	switch o.PopFromBackoffQ {
	case "", "true", "false":
	default:
		return fmt.Errorf("--pop-from-backoffq=%q: want true or false", o.PopFromBackoffQ)
	}
	v, err := queue.ParseVersion(o.SchedulerVersion)
	if err != nil {
		return fmt.Errorf("--scheduler-version: %w", err)
	}
	o.version = v
	return nil
}

// Run replays the trace.
func (o *SimulateOptions) Run() error {
	var r io.Reader = o.In
	name := "stdin"
	if o.TracePath != "-" {
		f, err := os.Open(o.TracePath)
		if err != nil {
			return fmt.Errorf("cannot read the trace: %w", err)
		}
		defer f.Close()
		r, name = f, o.TracePath
	}
	// The trace is replayed as it is read; nothing is printed unless all
	// of it was read and replayed.
	n, err := trace.ReadAndReplay(r, func(cfg trace.Config) (trace.StreamDriver, error) {
		if o.PopFromBackoffQ != "" {
			cfg.PopFromBackoffQ = o.PopFromBackoffQ == "true"
		}
		cfg.Version = o.version
		if err := cfg.Check(); err != nil {
			return nil, err
		}
		return trace.NewModel(cfg, nil), nil
	}, o.Out)
	if err != nil {
		return trace.FileError(name, err)
	}
	if n == 0 {
		fmt.Fprintf(o.ErrOut, "warning: %s: the trace has a header and no operations\n", name)
	}
	return nil
}
