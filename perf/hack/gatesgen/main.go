// Command gatesgen writes pkg/workload's table of feature gates from the
// real gates of the k8s.io/kubernetes version perf/go.mod requires. Run it
// from perf/ (`make update-gates` does):
//
//	go run ./hack/gatesgen -o ../pkg/workload/zz_generated.gates.go
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kubectl-schedq/kubectl-schedq/perf/internal/gatestable"
)

func main() {
	out := flag.String("o", "../"+gatestable.Path, "the file to write")
	flag.Parse()
	b, err := gatestable.Render()
	if err == nil {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gatesgen:", err)
		os.Exit(1)
	}
}
