// Package cmd holds the kubectl-schedq commands. Each command has an Options
// struct with Complete, Validate and Run; no other package imports cobra.
package cmd

import (
	"flag"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/provider"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/quote"
)

// PrintError writes the error a command returned, as main does: "error: "
// and the message, where what came from outside (a server's answer, a
// file's line) is quoted.
func PrintError(w io.Writer, err error) {
	fmt.Fprintf(w, "error: %s\n", quote.Text(err.Error()))
}

// NewCmdSchedq returns the root command with every subcommand attached.
func NewCmdSchedq(streams genericiooptions.IOStreams) *cobra.Command {
	configFlags := genericclioptions.NewConfigFlags(true).WithWarningPrinter(streams)
	// Every API client refuses requests to another origin than the API
	// server's, so a redirect never carries the kubeconfig's credentials
	// elsewhere.
	configFlags.WrapConfigFn = bound.APIConfig

	root := &cobra.Command{
		Use:   "kubectl-schedq",
		Short: "See inside kube-scheduler's scheduling queue",
		Long: `kubectl schedq shows what kube-scheduler's scheduling queue is doing: which
sub-queue (activeQ, backoffQ, unschedulablePods, gated, in flight) each pending
pod sits in, why, and when the scheduler will try it next.`,
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: "kubectl schedq",
		},
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	configFlags.AddFlags(root.PersistentFlags())
	// kubectl's own words ("a value of zero means don't timeout requests")
	// are not what this plugin does: every call is bounded.
	if f := root.PersistentFlags().Lookup("request-timeout"); f != nil {
		f.Usage = fmt.Sprintf("How long to wait for each network call before giving up: a duration (10s, 2m) or a number of seconds; 0 or unset means %s (completion: 5s)", DefaultRequestTimeout)
	}

	// Only klog's -v is exposed; the rest of klog's flags are noise for a plugin.
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	if v := klogFlags.Lookup("v"); v != nil {
		root.PersistentFlags().AddGoFlag(v)
	}

	registerCompletions(root, configFlags)
	setUpProfiling(root)
	setUpHelp(root)
	root.AddCommand(
		NewCmdVersion(streams),
		NewCmdSimulate(streams),
		NewCmdStatus(configFlags, streams),
		NewCmdExplain(configFlags, streams),
		NewCmdPerf(PerfConfig{
			CommandPath:    "kubectl schedq perf",
			DefaultCluster: provider.NameKind,
			RunPath:        []string{"perf", "run"},
			ConfigFlags:    configFlags,
		}, streams),
	)
	// cobra adds completion when it runs; add it now to fix its help.
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			requireSubcommand(c)
			withoutClusterFlags(c)
		}
	}
	return root
}
