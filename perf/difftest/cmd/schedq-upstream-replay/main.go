// Command schedq-upstream-replay is `kubectl schedq simulate --trace` with
// upstream's PriorityQueue (perf/go.mod's k8s.io/kubernetes) in place of the model:
// the same reader, replay and output, so that timing both commands measures
// what the model saves a user end to end. make bench runs both
// (BenchmarkSimulate_EndToEnd).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/kubectl-schedq/kubectl-schedq/perf/difftest"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace"
)

func main() {
	path := flag.String("trace", "", "Trace file to replay, or - for stdin")
	flag.Parse()
	if err := run(*path, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(path string, stdin io.Reader, stdout io.Writer) error {
	if path == "" {
		return errors.New("--trace is required (a file, or - for stdin)")
	}
	r, name := stdin, "stdin"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("cannot read the trace: %w", err)
		}
		defer f.Close()
		r, name = f, path
	}
	var u *difftest.Upstream
	_, err := trace.ReadAndReplay(r, func(cfg trace.Config) (trace.StreamDriver, error) {
		var err error
		u, err = difftest.NewUpstream(cfg, nil)
		return u, err
	}, stdout)
	if u != nil {
		// What upstream logged at error level: the trace drove the queue
		// somewhere the scheduler does not.
		for _, e := range u.Errors() {
			fmt.Fprintln(os.Stderr, "warning: upstream logged:", e)
		}
		u.Close()
	}
	if err != nil {
		return trace.FileError(name, err)
	}
	return nil
}
