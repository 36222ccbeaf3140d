// Command kubectl-schedq is a kubectl plugin that shows what kube-scheduler's
// scheduling queue is doing. All logic lives in pkg/cmd; main only wires it.
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	_ "k8s.io/client-go/plugin/pkg/client/auth" // cloud logins (exec, oidc, …)

	"github.com/kubectl-schedq/kubectl-schedq/pkg/cmd"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	root := cmd.NewCmdSchedq(streams)
	if err := root.Execute(); err != nil {
		cmd.PrintError(os.Stderr, err)
		os.Exit(1)
	}
}
