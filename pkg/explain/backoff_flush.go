package explain

import (
	"sort"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

// flushGrid is when the backoff flush runs. With PopFromBackoffQ it runs on
// whole seconds; without, every second from the scheduler's start, at a
// phase explain learns from the error pods: a pod that failed with an error
// again after its backoff was popped by a flush a few milliseconds before.
type flushGrid struct {
	pfb bool
	// anchor is a tick upper bound, valid when known.
	anchor time.Time
	known  bool
}

// maxGridSamples bounds the failures the phase is learnt from.
const maxGridSamples = 64

// learnGrid finds the phase from failures that followed a flush pop: the
// tick is at most maxPopToFailure before each; the phase that most of them
// agree on, taken at the earliest failure of that cluster.
func learnGrid(pfb bool, afterFlush []time.Time) flushGrid {
	g := flushGrid{pfb: pfb}
	if pfb || len(afterFlush) == 0 {
		return g
	}
	sort.Slice(afterFlush, func(i, j int) bool { return afterFlush[i].After(afterFlush[j]) })
	if len(afterFlush) > maxGridSamples {
		afterFlush = afterFlush[:maxGridSamples]
	}
	frac := func(t, ref time.Time) time.Duration {
		d := t.Sub(ref) % queue.BackoffQFlushInterval
		if d < 0 {
			d += queue.BackoffQFlushInterval
		}
		return d
	}
	best, bestN := time.Time{}, 0
	for _, c := range afterFlush {
		n := 0
		for _, t := range afterFlush {
			if frac(t, c) <= maxPopToFailure {
				n++
			}
		}
		// Ties: the earliest phase of the cluster.
		if n > bestN || n == bestN && frac(best, c) <= maxPopToFailure && !best.IsZero() && frac(best, c) > 0 {
			best, bestN = c, n
		}
	}
	g.anchor, g.known = best, true
	return g
}

// completion is when the flush moves a pod whose backoff expires at expiry:
// the first tick after it, as a window.
func (g flushGrid) completion(expiry time.Time) (earliest, latest time.Time) {
	if g.pfb || !g.known {
		return queue.BackoffCompletionWindow(expiry, g.pfb)
	}
	tick := nextTick(g.anchor, expiry)
	if tick.Sub(expiry) > queue.BackoffQFlushInterval {
		tick = tick.Add(-queue.BackoffQFlushInterval)
	}
	return maxTime(expiry, tick.Add(-maxPopToFailure)), tick
}
