// Command schedq-perf runs kube-scheduler performance work on a real control
// plane: `schedq-perf cluster up` starts an embedded etcd, kube-apiserver and
// kube-scheduler (the k8s.io/kubernetes version perf/go.mod requires) in this
// process and keeps them running until interrupted. main only wires the
// streams; each subcommand lives in a file of its own.
package main

import (
	"context"
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/cmd"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	if err := newCmdSchedqPerf(streams).ExecuteContext(context.Background()); err != nil {
		cmd.PrintError(os.Stderr, err)
		os.Exit(1)
	}
}
