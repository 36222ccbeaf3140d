package queue

import "time"

// What the periodic flushes can change, so that a caller driving them over a
// long idle span (a trace whose next operation is far ahead) can skip the
// instants at which they change nothing, and count at once those at which
// they only repeat v1.37's re-check of a gated entity: a span then costs
// one walk of the queue per change, whatever its length.

// EarliestBackoffExpiry returns the earliest backoff expiry in backoffQ:
// FlushBackoffQCompleted moves no pod at an instant not after it. ok is false
// when backoffQ is empty.
func (p *PriorityQueue) EarliestBackoffExpiry() (expiry time.Time, ok bool) {
	for _, h := range [2]interface {
		Peek() (*QueuedPodInfo, bool)
	}{p.backoffQ.podBackoffQ, p.backoffQ.podErrorBackoffQ} {
		// Both heaps are ordered by expiry first.
		if pi, found := h.Peek(); found {
			if e := p.backoffQ.getBackoffTime(pi); !ok || e.Before(expiry) {
				expiry, ok = e, true
			}
		}
	}
	return expiry, ok
}

// LeftoverFlushIdleUntil returns an instant up to which (inclusive)
// FlushUnschedulablePodsLeftover changes nothing but what
// RecheckSettledGated counts: no pod has waited longer than
// podMaxInUnschedulablePodsDuration, or those that have are picked to no
// effect, or are settled gated entities. ok is false when no leftover flush
// can change anything else until an operation changes the queue. since is
// the instant of the last operation: only flushes after it ran.
//
// A pick is without effect, up to v1.36, for a gated pod that an earlier
// flush picked already (WasFlushedFromUnschedulable) and whose gating
// plugin's events do not match the flush's wildcard:
// movePodsToActiveOrBackoffQueue skips it. Its only trace is the event
// recorded for pods in flight, which changes nothing once the newest
// recorded event is that same event. From v1.37 every pick re-runs
// PreEnqueue and moves the pod's FlushTimestamp; see settledGated.
func (p *PriorityQueue) LeftoverFlushIdleUntil(since time.Time) (until time.Time, ok bool) {
	idleTail := p.activeQ.inFlightCount == 0 || p.activeQ.lastEventIs(EventUnschedulableTimeout)
	for _, pi := range p.unschedulablePods.pods {
		if idleTail && pi.WasFlushedFromUnschedulable && pi.Gated() && !p.flushReevaluatesGated &&
			!MatchAnyClusterEvent(EventUnschedulableTimeout, pi.GatingPluginEvents) {
			continue
		}
		if p.settledGated(pi, since) {
			continue
		}
		// Picked once now − last > podMaxInUnschedulablePodsDuration.
		t := pi.Timestamp.Add(pi.flushedAfter).Add(p.podMaxInUnschedulablePodsDuration)
		if !ok || t.Before(until) {
			until, ok = t, true
		}
	}
	return until, ok
}

// settledGated reports whether every later pick of the entity by the
// leftover flush, until an operation changes the queue, only re-checks it
// (v1.37): it stays gated where it is, and the pick's only effects are its
// FlushTimestamp, the incoming count of UnschedulableTimeout and the event
// recorded for pods in flight. That holds for a gated entity in
// unschedulablePods that a flush after since (the last operation) picked:
// PreEnqueue ran after that pick on the pods as they still are (the pick
// re-ran it, or the backoff flush did when the pick sent the entity to
// backoffQ), so it gates again with the same plugin (PreEnqueue plugins
// answer from the pod alone); and a pick sends it through PreEnqueue again
// as long as it is not backing off, or PopFromBackoffQ is on (moveToBackoffQ
// then runs PreEnqueue too). Backing off only ends as time goes on.
func (p *PriorityQueue) settledGated(pi *QueuedPodInfo, since time.Time) bool {
	if !p.flushReevaluatesGated || !pi.Gated() || pi.flushedAfter == 0 {
		return false
	}
	last := pi.Timestamp.Add(pi.flushedAfter)
	if !last.After(since) {
		return false
	}
	// The next pick is after last + podMaxInUnschedulablePodsDuration.
	return p.popFromBackoffQ || !BackingOff(p.backoffQ.getBackoffTime(pi), last.Add(p.podMaxInUnschedulablePodsDuration), false)
}

// RecheckSettledGated does at once what FlushUnschedulablePodsLeftover does
// to the settled gated entities (settledGated) when run with the clock at
// first, first+period, first+2·period, … up to last: each entity is picked
// at every instant whose wait since its last pick exceeds
// podMaxInUnschedulablePodsDuration, and each pick counts its pods in
// scheduler_queue_incoming_pods_total{unschedulable, UnschedulableTimeout}
// and moves its FlushTimestamp; the entity stays where it is. Stepping
// through the instants costs one flush per instant; this costs one walk of
// unschedulablePods, whatever the number of instants.
//
// The caller guarantees that nothing else happens meanwhile: no operation
// since since, no flush of an instant in [first, last] other than these, and
// LeftoverFlushIdleUntil(since) and EarliestBackoffExpiry say the flushes of
// those instants change nothing else. first must be after every flush run
// so far.
func (p *PriorityQueue) RecheckSettledGated(since, first, last time.Time, period time.Duration) {
	if period <= 0 || last.Before(first) {
		return
	}
	span := last.Sub(first)
	d := p.podMaxInUnschedulablePodsDuration
	// After a pick at F the next is at the first instant after F + d.
	step := d/period + 1
	label := p.label(EventUnschedulableTimeout)
	picked := false
	for _, pi := range p.unschedulablePods.pods {
		if !p.settledGated(pi, since) {
			continue
		}
		// The first instant first + j·period with j·period > lastPick + d −
		// first; lastPick is before first, so x cannot overflow.
		x := pi.Timestamp.Add(pi.flushedAfter).Sub(first) + d
		var j time.Duration
		if x >= 0 {
			j = x/period + 1
		}
		if j > span/period {
			continue
		}
		off := j * period
		n := 1 + (span-off)/period/step
		off += (n - 1) * step * period
		p.metrics.Incoming(LabelUnschedulable, label, int(n)*pi.Size())
		pi.flushedAfter = first.Add(off).Sub(pi.Timestamp)
		setWasFlushed(pi, false)
		picked = true
	}
	if picked {
		p.moveRequestCycle = p.activeQ.schedCycle
		if !p.activeQ.lastEventIs(EventUnschedulableTimeout) {
			p.activeQ.addEventIfAnyInFlight(nil, nil, EventUnschedulableTimeout)
		}
	}
}

// lastEventIs reports whether the newest entry of the in-flight list is e,
// recorded without objects (as the leftover flush records it).
func (aq *activeQueue) lastEventIs(e ClusterEvent) bool {
	if len(aq.inFlightEvents) <= aq.inFlightHead {
		return false
	}
	last := aq.inFlightEvents[len(aq.inFlightEvents)-1]
	return last.isEvent && last.event == e && last.oldObj == nil && last.newObj == nil
}
