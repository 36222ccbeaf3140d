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

	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain/gather"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/quote"
)

// watch explains again at every --interval until ctx ends or the process
// is interrupted. On a terminal the table is redrawn in place; in a pipe,
// or with -o json, each pod that appears, moves or goes is written as a
// kubectl watch event, one per line.
func (o *ExplainOptions) watch(ctx context.Context) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	last := map[string]watched{} // namespace/name → what was written
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
			fmt.Fprintf(o.ErrOut, "error: %s (retrying in %s)\n", quote.Text(err.Error()), o.Interval)
			continuity.Observe(nil, err)
			continue
		}
		if !o.NoMetrics {
			if notice := continuity.Observe(g.Snapshot, g.MetricsErr); notice != "" {
				fmt.Fprintf(o.ErrOut, "watch: %s\n", quote.Line(notice))
			}
		}
		if prev != nil && g.Snapshot != nil {
			r, _ := metricscrape.NewRates(prev, g.Snapshot)
			gather.SetRates(g.Input.Metrics, r)
		}
		prev = g.Snapshot
		list := explain.NewExplanationList(explain.Infer(g.Input), g.Warnings, g.NotFound, g.Input.Now)
		if g.Snapshot != nil {
			list.Metrics = originText(g.Snapshot.Origin, false)
		}
		if o.terminal && o.printObj == nil {
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
	o.printMetricsOrigin(&b, list)
	_, err := fmt.Fprint(o.Out, redraw(b.String()))
	return err
}

// watchEvent is one line of --watch in a pipe or with -o json: a kubectl
// watch event, as kubectl get -w -o json --output-watch-events writes it,
// whose object is the pod's explanation. ADDED is a pod seen for the first
// time (every pod, in the first round), MODIFIED one whose state, queue or
// attempts changed, DELETED one gone (bound, deleted, or no longer
// selected), with the last explanation written of it.
type watchEvent struct {
	Type   watch.EventType     `json:"type"`
	Object explain.Explanation `json:"object"`
}

// watched is what was last written of a pod.
type watched struct {
	shown string
	e     explain.Explanation
}

// printChanges writes the pods that appeared or whose place, state or
// attempts changed since last, and the ones that are gone, and updates last.
func (o *ExplainOptions) printChanges(list *explain.ExplanationList, last map[string]watched) error {
	seen := map[string]bool{}
	enc := json.NewEncoder(o.Out)
	for _, e := range list.Items {
		key := e.Namespace + "/" + e.Name
		seen[key] = true
		shown := fmt.Sprintf("%s %s %d", e.State, e.Queue.Word(), e.Attempts)
		before, known := last[key]
		if known && before.shown == shown {
			continue
		}
		last[key] = watched{shown: shown, e: e}
		typ := watch.Added
		if known {
			typ = watch.Modified
		}
		if err := enc.Encode(watchEvent{Type: typ, Object: e}); err != nil {
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
		e := last[key].e
		delete(last, key)
		if err := enc.Encode(watchEvent{Type: watch.Deleted, Object: e}); err != nil {
			return err
		}
	}
	return nil
}
