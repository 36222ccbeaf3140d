// Command mixin-status prints, for each sample of the recorded queue series
// given (the runner's queue_<run>.json), whether `kubectl schedq status`
// raises a signal there, from that sample and the one before as its two
// scrapes: JSON, {"<file>": [bool per sample]}. The mixin's tests
// (hack/mixin-tools/mixintest) compare it with the alert of the same name.
// A module of its own: it builds the plugin's pkg/status, whose
// client_golang is older than the one Prometheus v0.316 needs.
//
// Usage: go run . [-signal NAME] FILE...
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/collect"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/status"
)

func main() {
	signal := flag.String("signal", status.SignalBackoffQWaitsWhileActiveQEmpty, "the signal to report")
	flag.Parse()
	out := map[string][]bool{}
	for _, path := range flag.Args() {
		raised, err := signals(path, *signal)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		out[path] = raised
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// signals reads a recording (<name>.gate-on.json or .gate-off.json: the
// series do not carry the gate) and says where status raises signal.
func signals(path, signal string) ([]bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var q collect.QueueSeries
	if err := json.Unmarshal(data, &q); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	gate := strings.HasSuffix(path, ".gate-on.json")
	if !gate && !strings.HasSuffix(path, ".gate-off.json") {
		return nil, fmt.Errorf("%s: the name must end in .gate-on.json or .gate-off.json", path)
	}
	raised := make([]bool, len(q.Samples))
	for i := 1; i < len(q.Samples); i++ {
		st, err := status.NewSchedulerStatus(snapshot(q, i-1, gate), snapshot(q, i, gate))
		if err != nil {
			return nil, fmt.Errorf("%s: sample %d: %w", path, i, err)
		}
		for _, s := range st.Signals {
			raised[i] = raised[i] || s.Name == signal
		}
	}
	return raised, nil
}

// snapshot is sample i as metricscrape would have read it from the scheduler.
func snapshot(q collect.QueueSeries, i int, gate bool) *metricscrape.Snapshot {
	s := q.Samples[i]
	snap := &metricscrape.Snapshot{
		Time:     q.Start.Add(time.Duration(s.Seconds * float64(time.Second))),
		Pending:  map[string]float64{},
		Incoming: map[metricscrape.QueueEvent]float64{},
		Attempts: map[string]float64{},
		FeatureGates: map[string]metricscrape.FeatureGate{
			metricscrape.GateSchedulerPopFromBackoffQ: {Enabled: gate, Stage: "BETA"},
		},
	}
	for k, v := range s.Pending {
		snap.Pending[k] = v
	}
	for k, v := range s.Incoming {
		queue, event, _ := strings.Cut(k, "/")
		snap.Incoming[metricscrape.QueueEvent{Queue: queue, Event: event}] = v
	}
	for k, v := range s.Attempts {
		snap.Attempts[k] = v
	}
	return snap
}
