package explain

import (
	"fmt"
	"math"
	"time"
)

// The scheduler's event recorder writes a pod's first failure, and the
// second of a series (the same pod at the same resourceVersion) as its
// count; later failures of the series reach the API server only when the
// series is refreshed (every 30 minutes) or ends (6 minutes idle). A pod
// retried over and over shows 3 failures while the scheduler counts
// dozens. What else tells how many: scheduler_schedule_attempts_total, the
// scheduler's own count of attempts by result, against the failures all the
// events show, is how many the events hide in all; the pods whose latest
// event is a series are the ones hiding them, each in proportion to how long
// it has been out of sight (its hiddenSpan: a pod moved over and over
// starts a new event now and then, and each series before it hid failures
// too).

// Results of scheduler_schedule_attempts_total.
const (
	resultUnschedulable = "unschedulable"
	resultError         = "error"
)

// hiddenFailures is how many failures the scheduler counted that no event
// shows, cluster-wide, less those an error pod's rhythm already accounts
// for (errorCycle); known is false when that cannot be told (no counters,
// events of one namespace only, or fewer attempts counted than the events
// show: a scheduler that restarted since).
type hiddenFailures struct {
	known bool
	fit   float64
}

// countHidden compares the scheduler's failed attempts (unschedulable and
// error: a pod-group member's failure is counted as unschedulable while its
// event is not a FitError) with the failures visible: each pending pod's own
// (its events, or its condition when its event is not written yet) and the
// events of the pods that are no longer pending (or of earlier pods of a
// pending pod's name).
func countHidden(in Input, events map[string][]eventSummary, facts map[string]*podFacts) hiddenFailures {
	m := in.Metrics
	if m == nil || in.EventsNamespaced {
		return hiddenFailures{}
	}
	u, ok := m.Attempts[resultUnschedulable]
	if !ok {
		return hiddenFailures{}
	}
	failed := u + m.Attempts[resultError]
	seen := 0.0
	for k, evs := range events {
		f := facts[k]
		for _, e := range evs {
			// A pending pod's own failures are counted below; an earlier
			// pod of its name is not it.
			if f == nil || f.state != StatePending || e.uid != "" && f.pod.UID != "" && e.uid != string(f.pod.UID) {
				seen += float64(e.count)
			}
		}
	}
	accounted := 0.0
	for _, f := range facts {
		if f.state != StatePending || f.failure == nil {
			continue
		}
		seen += float64(f.failure.Count)
		if f.cycle != nil {
			accounted += float64(f.cycle.hidden)
		}
	}
	if failed < seen {
		return hiddenFailures{}
	}
	return hiddenFailures{known: true, fit: max(failed-seen-accounted, 0)}
}

// shareHidden gives each pod rejected by plugins that has an event series
// its share of the hidden failures: in proportion to how long its failures
// have been out of sight (hiddenSpan), since the last visible failure of
// each of its series. A pod still rejected by plugins now failed that
// way each time. No pod gets more than it can have had: the pods moved
// together are retried in turn, so a pod fails again at most once per
// round of all of them at the scheduler's pace (perPod). What is left over
// is failures whose events are not written yet: the recorder writes behind
// the scheduler.
func shareHidden(pods []*podFacts, h hiddenFailures, perPod time.Duration) {
	var lagging []*podFacts
	total := 0.0
	for _, f := range pods {
		if f.state != StatePending || f.category != catFitFailed || f.hiddenSpan <= 0 {
			continue
		}
		lagging = append(lagging, f)
		total += exposure(f)
	}
	round := float64(len(lagging)) * perPod.Seconds()
	for _, f := range lagging {
		if !h.known {
			f.attempts = &AttemptsCount{Kind: AttemptsAtLeast, Min: f.failure.Count,
				Basis: "the pod's failures are in an event series, whose later failures the scheduler does not write, and the scheduler's attempts counter is not available to estimate them"}
			continue
		}
		share := 0.0
		if total > 0 {
			share = h.fit * exposure(f) / total
		}
		if round > 0 {
			share = min(share, exposure(f)/round)
		}
		hidden := int(math.Round(share))
		most := f.failure.Count + int(math.Ceil(h.fit))
		f.hiddenAttempts = hidden
		f.attempts = &AttemptsCount{Kind: AttemptsEstimated, Min: f.failure.Count, Max: &most,
			Basis: fmt.Sprintf("the scheduler counted %.0f failed attempts that no event shows; this pod's share, by how long its failures were out of sight (%s, after its event series' last written failures) and at most one per round of the %d pods retried in turn: %d",
				h.fit, shortDuration(exposure(f)), len(lagging), hidden)}
	}
}

// exposure is how long f's failures have been out of sight, in seconds (at
// least a tenth of one).
func exposure(f *podFacts) float64 {
	return max(f.hiddenSpan.Seconds(), 0.1)
}

func shortDuration(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(100 * time.Millisecond).String()
}

// errorAttempts: the failures of an error pod after its last visible one
// are extrapolated from its backoff's rhythm (errorCycle).
func errorAttempts(f *podFacts) *AttemptsCount {
	if f.cycle == nil || f.cycle.hidden == 0 {
		return nil
	}
	return &AttemptsCount{Kind: AttemptsEstimated, Min: f.failure.Count,
		Basis: fmt.Sprintf("%d failure(s) after the last visible one, from the error backoff's rhythm", f.cycle.hidden)}
}
