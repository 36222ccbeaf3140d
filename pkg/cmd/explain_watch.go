package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain/gather"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
)

// watch explains again at every --interval until ctx ends or the process
// is interrupted. On a terminal the table is redrawn in place; in a pipe,
// each pod whose place changed is written as one JSON object per line.
func (o *ExplainOptions) watch(ctx context.Context) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	last := map[string]string{} // namespace/name → what was shown
	// The source finds the scheduler again at each scrape; continuity says
	// on stderr, once, when the watch lost it and found it again.
	var continuity metricscrape.Continuity
	var prev *metricscrape.Snapshot // the last round's scrape: its rates
	for round := 0; ; round++ {
		if round > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-o.after(o.Interval):
			}
		}
		g, err := o.Gather(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			// Say what went wrong and keep going: the next round may work.
			fmt.Fprintf(o.ErrOut, "error: %v (retrying in %s)\n", err, o.Interval)
			continuity.Observe(nil, err)
			continue
		}
		if !o.NoMetrics {
			if notice := continuity.Observe(g.Snapshot, g.MetricsErr); notice != "" {
				fmt.Fprintf(o.ErrOut, "watch: %s\n", notice)
			}
		}
		if prev != nil && g.Snapshot != nil {
			r, _ := metricscrape.NewRates(prev, g.Snapshot)
			gather.SetRates(g.Input.Metrics, r)
		}
		prev = g.Snapshot
		list := explain.NewExplanationList(explain.Infer(g.Input), g.Warnings, g.NotFound, g.Input.Now)
		if o.terminal {
			if err := o.redrawList(list); err != nil {
				return err
			}
			continue
		}
		if err := o.printChanges(list, last); err != nil {
			return err
		}
	}
}

// redrawList draws one frame of the table over the previous one.
func (o *ExplainOptions) redrawList(list *explain.ExplanationList) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Every %s: kubectl schedq explain    %s\n\n", o.Interval, list.Time.Local().Format("15:04:05"))
	if err := PrintExplanations(&b, list, TableOptions{Wide: o.wide, NoHeaders: o.NoHeaders}); err != nil {
		return err
	}
	fmt.Fprintln(&b)
	PrintCounts(&b, list)
	_, err := fmt.Fprint(o.Out, redraw(b.String()))
	return err
}

// watchLine is one change in a pipe: a pod's explanation, or that it is
// gone (bound, deleted, or no longer selected).
type watchLine struct {
	Time time.Time `json:"time"`
	// Type is Changed (new, or moved) or Gone.
	Type string              `json:"type"`
	Pod  explain.Explanation `json:"pod"`
}

// printChanges writes the pods whose place, state or attempts changed
// since last, and the ones that are gone, and updates last.
func (o *ExplainOptions) printChanges(list *explain.ExplanationList, last map[string]string) error {
	seen := map[string]bool{}
	enc := json.NewEncoder(o.Out)
	for _, e := range list.Items {
		key := e.Namespace + "/" + e.Name
		seen[key] = true
		shown := fmt.Sprintf("%s %s %d", e.State, e.Queue.Word(), e.Attempts)
		if last[key] == shown {
			continue
		}
		last[key] = shown
		if err := enc.Encode(watchLine{Time: list.Time.Time, Type: "Changed", Pod: e}); err != nil {
			return err
		}
	}
	var gone []string
	for key := range last {
		if !seen[key] {
			gone = append(gone, key)
		}
	}
	sort.Strings(gone)
	for _, key := range gone {
		delete(last, key)
		ns, name, _ := strings.Cut(key, "/")
		if err := enc.Encode(watchLine{Time: list.Time.Time, Type: "Gone", Pod: explain.Explanation{Namespace: ns, Name: name}}); err != nil {
			return err
		}
	}
	return nil
}
