package main

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-schedq/kubectl-schedq/perf/internal/kubeversion"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/cmd"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/provider"

	// allocResourceClaims, which needs the scheduler's structured allocator.
	_ "github.com/kubectl-schedq/kubectl-schedq/perf/dra"
	// The embedded control plane registers itself as --cluster embedded.
	_ "github.com/kubectl-schedq/kubectl-schedq/perf/embedded"
)

// rootOptions are the flags every subcommand shares.
type rootOptions struct {
	// logLevel is klog's verbosity for the control plane's components; their
	// logs go to stderr only when -v is given.
	logLevel int
	showLogs bool
}

// newCmdSchedqPerf returns the root command with every subcommand attached.
func newCmdSchedqPerf(streams genericiooptions.IOStreams) *cobra.Command {
	ro := &rootOptions{}
	root := &cobra.Command{
		Use:   "schedq-perf",
		Short: "Run kube-scheduler performance work on a real, embedded control plane",
		Long: `schedq-perf runs etcd, kube-apiserver and kube-scheduler ` + kubeversion.Get() + ` in one
process, with fake nodes and no kubelet, and measures how the scheduler's queue
behaves.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			ro.showLogs = cmd.Flags().Changed("v")
		},
	}
	root.PersistentFlags().IntVarP(&ro.logLevel, "v", "v", ro.logLevel,
		"show the control plane's logs on stderr, at this klog verbosity (hidden without -v)")
	// The kubeconfig flags of kubectl, for --cluster kubeconfig and cleanup.
	configFlags := genericclioptions.NewConfigFlags(true).WithWarningPrinter(streams)
	configFlags.AddFlags(root.PersistentFlags())
	// The plugin's perf commands, with embedded as the default cluster.
	root.AddCommand(cmd.PerfCommands(cmd.PerfConfig{
		CommandPath:    "schedq-perf",
		DefaultCluster: provider.NameEmbedded,
		RunPath:        []string{"run"},
		ConfigFlags:    configFlags,
		LogLevel:       func() (int, bool) { return ro.logLevel, ro.showLogs },
	}, streams)...)
	root.AddCommand(newCmdCluster(ro, streams))
	root.AddCommand(newCmdDemoSeed(streams))
	return root
}
