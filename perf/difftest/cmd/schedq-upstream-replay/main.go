// Command schedq-upstream-replay is `kubectl schedq simulate --trace` with
// upstream's PriorityQueue (perf/go.mod's k8s.io/kubernetes) in place of the model:
// the same reader, replay and output, so that timing both commands measures
// what the model saves a user end to end. make bench runs both
// (BenchmarkSimulate_EndToEnd).
//
// With --batch it replays many traces in one process: JSON lines on stdin,
// {"seed", "popFromBackoffQ", "trace"} (the trace's text), and the same
// objects on stdout with "out", what the single-trace command prints for
// that trace, plus "error" and "upstreamLogged" when there are any. The
// differential of the older versions (TestDifferential_Versions) feeds it
// thousands of traces that way; upstreamgen builds it against each of
// those versions' queues.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kubectl-schedq/kubectl-schedq/perf/difftest"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace"
)

func main() {
	path := flag.String("trace", "", "Trace file to replay, or - for stdin")
	batch := flag.Bool("batch", false, "Replay the traces of JSON lines on stdin, {\"seed\", \"popFromBackoffQ\", \"trace\"}, and print each with its \"out\"")
	flag.Parse()
	var err error
	if *batch {
		err = runBatch(os.Stdin, os.Stdout)
	} else {
		err = run(*path, os.Stdin, os.Stdout)
	}
	if err != nil {
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
	logged, err := replay(r, stdout)
	// What upstream logged at error level: the trace drove the queue
	// somewhere the scheduler does not.
	for _, e := range logged {
		fmt.Fprintln(os.Stderr, "warning: upstream logged:", e)
	}
	if err != nil {
		return trace.FileError(name, err)
	}
	return nil
}

// replay replays one trace through a fresh upstream queue and returns what
// upstream logged at error level.
func replay(r io.Reader, stdout io.Writer) ([]string, error) {
	var u *difftest.Upstream
	_, err := trace.ReadAndReplay(r, func(cfg trace.Config) (trace.StreamDriver, error) {
		var err error
		u, err = difftest.NewUpstream(cfg, nil)
		return u, err
	}, stdout)
	var logged []string
	if u != nil {
		logged = u.Errors()
		u.Close()
	}
	return logged, err
}

func runBatch(stdin io.Reader, stdout io.Writer) error {
	dec := json.NewDecoder(bufio.NewReader(stdin))
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	for line := 1; ; line++ {
		var rec difftest.BatchRecord
		if err := dec.Decode(&rec); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("stdin: record %d: %v (want JSON lines of {\"seed\", \"popFromBackoffQ\", \"trace\"})", line, err)
		}
		var out bytes.Buffer
		logged, err := replay(strings.NewReader(rec.Trace), &out)
		s := out.String()
		rec.Out, rec.UpstreamLogged = &s, logged
		if err != nil {
			rec.Error = err.Error()
		}
		if err := enc.Encode(rec); err != nil {
			return err
		}
	}
}
