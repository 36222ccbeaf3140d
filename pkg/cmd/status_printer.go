package cmd

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"golang.org/x/term"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/status"
)

// PrintStatusTable writes the status as plain text for a terminal: the
// scheduler, its gates, the queues, then the busiest events, attempts and
// signals.
func PrintStatusTable(out io.Writer, st *status.SchedulerStatus) error {
	return printStatusTable(out, st, false)
}

// printStatusTable writes the table; withWarnings adds the warnings to it
// (a --watch frame), where a single status prints them on stderr.
func printStatusTable(out io.Writer, st *status.SchedulerStatus, withWarnings bool) error {
	w := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintf(w, "SCHEDULER\t%s\n", schedulerLine(st))
	fmt.Fprintf(w, "SOURCE\t%s\n", sourceLine(st.Source, st.Time.Time.Local().Format("2006-01-02 15:04:05")))
	if s := st.Source; len(s.Standby) > 0 {
		fmt.Fprintf(w, "STANDBY\t%s (waiting for Lease %s: their queues are not live)\n", strings.Join(s.Standby, ", "), s.Lease)
	}
	switch {
	case len(st.Source.Profiles) > 0:
		fmt.Fprintf(w, "PROFILES\t%s (its /configz)\n", strings.Join(st.Source.Profiles, ", "))
	case len(st.Scheduler.Profiles) > 0:
		fmt.Fprintf(w, "PROFILES\t%s\n", strings.Join(st.Scheduler.Profiles, ", "))
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
			ents[i] = fmt.Sprintf("%s %s %d", e.Queue, e.Type, e.Count)
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
		if in.PerSecond != nil && *in.PerSecond == 0 && shown >= 5 {
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\n", in.Queue, in.Event, rateText(in.PerSecond), in.Total)
		shown++
	}
	if len(st.Incoming) == 0 {
		fmt.Fprintf(w, "-\t-\t-\t0\n")
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if hidden := len(st.Incoming) - shown; hidden > 0 {
		fmt.Fprintf(out, "(%d quiet series not shown; -o yaml lists them all)\n", hidden)
	}

	fmt.Fprintf(out, "\nATTEMPTS\n")
	w = tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintf(w, "RESULT\tRATE/S\tTOTAL\n")
	for _, a := range st.Attempts {
		fmt.Fprintf(w, "%s\t%s\t%d\n", a.Result, rateText(a.PerSecond), a.Total)
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
		fmt.Fprintf(out, "%s %s: %s\n", mark, sig.Name, sig.Message)
	}
	if len(st.Warnings) > 0 && withWarnings {
		fmt.Fprintln(out)
		for _, w := range st.Warnings {
			fmt.Fprintf(out, "warning: %s\n", w)
		}
	}
	if st.Error != "" {
		fmt.Fprintf(out, "\nerror: %s\n(showing the last good scrape; retrying)\n", st.Error)
	}
	return nil
}

func schedulerLine(st *status.SchedulerStatus) string {
	s := st.Scheduler
	v := "kube-scheduler"
	if s.Version != "" {
		v += " " + s.Version
	} else {
		v += " (version not reported)"
	}
	var extra []string
	if s.GoVersion != "" {
		extra = append(extra, s.GoVersion)
	}
	if s.Platform != "" {
		extra = append(extra, s.Platform)
	}
	switch {
	case s.ModelNote != "":
		extra = append(extra, "queue model "+s.Model+": "+s.ModelNote)
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

func sourceLine(o metricscrape.Origin, at string) string {
	return originText(o) + ", at " + at
}

// originText says where metrics came from: the platform discovery found
// and the way to its scheduler, or the source a flag named.
func originText(o metricscrape.Origin) string {
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
		return fmt.Sprintf("%s=%s (%s)", g.Name, state, g.Stage)
	}
	return fmt.Sprintf("%s=%s", g.Name, state)
}

func rateText(r *float64) string {
	if r == nil {
		return "-"
	}
	return status.FormatRate(*r)
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	return term.IsTerminal(int(f.Fd()))
}
