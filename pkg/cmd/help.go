package cmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// noClusterFlags marks a command that reads no cluster, so that of the
// global flags only -v applies to it.
const noClusterFlags = "schedq.kubectl-schedq.io/no-cluster-flags"

// usageTemplate is cobra's, with the long list of global flags replaced by
// a line that says which apply and where they are listed, as kubectl does
// with `kubectl options`.
const usageTemplate = `Usage:{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}

Available Commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if and .HasParent .HasAvailableLocalFlags}}

Flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}

{{globalFlagsNote .}}{{if .HasAvailableSubCommands}}
Use "{{.CommandPath}} [command] --help" for more information about a command.{{end}}
`

// setUpHelp installs the usage template, the options command, and the
// hint after a usage error.
func setUpHelp(root *cobra.Command) {
	cobra.AddTemplateFunc("globalFlagsNote", func(c *cobra.Command) string {
		options := fmt.Sprintf("%q", root.DisplayName()+" options")
		switch {
		case !c.HasParent():
			return "Use " + options + " for the global flags (kubeconfig, context, namespace, --request-timeout, -v)."
		case c.Annotations[noClusterFlags] != "":
			return "Of the global flags only -v applies (see " + options + ")."
		}
		return "The global flags apply: --kubeconfig, --context, -n, --request-timeout, -v, … (see " + options + ")."
	})
	root.SetUsageTemplate(usageTemplate)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError(c, err) })
	root.AddCommand(&cobra.Command{
		Use:         "options",
		Short:       "Print the flags every command takes (kubeconfig, context, namespace, …)",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{noClusterFlags: "true"},
		Run: func(c *cobra.Command, _ []string) {
			fmt.Fprintf(c.OutOrStdout(), "The following options can be passed to any command:\n\n%s", root.PersistentFlags().FlagUsages())
		},
	})
}

// requireSubcommand makes a command that only groups others refuse what is
// not one of them (cobra prints the help and exits 0 for a command that
// cannot run), and print its help when given nothing.
func requireSubcommand(c *cobra.Command) {
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return c.Help()
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
		if s := c.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
		}
		return usageError(c, errors.New(msg))
	}
}

// withoutClusterFlags marks c and its subcommands as reading no cluster,
// so that their help does not list flags that do not apply.
func withoutClusterFlags(c *cobra.Command) {
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[noClusterFlags] = "true"
	for _, sub := range c.Commands() {
		withoutClusterFlags(sub)
	}
}

// usageError points a mistyped command line at its help.
func usageError(c *cobra.Command, err error) error {
	return fmt.Errorf("%w\nSee '%s -h' for help and examples", err, c.CommandPath())
}

// validateThenRun is the RunE of a command that needs no cluster: its
// options checked (a usage error names the help), then run.
func validateThenRun(o interface {
	Validate() error
	Run() error
}) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		if err := o.Validate(); err != nil {
			return usageError(cmd, err)
		}
		return o.Run()
	}
}
