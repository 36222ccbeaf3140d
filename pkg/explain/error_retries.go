package explain

import (
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

// popToFailure is how long a pod popped after its backoff typically takes to
// fail again (a scheduling cycle and, for a binding error, the API call);
// maxPopToFailure bounds it where it is used to place the flush that popped
// a pod.
const (
	popToFailure    = 100 * time.Millisecond
	maxPopToFailure = 250 * time.Millisecond
)

// readyGrace is how long an error pod whose backoff completed may wait in a
// busy activeQ: it is near the front (its timestamp is its last failure).
const readyGrace = time.Second

// maxRecent is how many hidden failures an errorCycle remembers.
const maxRecent = 8

// maxHiddenCycles bounds the extrapolation (10 s cycles for a day).
const maxHiddenCycles = 10000

// errorCycle is where a pod failing with errors is in its retry cycle:
// failures put it in the error backoff heap, the backoff flush moves it to
// activeQ when its backoff completes, it is popped and fails again.
type errorCycle struct {
	// failures is the number of consecutive errors, visible and hidden.
	failures int
	// hidden are the failures after the last visible one, inferred.
	hidden int
	// lastFailure is when the latest failure happened (estimated when
	// hidden).
	lastFailure time.Time
	// recent are the estimated times of the latest hidden failures (up to
	// maxRecent), oldest first.
	recent []time.Time
	// popEarliest and popLatest bound the next pop (or the current one,
	// when the pod is being retried).
	popEarliest, popLatest time.Time
}

// extrapolateErrors follows an error pod's retries from its last visible
// failure (at last, the count-th error in a row) to now.
//
// The error backoff flush runs every second — on whole seconds with
// PopFromBackoffQ, at a fixed phase without — so a pod whose backoff
// completed is popped at a flush tick and, failing again a few milliseconds
// later, completes its next backoff (a whole number of seconds) just before
// a tick: each cycle lasts its backoff plus one second, and the pops stay on
// the tick grid. Without PopFromBackoffQ the grid's phase is known from a
// failure that followed such a pop (count ≥ 2); otherwise the pop may be
// anywhere in a one-second window.
//
// A pod past its pop is being retried (in flight, or waiting in activeQ)
// for at most grace; after that its next failure is taken to have happened
// out of sight, and the cycle is extrapolated past it: the last event is a
// series, whose later failures are not written, or the event is late (the
// scheduler's client writes events behind its bindings and status updates,
// at a limited rate).
//
// drift is how long a pod released by the flush may wait in activeQ before
// it is popped (a busy activeQ, from the queue metrics): each hidden cycle
// may end that much later, so its window widens by as much, up to a whole
// cycle, when the phase is lost.
func extrapolateErrors(last time.Time, count int, grace, drift time.Duration, now time.Time, cfg Config, grid flushGrid) *errorCycle {
	c := &errorCycle{failures: count, lastFailure: last}
	backoff := func(n int) time.Duration {
		return queue.CalculateBackoffDuration(cfg.PodInitialBackoff, cfg.PodMaxBackoff, n)
	}
	expiry := func(t time.Time, n int) time.Time { return errorExpiry(t, n, cfg, grid) }
	var lo, hi time.Time
	switch {
	case grid.pfb || grid.known || count < 2:
		lo, hi = grid.completion(expiry(last, count))
	default:
		// The failure came a little after the tick that popped it (at most
		// maxPopToFailure): the tick after its backoff is as much before
		// the tick after last + backoff.
		hi = nextTick(last, last.Add(backoff(count)))
		lo = hi.Add(-maxPopToFailure)
	}
	for i := 0; i < maxHiddenCycles; i++ {
		if now.Before(hi.Add(grace)) {
			break
		}
		// Popped in [lo, hi] and failed again, out of sight.
		c.failures++
		c.hidden++
		c.lastFailure = lo.Add(popToFailure)
		if c.recent = append(c.recent, c.lastFailure); len(c.recent) > maxRecent {
			c.recent = c.recent[1:]
		}
		if grid.pfb || grid.known {
			lo, _ = grid.completion(expiry(c.lastFailure, c.failures))
			_, hi = grid.completion(expiry(hi.Add(drift+popToFailure), c.failures))
		} else {
			d := nextTick(lo, lo.Add(popToFailure+backoff(c.failures))).Sub(lo)
			lo, hi = lo.Add(d), hi.Add(d+drift)
		}
		if cycle := backoff(c.failures) + queue.BackoffQFlushInterval; hi.Sub(lo) > cycle {
			lo = hi.Add(-cycle)
		}
	}
	c.popEarliest, c.popLatest = lo, hi
	return c
}

// nextTick is the first tick after t of a one-second flush that ticked at
// grid.
func nextTick(grid, t time.Time) time.Time {
	n := t.Sub(grid)/queue.BackoffQFlushInterval + 1
	return grid.Add(n * queue.BackoffQFlushInterval)
}

// nextCycle is the pop window of the cycle after the current one, for a pod
// that failed again, out of sight, between its pop and now.
func (c *errorCycle) nextCycle(now time.Time, cfg Config, grid flushGrid) (earliest, latest time.Time) {
	earliest, _ = grid.completion(errorExpiry(c.popEarliest.Add(popToFailure), c.failures+1, cfg, grid))
	_, latest = grid.completion(errorExpiry(now, c.failures+1, cfg, grid))
	return earliest, latest
}

// errorExpiry is when the backoff of a pod that failed with its n-th error
// in a row at t expires.
func errorExpiry(t time.Time, n int, cfg Config, grid flushGrid) time.Time {
	return queue.BackoffExpiry(t, 0, n, cfg.PodInitialBackoff, cfg.PodMaxBackoff, grid.pfb)
}
