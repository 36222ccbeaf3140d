package cmd

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"golang.org/x/term"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/quote"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/status"
)

// PrintStatusTable writes the status as plain text for a terminal: the
// scheduler, its gates, the queues, then the busiest events, attempts and
// signals.
func PrintStatusTable(out io.Writer, st *status.SchedulerStatus) error {
	return printStatusTable(out, st, tableOptions{})
}

// tableOptions choose what the status table holds.
type tableOptions struct {
	// wide (-o wide) adds the scheduler's commit, pod, node and Lease
	// holder, and shows every incoming series, quiet ones too.
	wide bool
	// warnings adds the warnings to the table (a --watch frame), where a
	// single status prints them on stderr.
	warnings bool
}

// printStatusTable writes the table.
func printStatusTable(out io.Writer, st *status.SchedulerStatus, opts tableOptions) error {
	w := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintf(w, "SCHEDULER\t%s\n", schedulerLine(st, opts.wide))
	fmt.Fprintf(w, "SOURCE\t%s\n", sourceLine(st.Source, st.Time.Time.Local().Format("2006-01-02 15:04:05"), opts.wide))
	if s := st.Source; len(s.Standby) > 0 {
		fmt.Fprintf(w, "STANDBY\t%s (waiting for Lease %s: their queues are not live)\n", strings.Join(cells(s.Standby), ", "), quote.Cell(s.Lease))
	}
	switch {
	case len(st.Source.Profiles) > 0:
		fmt.Fprintf(w, "PROFILES\t%s (its /configz)\n", strings.Join(cells(st.Source.Profiles), ", "))
	case len(st.Scheduler.Profiles) > 0:
		fmt.Fprintf(w, "PROFILES\t%s\n", strings.Join(cells(st.Scheduler.Profiles), ", "))
	}
	for i, other := range st.Source.Others {
		label := ""
		if i == 0 {
			label = "OTHERS"
		}
		fmt.Fprintf(w, "%s\t%s\n", label, other)
	}
	if len(st.FeatureGates) > 0 {
		gates := make([]string, len(st.FeatureGates))
		for i, g := range st.FeatureGates {
			gates[i] = gateText(g)
		}
		fmt.Fprintf(w, "GATES\t%s\n", strings.Join(gates, "  "))
	} else {
		fmt.Fprintf(w, "GATES\tnot reported (no %s series)\n", metricscrape.FeatureEnabledMetric)
	}
	p := st.Pending
	groups := ""
	if p.IncompletePodGroupPods != nil {
		groups += fmt.Sprintf("  incompletePodGroupPods %d", *p.IncompletePodGroupPods)
	}
	if p.PendingPodGroupPods != nil {
		groups += fmt.Sprintf("  pendingPodGroupPods %d", *p.PendingPodGroupPods)
	}
	fmt.Fprintf(w, "PENDING\tactiveQ %d  backoffQ %d  unschedulablePods %d  gated %d%s  total %d\n",
		p.Active, p.Backoff, p.Unschedulable, p.Gated, groups, p.Total)
	if len(st.QueuedEntities) > 0 {
		ents := make([]string, len(st.QueuedEntities))
		for i, e := range st.QueuedEntities {
			ents[i] = fmt.Sprintf("%s %s %d", quote.Cell(e.Queue), quote.Cell(e.Type), e.Count)
		}
		fmt.Fprintf(w, "ENTITIES\t%s\n", strings.Join(ents, "  "))
	}
	if err := w.Flush(); err != nil {
		return err
	}

	window := "totals only: one snapshot has no rates"
	if st.RateWindow != nil {
		window = "per second over the last " + status.FormatWindow(st.RateWindow.Duration)
	}
	fmt.Fprintf(out, "\nINCOMING (%s)\n", window)
	w = tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	shown := 0
	fmt.Fprintf(w, "QUEUE\tEVENT\tRATE/S\tTOTAL\n")
	for _, in := range st.Incoming {
		// Quiet series are noise once there are rates: show every moving
		// one, and quiet ones only while fewer than five rows are shown.
		if !opts.wide && in.PerSecond != nil && *in.PerSecond == 0 && shown >= 5 {
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\n", quote.Cell(in.Queue), quote.Cell(in.Event), rateText(in.PerSecond), in.Total)
		shown++
	}
	if len(st.Incoming) == 0 {
		fmt.Fprintf(w, "-\t-\t-\t0\n")
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if hidden := len(st.Incoming) - shown; hidden > 0 {
		fmt.Fprintf(out, "(%d quiet series not shown; -o wide lists them all)\n", hidden)
	}

	fmt.Fprintf(out, "\nATTEMPTS\n")
	w = tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintf(w, "RESULT\tRATE/S\tTOTAL\n")
	for _, a := range st.Attempts {
		fmt.Fprintf(w, "%s\t%s\t%d\n", quote.Cell(a.Result), rateText(a.PerSecond), a.Total)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	s := st.Scheduled
	line := fmt.Sprintf("%d pods scheduled", s.Pods)
	if s.SLIp50 != nil && s.SLIp99 != nil {
		line += fmt.Sprintf("; queue entry to bound p50 %s, p99 %s", s.SLIp50.Duration, s.SLIp99.Duration)
	}
	if s.Pods > 0 {
		line += fmt.Sprintf("; %s attempts per pod on average", status.FormatRate(s.MeanAttempts))
	}
	fmt.Fprintf(out, "%s\n", line)

	fmt.Fprintf(out, "\nSIGNALS\n")
	if len(st.Signals) == 0 {
		fmt.Fprintf(out, "  none\n")
	}
	for _, sig := range st.Signals {
		mark := "-"
		if sig.Severity == status.SeverityWarning {
			mark = "!"
		}
		fmt.Fprintf(out, "%s %s: %s\n", mark, sig.Name, quote.Line(sig.Message))
	}
	if len(st.Warnings) > 0 && opts.warnings {
		fmt.Fprintln(out)
		printWarnings(out, st.Warnings)
	}
	if st.Error != "" {
		fmt.Fprintf(out, "\nerror: %s\n(showing the last good scrape; retrying)\n", quote.Text(st.Error))
	}
	return nil
}

func schedulerLine(st *status.SchedulerStatus, wide bool) string {
	s := st.Scheduler
	v := "kube-scheduler"
	if s.Version != "" {
		v += " " + quote.Cell(s.Version)
	} else {
		v += " (version not reported)"
	}
	var extra []string
	if s.GoVersion != "" {
		extra = append(extra, quote.Cell(s.GoVersion))
	}
	if s.Platform != "" {
		extra = append(extra, quote.Cell(s.Platform))
	}
	if wide && s.GitCommit != "" {
		extra = append(extra, "commit "+quote.Cell(s.GitCommit))
	}
	switch {
	case s.ModelNote != "":
		extra = append(extra, "queue model "+s.Model+": "+quote.Line(s.ModelNote))
	case s.Model != "":
		extra = append(extra, "queue model "+s.Model)
	}
	if s.Leader != nil {
		if *s.Leader {
			extra = append(extra, "leader")
		} else {
			extra = append(extra, "NOT the leader")
		}
	}
	if len(extra) > 0 {
		v += " (" + strings.Join(extra, ", ") + ")"
	}
	return v
}

func sourceLine(o metricscrape.Origin, at string, wide bool) string {
	return originText(o, wide) + ", at " + at
}

// originText says where metrics came from: the platform discovery found
// and the way to its scheduler, or the source a flag named; wide adds the
// pod, node and Lease holder.
func originText(o metricscrape.Origin, wide bool) string {
	o.Address, o.Node, o.Target = quote.Cell(o.Address), quote.Cell(o.Node), quote.Cell(o.Target)
	o.Pod, o.LeaseHolder = quote.Cell(o.Pod), quote.Cell(o.LeaseHolder)
	var s string
	switch o.Kind {
	case metricscrape.OriginPortForward:
		s = fmt.Sprintf("port-forward to %s", o.Address)
		if o.Node != "" {
			s += " on node " + o.Node
		}
		if o.Candidates > 1 {
			s += fmt.Sprintf(", the holder of Lease %s among %d scheduler pods", o.Lease, o.Candidates)
		}
	case metricscrape.OriginKubeconfig:
		s = o.Address + " (from the kubeconfig)"
	case metricscrape.OriginPrometheus:
		s = "Prometheus " + o.Address
		if o.Target != "" {
			s += " target " + o.Target
		}
		if o.Candidates > 1 {
			s += fmt.Sprintf(" (chosen among %d; narrow with --prometheus-selector)", o.Candidates)
		}
	case metricscrape.OriginFile:
		s = "file " + o.Address
	case metricscrape.OriginAPIServer:
		s = "the API server's " + o.Address
	default:
		s = o.Address
	}
	if wide {
		if o.Pod != "" && !strings.Contains(o.Address, o.Pod) {
			s += ", pod " + o.Pod
		}
		if o.Node != "" && o.Kind != metricscrape.OriginPortForward {
			s += ", node " + o.Node
		}
		if o.LeaseHolder != "" {
			s += ", Lease holder " + o.LeaseHolder
		}
	}
	if o.Platform != "" {
		s = o.Platform + ": " + s
	}
	return s
}

func gateText(g status.FeatureGateStatus) string {
	state := "off"
	if g.Enabled {
		state = "on"
	}
	if g.Stage != "" {
		return fmt.Sprintf("%s=%s (%s)", quote.Cell(g.Name), state, quote.Cell(g.Stage))
	}
	return fmt.Sprintf("%s=%s", quote.Cell(g.Name), state)
}

func rateText(r *float64) string {
	if r == nil {
		return "-"
	}
	return status.FormatRate(*r)
}

// printWarnings writes each warning on a line of its own, quoted: they
// name series, files and servers' answers.
func printWarnings(w io.Writer, warnings []string) {
	for _, warning := range warnings {
		fmt.Fprintf(w, "warning: %s\n", quote.Line(warning))
	}
}

// cells quotes each of values as a cell.
func cells(values []string) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = quote.Cell(v)
	}
	return out
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	return term.IsTerminal(int(f.Fd()))
}
