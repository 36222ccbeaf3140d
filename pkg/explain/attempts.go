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
// it has been out of sight.

// Results of scheduler_schedule_attempts_total.
const (
	resultUnschedulable = "unschedulable"
	resultError         = "error"
)

// hiddenFailures is how many failures the scheduler counted that no event
// shows, cluster-wide, by kind; known is false when that cannot be told (no
// counters, events of one namespace only, or fewer attempts counted than
// the events show: a scheduler that restarted since).
type hiddenFailures struct {
	known bool
	fit   float64
}

func countHidden(in Input, events map[string][]eventSummary) hiddenFailures {
	m := in.Metrics
	if m == nil || in.EventsNamespaced {
		return hiddenFailures{}
	}
	u, ok := m.Attempts[resultUnschedulable]
	if !ok {
		return hiddenFailures{}
	}
	seen := 0.0
	for _, evs := range events {
		for _, e := range evs {
			if e.fit {
				seen += float64(e.count)
			}
		}
	}
	if u < seen {
		return hiddenFailures{}
	}
	return hiddenFailures{known: true, fit: u - seen}
}

// shareHidden gives each pod rejected by plugins whose latest event is a
// series its share of the hidden failures: in proportion to how long it
// has been since its last visible failure, which is how long its failures
// have been out of sight. A pod still rejected by plugins now failed that
// way each time.
func shareHidden(pods []*podFacts, h hiddenFailures, now time.Time) {
	var lagging []*podFacts
	total := 0.0
	for _, f := range pods {
		if f.state != StatePending || f.category != catFitFailed || !f.lagging {
			continue
		}
		lagging = append(lagging, f)
		total += exposure(f, now)
	}
	for _, f := range lagging {
		if !h.known {
			f.attempts = &AttemptsCount{Kind: AttemptsAtLeast, Min: f.failure.Count,
				Basis: "the pod's latest event is a series, whose later failures the scheduler does not write, and the scheduler's attempts counter is not available to estimate them"}
			continue
		}
		share := 0.0
		if total > 0 {
			share = h.fit * exposure(f, now) / total
		}
		hidden := int(math.Round(share))
		most := f.failure.Count + int(math.Ceil(h.fit))
		f.hiddenAttempts = hidden
		f.attempts = &AttemptsCount{Kind: AttemptsEstimated, Min: f.failure.Count, Max: &most,
			Basis: fmt.Sprintf("the scheduler counted %.0f unschedulable attempts that no event shows; this pod's share, by the time since its last visible failure (%s): %d", h.fit, shortDuration(exposure(f, now)), hidden)}
	}
}

// exposure is how long f's failures have been out of sight, in seconds (at
// least a tenth of one).
func exposure(f *podFacts, now time.Time) float64 {
	return max(now.Sub(f.failure.Time).Seconds(), 0.1)
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
