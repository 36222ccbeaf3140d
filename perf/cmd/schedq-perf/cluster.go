package main

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// newCmdCluster groups the commands that manage an embedded control plane.
func newCmdCluster(ro *rootOptions, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Manage an embedded control plane",
	}
	cmd.AddCommand(newCmdClusterUp(ro, streams))
	return cmd
}
