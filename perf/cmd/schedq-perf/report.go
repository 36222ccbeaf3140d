package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-schedq/kubectl-schedq/perf/report"
	"github.com/kubectl-schedq/kubectl-schedq/perf/runner"
)

// newCmdReport re-renders a run's tables and HTML report from its
// results.json, e.g. after an upgrade that shows more.
func newCmdReport(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "report DIR",
		Short: "Print a finished run's table again and rewrite its report.html and summary.txt",
		Long: `Read DIR/results.json, written by schedq-perf run --out DIR, print its table
(side by side when the run compared a feature gate) and rewrite DIR/report.html
and DIR/summary.txt. Nothing is run again.`,
		Example: `  schedq-perf run workloads/backoff-drain.yaml --compare SchedulerPopFromBackoffQ --out results/
  schedq-perf report results/`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(args[0], streams)
		},
	}
}

func runReport(dir string, streams genericiooptions.IOStreams) error {
	path := filepath.Join(dir, "results.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w (give the --out directory of a schedq-perf run)", path, err)
	}
	var all []*runner.Result
	if err := json.Unmarshal(data, &all); err != nil {
		return fmt.Errorf("%s: not the results of a schedq-perf run: %w", path, err)
	}
	if len(all) == 0 {
		return fmt.Errorf("%s: no results", path)
	}
	h := report.HTML{
		Title:     "schedq-perf: " + filepath.Base(all[0].Path),
		Command:   "schedq-perf report " + dir,
		Generated: time.Now(),
		Host:      hostInfo(),
		Results:   all,
	}
	if gate, on, off, ok := comparedGate(all); ok {
		h.Gate, h.Pairs = gate, report.PairResults(on, off)
	}
	table, _, err := writeReport(dir, h)
	if err != nil {
		return err
	}
	fmt.Fprint(streams.Out, table)
	return nil
}

// comparedGate finds the gate of a --compare run: every result's variant
// is GATE=true or GATE=false, for one GATE.
func comparedGate(all []*runner.Result) (gate string, on, off []*runner.Result, ok bool) {
	for _, r := range all {
		g, v, found := strings.Cut(r.Variant, "=")
		if !found || gate != "" && g != gate {
			return "", nil, nil, false
		}
		gate = g
		switch v {
		case "true":
			on = append(on, r)
		case "false":
			off = append(off, r)
		default:
			return "", nil, nil, false
		}
	}
	return gate, on, off, len(on) > 0
}
