package queue

import (
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/internal/heap"
)

// BackoffQOrderingWindowDuration is KEP-5142's ordering window: with
// PopFromBackoffQ, backoff expiries are truncated to it and pods expiring in
// the same window are ordered like activeQ.
const BackoffQOrderingWindowDuration = time.Second

// backoffQueue holds podBackoffQ (pods rejected by plugins) and
// podErrorBackoffQ (pods that failed with an error) — upstream's two heaps
// behind one type. Only podBackoffQ can be popped early (PopFromBackoffQ).
type backoffQueue struct {
	clock                  PassiveClock
	podInitialBackoff      time.Duration
	podMaxBackoff          time.Duration
	popFromBackoffQEnabled bool

	podBackoffQ      *heap.Heap[*QueuedPodInfo]
	podErrorBackoffQ *heap.Heap[*QueuedPodInfo]
	metrics          Metrics
}

func newBackoffQueue(clock PassiveClock, initial, max time.Duration, popFromBackoffQ bool, metrics Metrics, pos *heap.Positions) *backoffQueue {
	bq := &backoffQueue{
		clock:                  clock,
		podInitialBackoff:      initial,
		podMaxBackoff:          max,
		popFromBackoffQEnabled: popFromBackoffQ,
		metrics:                metrics,
	}
	gauge := metrics.Pending(LabelBackoff)
	// lessBackoffCompleted orders by expiry; with PopFromBackoffQ,
	// podBackoffQ is ordered by window, then as activeQ
	// (lessBackoffCompletedWithPriority).
	podOrder := heap.ByExpiry
	if popFromBackoffQ {
		podOrder = heap.ByExpiryThenPriority
	}
	bq.podBackoffQ = heap.New[*QueuedPodInfo](podOrder, gauge, pos, tagBackoffQ)
	bq.podErrorBackoffQ = heap.New[*QueuedPodInfo](heap.ByExpiry, gauge, pos, tagErrorBackoffQ)
	return bq
}

// key is the pod's heap key: its backoff expiry, then as activeQ. Upstream
// computes the expiry at the first comparison and caches it; it is the same
// whenever computed, as its inputs change only while the pod is out of the
// heaps.
func (bq *backoffQueue) key(p *QueuedPodInfo) heap.Key {
	return heap.KeyOf(instant(bq.getBackoffTime(p)), instant(p.Timestamp), p.Pod.Priority)
}

// CalculateBackoffDuration is the backoff after count failures of one kind:
// initial·2^(count−1), capped at max; 0 for count 0.
func CalculateBackoffDuration(initial, max time.Duration, count int) time.Duration {
	if count == 0 {
		return 0
	}
	shift := count - 1
	// Compare before shifting so that a large count cannot overflow (Go
	// defines shifts past the width as 0, as upstream relies on).
	if initial > max>>shift {
		return max
	}
	return initial << shift
}

// AlignToWindow truncates t to the ordering window when PopFromBackoffQ is on.
func AlignToWindow(t time.Time, popFromBackoffQ bool) time.Time {
	if !popFromBackoffQ {
		return t
	}
	return t.Truncate(BackoffQOrderingWindowDuration)
}

// BackoffExpiry is when a pod that last failed at lastFailure, with
// unschedulableCount and consecutiveErrors failures, completes backoff; zero
// when it never backs off (no failure, or backoff disabled with max 0).
func BackoffExpiry(lastFailure time.Time, unschedulableCount, consecutiveErrors int, initial, max time.Duration, popFromBackoffQ bool) time.Time {
	if max == 0 {
		return time.Time{}
	}
	count := unschedulableCount
	if consecutiveErrors > 0 {
		count = consecutiveErrors
	}
	if count == 0 {
		return time.Time{}
	}
	return AlignToWindow(lastFailure.Add(CalculateBackoffDuration(initial, max, count)), popFromBackoffQ)
}

// BackingOff reports whether a pod with this expiry is still backing off at
// now: with PopFromBackoffQ it is until the window after its expiry's.
func BackingOff(expiry, now time.Time, popFromBackoffQ bool) bool {
	return !expiry.Before(AlignToWindow(now, popFromBackoffQ))
}

// BackoffCompletionWindow is when the backoff flush moves a pod with this
// expiry to activeQ: with PopFromBackoffQ, at the whole second after the
// expiry's window (the flush runs on whole seconds); without, at the first
// one-second flush after the expiry (the flush runs every second from the
// scheduler's start, so anywhere within a second).
func BackoffCompletionWindow(expiry time.Time, popFromBackoffQ bool) (earliest, latest time.Time) {
	if popFromBackoffQ {
		t := expiry.Truncate(BackoffQOrderingWindowDuration).Add(BackoffQOrderingWindowDuration)
		return t, t
	}
	return expiry, expiry.Add(BackoffQFlushInterval)
}

// getBackoffTime returns the pod's backoff expiry, cached in
// BackoffExpiration (upstream caches it the same way; the cache is cleared
// only at the next failure).
func (bq *backoffQueue) getBackoffTime(p *QueuedPodInfo) time.Time {
	if bq.podMaxBackoff == 0 {
		return time.Time{}
	}
	if p.BackoffExpiration.IsZero() {
		podMax := bq.podMaxBackoff
		if p.grp != nil {
			podMax = GroupMaxBackoff(podMax, p.Size())
		}
		p.BackoffExpiration = BackoffExpiry(p.Timestamp, p.UnschedulableCount, p.ConsecutiveErrorsCount,
			bq.podInitialBackoff, podMax, bq.popFromBackoffQEnabled)
	}
	return p.BackoffExpiration
}

func (bq *backoffQueue) isPodBackingoff(p *QueuedPodInfo) bool {
	return BackingOff(bq.getBackoffTime(p), bq.clock.Now(), bq.popFromBackoffQEnabled)
}

func (bq *backoffQueue) popAllBackoffCompletedWithQueue(h *heap.Heap[*QueuedPodInfo], out []*QueuedPodInfo) []*QueuedPodInfo {
	for {
		p, ok := h.Peek()
		if !ok || bq.isPodBackingoff(p) {
			return out
		}
		h.Pop()
		out = append(out, p)
	}
}

// popAllBackoffCompleted pops every pod whose backoff completed:
// podBackoffQ's first, then podErrorBackoffQ's.
func (bq *backoffQueue) popAllBackoffCompleted() []*QueuedPodInfo {
	out := bq.popAllBackoffCompletedWithQueue(bq.podBackoffQ, nil)
	return bq.popAllBackoffCompletedWithQueue(bq.podErrorBackoffQ, out)
}

// add puts the pod in podErrorBackoffQ when it has no rejector plugins, else
// in podBackoffQ. As upstream, a pod found in the other heap is taken out of
// it and the incoming metric is not counted. Upstream adds before it takes
// out; taking out first leaves both heaps as upstream's (they are
// independent) and the pod in one heap at a time, as the shared positions
// require.
func (bq *backoffQueue) add(p *QueuedPodInfo, event string) {
	to, other := bq.podBackoffQ, bq.podErrorBackoffQ
	if !p.hasRejectors() {
		to, other = other, to
	}
	moved := other.Delete(p.id)
	to.AddOrUpdate(p.id, bq.key(p), p)
	if !moved {
		incoming(bq.metrics, p, LabelBackoff, event)
	}
}

// update replaces the pod object of the pod with this ID in either heap.
func (bq *backoffQueue) update(id int32, newPod *Pod) *QueuedPodInfo {
	for _, h := range [2]*heap.Heap[*QueuedPodInfo]{bq.podBackoffQ, bq.podErrorBackoffQ} {
		if p, ok := h.Get(id); ok {
			p.Pod = newPod
			h.AddOrUpdate(id, bq.key(p), p)
			return p
		}
	}
	return nil
}

func (bq *backoffQueue) delete(id int32) bool {
	return bq.podBackoffQ.Delete(id) || bq.podErrorBackoffQ.Delete(id)
}

func (bq *backoffQueue) popBackoff() (*QueuedPodInfo, bool) { return bq.podBackoffQ.Pop() }

func (bq *backoffQueue) get(id int32) (*QueuedPodInfo, bool) {
	if p, ok := bq.podBackoffQ.Get(id); ok {
		return p, true
	}
	return bq.podErrorBackoffQ.Get(id)
}

func (bq *backoffQueue) has(id int32) bool {
	return bq.podBackoffQ.Has(id) || bq.podErrorBackoffQ.Has(id)
}

func (bq *backoffQueue) len() int        { return bq.podBackoffQ.Len() + bq.podErrorBackoffQ.Len() }
func (bq *backoffQueue) lenBackoff() int { return bq.podBackoffQ.Len() }

// heaps are podBackoffQ and podErrorBackoffQ.
func (bq *backoffQueue) heaps() [2]*heap.Heap[*QueuedPodInfo] {
	return [2]*heap.Heap[*QueuedPodInfo]{bq.podBackoffQ, bq.podErrorBackoffQ}
}
