package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/provider"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/run"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
	"github.com/kubectl-schedq/kubectl-schedq/workloads"
)

// PerfConfig says how a binary carries the perf commands: the plugin as
// `kubectl schedq perf`, schedq-perf at its root with the embedded
// control plane registered.
type PerfConfig struct {
	// CommandPath is how users type the commands' parent ("kubectl schedq
	// perf", "schedq-perf").
	CommandPath string
	// DefaultCluster is --cluster's default.
	DefaultCluster string
	// RunPath is the words from the binary to the run command ("perf run"
	// in the plugin, "run" in schedq-perf): the child process runs
	// RunPath __workload.
	RunPath []string
	// ConfigFlags are the kubeconfig flags the binary's root carries.
	ConfigFlags *genericclioptions.ConfigFlags
	// LogLevel returns -v's klog verbosity for the control plane's logs
	// and whether it was given; nil hides them.
	LogLevel func() (int, bool)
}

// NewCmdPerf returns `perf` with run, list, report and cleanup.
func NewCmdPerf(cfg PerfConfig, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "perf",
		Short: "Run scheduler_perf workloads on kind or a cluster you name, and report",
		Long: `Run scheduler_perf-format workloads (upstream's performance-config.yaml format)
and measure the scheduler as upstream's harness does, plus the queue over time.
The KEP-5142 workloads are built in: ` + "`perf list`" + ` shows them.`,
	}
	cmd.AddCommand(PerfCommands(cfg, streams)...)
	requireSubcommand(cmd)
	return cmd
}

// PerfCommands are run, list, report and cleanup.
func PerfCommands(cfg PerfConfig, streams genericiooptions.IOStreams) []*cobra.Command {
	return []*cobra.Command{
		NewCmdPerfRun(cfg, streams),
		NewCmdPerfList(cfg, streams),
		NewCmdPerfReport(cfg, streams),
		NewCmdPerfCleanup(cfg, streams),
	}
}

// PerfRunOptions are the options of `perf run`.
type PerfRunOptions struct {
	genericiooptions.IOStreams
	cfg  PerfConfig
	opts run.Options
	// args are the run command's words as parsed: what the report quotes
	// and what a hand-over to another binary runs.
	args []string
	plan *run.Plan
}

func (c PerfConfig) runExample() string {
	p := c.CommandPath
	return fmt.Sprintf(`  # The built-in workloads, and a run of one at its integration-test size
  %[1]s list
  %[1]s run backoff-drain --label-filter integration-test

  # One workload with KEP-5142's gate on and then off, side by side
  %[1]s run backoff-drain --workload 4Nodes_40Blocked --compare SchedulerPopFromBackoffQ --out results/

  # Any scheduler_perf file, on a kind cluster kept afterwards
  %[1]s run performance-config.yaml --test-case SchedulingBasic --label-filter integration-test,short --cluster kind --keep

  # On the cluster of the current kubeconfig context (creates nodes and pods there)
  %[1]s run backoff-drain --workload 4Nodes_40Blocked --cluster kubeconfig --allow-existing-cluster`, p)
}

// NewCmdPerfRun returns `perf run`.
func NewCmdPerfRun(cfg PerfConfig, streams genericiooptions.IOStreams) *cobra.Command {
	o := &PerfRunOptions{IOStreams: streams, cfg: cfg, opts: run.Options{Settings: run.Settings{
		Cluster:     cfg.DefaultCluster,
		Out:         "schedq-perf-results",
		Parallelism: run.DefaultParallelism,
		LabelFilter: workload.DefaultPerfLabelFilter,
	}}}
	cmd := &cobra.Command{
		Use:   "run NAME|FILE",
		Short: "Run scheduler_perf workloads and measure the scheduler",
		Long: `Run the workloads of NAME (a built-in workload: see list) or FILE (any
scheduler_perf config) and measure the scheduler as upstream's harness does:
SchedulingThroughput, the scheduler's histograms and per-pod scheduling
latency, plus the queue over time from the scheduler's metrics.

Each workload runs in a process of its own on a fresh cluster with the
workload's feature gates and scheduler configuration. With --compare GATE
every workload runs twice, GATE on and off, and one table shows both.

--out receives the perf-dash DataItems files
(BenchmarkPerfScheduling_..._benchmark_<topic>_<date>.json), the queue
series (queue_*.json and .csv), results.json and report.html.

Clusters: kind (a kind cluster per workload, deleted afterwards unless
--keep), kubeconfig (the cluster of --kubeconfig/--context; needs
--allow-existing-cluster, and deletes everything it created at the end),
embedded (etcd, kube-apiserver and kube-scheduler in one process: schedq-perf).

Ctrl-C stops the run and deletes what it created; a second Ctrl-C leaves at
once and prints what is left and the command that removes it.`,
		Example: cfg.runExample(),
		Args:    cobra.ExactArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			infos, _ := workloads.List()
			var names []string
			for _, in := range infos {
				names = append(names, in.Name+"\t"+in.Purpose)
			}
			return names, cobra.ShellCompDirectiveDefault
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.opts.LabelFilterSet = cmd.Flags().Changed("label-filter")
			if err := o.Complete(cmd, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			cmd.SilenceUsage = true
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.opts.TestCase, "test-case", o.opts.TestCase, "run only this test case")
	f.StringVar(&o.opts.Workload, "workload", o.opts.Workload, "run only this workload (ignores labels)")
	f.StringVar(&o.opts.LabelFilter, "label-filter", o.opts.LabelFilter, "run workloads whose labels pass this filter: comma-separated, -label excludes")
	f.StringVar(&o.opts.Cluster, "cluster", o.opts.Cluster, "where to run: kind, kubeconfig or embedded")
	f.StringVar(&o.opts.Compare, "compare", o.opts.Compare, "run every workload with this feature gate on and off, e.g. SchedulerPopFromBackoffQ")
	f.StringVar(&o.opts.Out, "out", o.opts.Out, "directory for the results")
	f.StringVar(&o.opts.WorkloadRoot, "workload-root", o.opts.WorkloadRoot, "the directory the files FILE names (templates, scheduler configuration) must be in (default: the Go module or git repository holding FILE, else its directory)")
	f.StringVar(&o.opts.Topic, "topic", o.opts.Topic, "threshold topic and DataItems file name part (default: the file's name, or its directory for performance-config.yaml)")
	f.IntVar(&o.opts.Parallelism, "parallelism", o.opts.Parallelism, "goroutines that create pods and nodes (upstream: 30)")
	f.BoolVar(&o.opts.NoSeries, "no-queue-series", o.opts.NoSeries, "do not sample the queue every second (one metrics read per second less)")
	f.BoolVar(&o.opts.Provider.Keep, provider.FlagKeep, false, "kind: keep the cluster after the workload")
	f.StringVar(&o.opts.Provider.KindImage, provider.FlagKindImage, "", "kind: node image (default: kind's own, "+provider.KindDefaultImage()+", pulled when missing; offline, an image already on this machine)")
	f.StringVar(&o.opts.Provider.KindName, provider.FlagKindName, "", "kind: cluster name (default: schedq-perf-<run id>)")
	f.BoolVar(&o.opts.Provider.AllowExisting, provider.FlagAllowExisting, false, "kubeconfig: allow running on an existing cluster; the run creates nodes and pods there and deletes them at the end")
	f.StringVar(&o.opts.Provider.MetricsURL, provider.FlagMetricsURL, "", "kubeconfig: the scheduler's /metrics (default: the kubeconfig's scheduler extension, else a port-forward to the kube-scheduler pod)")
	_ = cmd.RegisterFlagCompletionFunc("cluster", fixedCompletion(provider.NameKind, provider.NameKubeconfig, provider.NameEmbedded))
	_ = cmd.RegisterFlagCompletionFunc("compare", fixedCompletion("SchedulerPopFromBackoffQ"))
	cmd.AddCommand(newCmdPerfChild(streams))
	return cmd
}

func fixedCompletion(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// Complete fills what the flags leave to the environment.
func (o *PerfRunOptions) Complete(cmd *cobra.Command, args []string) error {
	o.opts.Source = args[0]
	if cf := o.cfg.ConfigFlags; cf != nil && o.opts.Cluster == provider.NameKubeconfig {
		if cf.KubeConfig != nil {
			o.opts.Provider.Kubeconfig = *cf.KubeConfig
		}
		if cf.Context != nil {
			o.opts.Provider.Context = *cf.Context
		}
	}
	if cf := o.cfg.ConfigFlags; cf != nil {
		limit, err := requestTimeout(cmd, cf)
		if err != nil {
			return err
		}
		o.opts.Provider.RequestTimeout = limit
	}
	if o.cfg.LogLevel != nil {
		o.opts.LogLevel, o.opts.ShowLogs = o.cfg.LogLevel()
	}
	if f, ok := o.ErrOut.(*os.File); ok {
		o.opts.Terminal = term.IsTerminal(int(f.Fd()))
	}
	o.opts.ChildArgs = append(append([]string(nil), o.cfg.RunPath...), run.ChildCommand)
	o.args = runArgs(cmd, args)
	o.opts.Command = o.cfg.CommandPath + " " + strings.Join(o.args, " ")
	o.opts.Stdout, o.opts.Stderr = o.Out, o.ErrOut
	o.opts.Delegate = o.delegate
	return nil
}

// Validate checks everything before anything starts (run.Prepare).
func (o *PerfRunOptions) Validate() error {
	p, err := run.Prepare(o.opts)
	if err != nil {
		return err
	}
	// No kubeconfig at all is said as status and explain say it, before
	// a child process meets it in client-go's words.
	if cf := o.cfg.ConfigFlags; cf != nil && o.opts.Cluster == provider.NameKubeconfig {
		if _, err := restConfig(cf, ""); err != nil {
			return err
		}
	}
	o.plan = p
	return nil
}

// Run runs the plan; the first SIGINT or SIGTERM stops it cleanly, a
// second leaves at once.
func (o *PerfRunOptions) Run(ctx context.Context) error {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	return o.plan.Run(ctx, sigs)
}

// runArgs are the run command's words as cobra parsed them: `run`, its
// arguments and every flag that was set, the parent commands' included, in
// the form the run command reads back. Built from the parse, not from
// os.Args, so a flag whose value is `run` is not taken for the command.
func runArgs(cmd *cobra.Command, args []string) []string {
	out := append([]string{cmd.Name()}, args...)
	cmd.Flags().Visit(func(f *pflag.Flag) {
		v := f.Value.String()
		switch {
		case f.Value.Type() == "bool" && v == "true":
			out = append(out, "--"+f.Name)
		case f.Value.Type() == "bool", v == "", strings.HasPrefix(v, "-"):
			out = append(out, "--"+f.Name+"="+v)
		default:
			out = append(out, "--"+f.Name, v)
		}
	})
	return out
}

// delegate runs the same command line on binary (schedq-perf for
// --cluster embedded), passing its exit status on.
func (o *PerfRunOptions) delegate(binary string) error {
	args := o.args
	fmt.Fprintf(o.ErrOut, "--cluster %s: running %s %s\n", o.opts.Cluster, binary, strings.Join(args, " "))
	c := exec.Command(binary, args...)
	c.Stdin, c.Stdout, c.Stderr = o.In, o.Out, o.ErrOut
	// Killed, this process takes the other with it, which then cleans up
	// as on an interrupt.
	done, err := run.StartChild(c)
	if err == nil {
		err = <-done
	}
	if err != nil {
		return fmt.Errorf("%s: %w", binary, err)
	}
	return nil
}

// newCmdPerfChild is the hidden command a child process runs.
func newCmdPerfChild(streams genericiooptions.IOStreams) *cobra.Command {
	var specPath string
	cmd := &cobra.Command{
		Use:    run.ChildCommand,
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return run.RunChild(cmd.Context(), specPath, streams.ErrOut)
		},
	}
	cmd.Flags().StringVar(&specPath, "spec", "", "the parent's instructions (JSON)")
	return cmd
}

// NewCmdPerfList returns `perf list`.
func NewCmdPerfList(cfg PerfConfig, streams genericiooptions.IOStreams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the built-in workloads, their purpose and sizes",
		Long: `List the workloads built into this binary (the KEP-5142 scenarios): each one's
purpose, test cases and sizes (the integration-test size runs in seconds, the
performance size in minutes). Run one with: run NAME.`,
		Example: fmt.Sprintf("  %[1]s list\n  %[1]s list -o json", cfg.CommandPath),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			infos, err := workloads.List()
			if err != nil {
				return err
			}
			switch output {
			case "json":
				enc := json.NewEncoder(streams.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"items": infos})
			case "yaml":
				data, err := yaml.Marshal(map[string]any{"items": infos})
				if err != nil {
					return err
				}
				_, err = streams.Out.Write(data)
				return err
			case "":
			default:
				return fmt.Errorf("-o %q: want json or yaml (or nothing for the table)", output)
			}
			tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tTEST CASE\tSIZES\tPURPOSE")
			for _, in := range infos {
				for i, tc := range in.TestCases {
					var sizes []string
					for _, w := range tc.Workloads {
						sizes = append(sizes, fmt.Sprintf("%s (%s)", w.Name, strings.Join(w.Labels, ",")))
					}
					name, purpose := in.Name, in.Purpose
					if i > 0 {
						name, purpose = "", ""
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, tc.Name, strings.Join(sizes, ", "), purpose)
				}
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json or yaml")
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletion("json", "yaml"))
	withoutClusterFlags(cmd)
	return cmd
}

// NewCmdPerfReport returns `perf report`.
func NewCmdPerfReport(cfg PerfConfig, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Print a finished run's table again and rewrite its report.html and summary.txt",
		Long: `Read DIR/results.json, written by run --out DIR, print its table (side by
side when the run compared a feature gate) and rewrite DIR/report.html and
DIR/summary.txt. Nothing is run again.`,
		Example: fmt.Sprintf("  %[1]s run backoff-drain --compare SchedulerPopFromBackoffQ --out results/\n  %[1]s report results/", cfg.CommandPath),
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cmd.SilenceUsage = true
			// Ctrl-C ends the command at once: the read stops with its
			// context, and decoding a large results.json, which does not
			// look at it, is left to end with the process (the files are
			// written whole or not at all, and not once ctx has ended).
			ctx, _, stop := interruptible(cmd.Context())
			defer stop()
			type report struct {
				table string
				err   error
			}
			done := make(chan report, 1)
			go func() {
				table, err := run.Report(ctx, args[0], cfg.CommandPath+" report "+args[0])
				done <- report{table, err}
			}()
			select {
			case r := <-done:
				fmt.Fprint(streams.Out, r.table) // a failed run's table too
				return r.err
			case <-ctx.Done():
				return run.ErrInterrupted
			}
		},
	}
	withoutClusterFlags(cmd)
	return cmd
}

// cleanupTimeout bounds `perf cleanup` as a whole; each call is bounded
// by --request-timeout.
const cleanupTimeout = 2 * time.Minute

// NewCmdPerfCleanup returns `perf cleanup`.
func NewCmdPerfCleanup(cfg PerfConfig, streams genericiooptions.IOStreams) *cobra.Command {
	var runID string
	var all bool
	cmd := &cobra.Command{
		Use:   "cleanup (--run ID | --all)",
		Short: "Remove what a killed run left on a cluster",
		Long: `Delete every pod, node, node lease, persistent volume (claim) and namespace
that carries the run label ` + "schedq.kubectl-schedq.io/run" + ` of run ID (--run), or of
every run (--all), on the cluster of --kubeconfig/--context. A run cleans up
after itself, after Ctrl-C too; this is for one that was killed.`,
		Example: fmt.Sprintf("  %[1]s cleanup --run 3f9a1c02de\n  %[1]s cleanup --all --context test-cluster", cfg.CommandPath),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (runID == "") == !all {
				return errors.New("give --run ID or --all")
			}
			if cfg.ConfigFlags == nil {
				return errors.New("no kubeconfig flags")
			}
			limit, err := requestTimeout(cmd, cfg.ConfigFlags)
			if err != nil {
				return err
			}
			rc, err := restConfig(cfg.ConfigFlags, "")
			if err != nil {
				return err
			}
			rc.QPS, rc.Burst = -1, 0
			rc.Timeout = limit
			client, err := kubernetes.NewForConfig(rc)
			if err != nil {
				return err
			}
			cmd.SilenceUsage = true
			ctx, cancel := context.WithTimeout(cmd.Context(), cleanupTimeout)
			defer cancel()
			began := time.Now()
			removed, err := provider.CleanupRuns(ctx, client, runID, limit)
			if err != nil {
				return fmt.Errorf("%w\nremoved (as the server confirmed): %s; may be left: %s; remove them with: %s",
					fmt.Errorf("cleaning up on %s: %w", rc.Host, err), removed, strings.Join(removed.Left, ", "), cleanupCommand(cfg, runID))
			}
			fmt.Fprintf(streams.Out, "removed %s from %s in %.1fs\n", removed, rc.Host, time.Since(began).Seconds())
			return nil
		},
	}
	cmd.Flags().StringVar(&runID, "run", "", "the run's id (the value of its run label)")
	cmd.Flags().BoolVar(&all, "all", false, "every run's objects")
	return cmd
}

// cleanupCommand is the perf cleanup command line that removes what runID
// (every run when empty) left, on the cluster the flags name.
func cleanupCommand(cfg PerfConfig, runID string) string {
	cmd := cfg.CommandPath + " cleanup --all"
	if runID != "" {
		cmd = cfg.CommandPath + " cleanup --run " + runID
	}
	if cf := cfg.ConfigFlags; cf != nil {
		for _, f := range []struct {
			name string
			v    *string
		}{{"--kubeconfig", cf.KubeConfig}, {"--context", cf.Context}, {"--server", cf.APIServer}} {
			if f.v != nil && *f.v != "" {
				cmd += " " + f.name + " " + *f.v
			}
		}
	}
	return cmd
}
