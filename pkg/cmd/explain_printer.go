package cmd

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/quote"
)

// TableOptions choose how PrintExplanations lays the list out.
type TableOptions struct {
	// Wide adds the next try's time, the priority, the next-retry window
	// and the triggers.
	Wide bool
	// Detailed prints a paragraph per pod (pods named on the command line).
	Detailed bool
	// NoHeaders leaves out the header line of the table.
	NoHeaders bool
}

// PrintExplanations prints the list: in detail, or one line per pod.
func PrintExplanations(w io.Writer, l *explain.ExplanationList, opts TableOptions) error {
	if opts.Detailed {
		for i, e := range l.Items {
			if i > 0 {
				fmt.Fprintln(w)
			}
			printDetail(w, e, l.Time.Time)
		}
		return nil
	}
	if len(l.Items) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if !opts.NoHeaders {
		header := "NAMESPACE\tNAME\tQUEUE\tCONFIDENCE\tATTEMPTS\tNEXT TRY\tSUMMARY"
		if opts.Wide {
			header = "NAMESPACE\tNAME\tQUEUE\tCONFIDENCE\tATTEMPTS\tNEXT TRY\tPRIORITY\tRETRY WINDOW\tTRIGGERS\tSUMMARY"
		}
		fmt.Fprintln(tw, header)
	}
	for _, e := range l.Items {
		q := e.Queue.Word()
		conf := fmt.Sprintf("%.0f%%", 100*e.Confidence)
		next := nextTry(e.NextRetry, l.Time.Time, opts.Wide)
		if e.State != explain.StatePending {
			q, conf, next = strings.ToLower(string(e.State)), "-", "-"
		}
		ns, name, summary := quote.Cell(e.Namespace), quote.Cell(e.Name), quote.Line(e.Summary)
		if opts.Wide {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", ns, name, q, conf, explain.FormatAttempts(e), next, e.Priority,
				quote.Line(retryWindow(e.NextRetry, l.Time.Time)), quote.Cell(triggers(e.NextRetry, 3)), summary)
		} else {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", ns, name, q, conf, explain.FormatAttempts(e), next, summary)
		}
	}
	return tw.Flush()
}

// PrintCounts writes the count per queue, "13 pod(s): errorBackoffQ 4, …":
// explain puts it on stderr, so that stdout is the table alone.
func PrintCounts(w io.Writer, l *explain.ExplanationList) {
	var parts []string
	for _, loc := range []queue.Location{queue.LocationActive, queue.LocationInFlight, queue.LocationBackoff, queue.LocationErrorBackoff, queue.LocationUnschedulable, queue.LocationGated, queue.LocationUnknown} {
		if n := l.Counts[loc.Word()]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", loc.Word(), n))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "none pending")
	}
	fmt.Fprintf(w, "%d pod(s): %s\n", len(l.Items), strings.Join(parts, ", "))
}

func printDetail(w io.Writer, e explain.Explanation, now time.Time) {
	ns, name := quote.Cell(e.Namespace), quote.Cell(e.Name)
	if e.State != explain.StatePending {
		fmt.Fprintf(w, "%s/%s: %s\n", ns, name, quote.Line(e.Summary))
		return
	}
	fmt.Fprintf(w, "%s/%s: %s (%.0f%% sure)\n", ns, name, e.Queue.Word(), 100*e.Confidence)
	fmt.Fprintf(w, "  %s\n", quote.Line(e.Summary))
	if len(e.Alternatives) > 0 {
		var alts []string
		for _, a := range e.Alternatives {
			alts = append(alts, fmt.Sprintf("%s %.0f%%", a.Queue.Word(), 100*a.Probability))
		}
		fmt.Fprintf(w, "  or:        %s\n", strings.Join(alts, ", "))
	}
	for i, r := range e.Reasons {
		label := "  why:       "
		if i > 0 {
			label = "             "
		}
		fmt.Fprintf(w, "%s%s\n", label, quote.Line(r))
	}
	if e.LastFailure != nil {
		fmt.Fprintf(w, "  failures:  %d seen, last %s (%s ago), %s\n", e.LastFailure.Count, e.LastFailure.Time.Local().Format("15:04:05"), shortDur(now.Sub(e.LastFailure.Time)), quote.Cell(e.LastFailure.Kind))
	}
	if c := e.AttemptsCount; c != nil && c.Kind != explain.AttemptsCounted {
		fmt.Fprintf(w, "  attempts:  %s (%s): %s\n", explain.FormatAttempts(e), attemptsKind(c), c.Basis)
	}
	if e.NextRetry != nil {
		if e.NextRetry.Estimate != nil {
			fmt.Fprintf(w, "  next try:  %s (window: %s)\n", nextTry(e.NextRetry, now, true), quote.Line(retryWindow(e.NextRetry, now)))
		} else {
			fmt.Fprintf(w, "  next try:  %s\n", quote.Line(retryWindow(e.NextRetry, now)))
		}
		if t := triggers(e.NextRetry, 0); t != "" {
			fmt.Fprintf(w, "  on events: %s\n", quote.Line(t))
		}
		if e.NextRetry.Note != "" {
			fmt.Fprintf(w, "  note:      %s\n", quote.Line(e.NextRetry.Note))
		}
	}
	for i, ev := range e.Evidence {
		label := "  evidence:  "
		if i > 0 {
			label = "             "
		}
		fmt.Fprintf(w, "%s%s\n", label, quote.Line(ev))
	}
}

// nextTry is the NEXT TRY cell: how long until the estimated next attempt
// (with its time, when wide); for a pod waiting for an event, the latest
// the leftover flush retries it; "-" when no time can be named.
func nextTry(nr *explain.NextRetry, now time.Time, wide bool) string {
	at := func(t time.Time) string {
		if !wide {
			return ""
		}
		return " (" + t.Local().Format("15:04:05") + ")"
	}
	switch {
	case nr == nil:
		return "-"
	case nr.Estimate != nil && !nr.Estimate.After(now):
		return "now" + at(now)
	case nr.Estimate != nil:
		return shortDur(nr.Estimate.Sub(now)) + at(*nr.Estimate)
	case nr.Latest != nil && nr.Latest.After(now):
		return "event or " + shortDur(nr.Latest.Sub(now)) + at(*nr.Latest)
	}
	return "-"
}

func attemptsKind(c *explain.AttemptsCount) string {
	switch c.Kind {
	case explain.AttemptsAtLeast:
		return "at least, the events hide the rest"
	case explain.AttemptsEstimated:
		if c.Max != nil {
			return fmt.Sprintf("estimated, %d to %d", c.Min, *c.Max)
		}
		return fmt.Sprintf("estimated, at least %d", c.Min)
	}
	return c.Kind
}

// retryWindow renders the next-retry window relative to now.
func retryWindow(nr *explain.NextRetry, now time.Time) string {
	if nr == nil {
		return "-"
	}
	rel := func(t time.Time) string {
		if !t.After(now) {
			return "now"
		}
		return "in " + shortDur(t.Sub(now))
	}
	switch {
	case nr.Earliest == nil && nr.Latest == nil && nr.Note != "":
		return nr.Note
	case nr.Earliest == nil && nr.Latest == nil:
		return "when a trigger event happens"
	case nr.Earliest == nil:
		return "on a trigger event, at the latest " + rel(*nr.Latest)
	case nr.Latest == nil:
		return "from " + rel(*nr.Earliest)
	case nr.Earliest.Equal(*nr.Latest):
		return rel(*nr.Earliest)
	default:
		return rel(*nr.Earliest) + " to " + rel(*nr.Latest)
	}
}

func triggers(nr *explain.NextRetry, most int) string {
	if nr == nil || len(nr.Triggers) == 0 {
		return ""
	}
	t := nr.Triggers
	if most > 0 && len(t) > most {
		return strings.Join(t[:most], ",") + fmt.Sprintf(",+%d", len(t)-most)
	}
	return strings.Join(t, ", ")
}

func shortDur(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}
