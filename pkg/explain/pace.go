package explain

import (
	"fmt"
	"sort"
	"time"
)

// defaultPerPod is the scheduler's time per pod when the events do not
// show it: 100 pods a second, a small scheduler_perf cluster's pace.
const defaultPerPod = 10 * time.Millisecond

// pace is about how long the scheduler takes per pod, from the failures
// the events show: when several pods fail one after the other (a cluster
// event moved them all, they are retried in turn), the gaps between their
// failures are the scheduler's time per pod. The failures are cut into runs
// where no gap reaches half a second. typical is the runs' time over their
// gaps, a mean: failures written in a cluster (the pods one binding error
// moved, failing within a millisecond of each other) make most gaps read a
// millisecond while the scheduler takes tens of them per pod between the
// clusters, so it is what a wait in activeQ is timed by. fastest is the
// median gap, the pace of the clusters: a bound on how often a pod can have
// been retried.
func pace(events map[string][]eventSummary) (typical, fastest time.Duration) {
	var ts []time.Time
	for _, evs := range events {
		for _, e := range evs {
			ts = append(ts, e.first)
			if e.series {
				ts = append(ts, e.last)
			}
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	var gaps []time.Duration
	var busy time.Duration
	for i := 1; i < len(ts); i++ {
		if d := ts[i].Sub(ts[i-1]); d < 500*time.Millisecond {
			gaps = append(gaps, d)
			busy += d
		}
	}
	if len(gaps) < 5 {
		return defaultPerPod, defaultPerPod
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	return max(busy/time.Duration(len(gaps)), time.Millisecond), max(gaps[len(gaps)/2], time.Millisecond)
}

// longWait is how many pods ahead make a wait in activeQ long enough that
// its pace, not the pods' order, decides when the pod is tried.
const longWait = 100

// activeRetry is the next retry of a pod in activeQ with ahead pods to be
// popped before it, or of one in flight (being tried now). Pods backing off
// now may be released ahead of it (they are older), so they count too.
//
// The estimate is its turn at the scheduler's pace: the pods before it,
// each taking about perPod.
func activeRetry(now time.Time, ahead int, pl placement, inFlight bool) *NextRetry {
	if inFlight {
		return &NextRetry{Estimate: &now, Earliest: &now, Latest: &now, Note: "being tried now"}
	}
	latest := now.Add(time.Duration(ahead+pl.backingOff)*2*pl.perPod + popSlack(pl))
	estimate := now.Add(time.Duration(ahead) * pl.perPod)
	note := fmt.Sprintf("next pop of activeQ, by priority then time: %d pod(s) before it, at about %v each", ahead, pl.perPod.Round(time.Millisecond))
	if pl.backingOff > 0 {
		note += fmt.Sprintf(", and up to %d backing off that may be released ahead of it", pl.backingOff)
	}
	if ahead >= longWait && !pl.rateMeasured {
		note += "; the pace is read from the failures the events show, which a burst of new pods does not have yet: --attempt-rate measures it"
	}
	return &NextRetry{Estimate: &estimate, Earliest: &now, Latest: &latest, Note: note}
}

// windowEstimate is the likeliest pop in a window [earliest, latest] that
// popSlack widened: the window before the slack, at its middle, then the
// wait in activeQ.
func windowEstimate(earliest, latest time.Time, pl placement) *time.Time {
	core := latest.Add(-popSlack(pl))
	if core.Before(earliest) {
		core = earliest
	}
	t := earliest.Add(core.Sub(earliest) / 2).Add(pl.perPod)
	if t.After(latest) {
		t = latest
	}
	return &t
}

// popSlack is how long after its backoff completes a pod may be popped:
// the flush releases it with the others that complete theirs then, and
// activeQ pops them in turn at the scheduler's pace (twice it, for slack),
// then a scheduling cycle.
func popSlack(pl placement) time.Duration {
	return time.Duration(max(pl.backingOff, 1))*2*pl.perPod + 200*time.Millisecond
}
