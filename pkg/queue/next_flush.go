package queue

import "time"

// What the periodic flushes can change, so that a caller driving them over a
// long idle span (a trace whose next operation is far ahead) can skip the
// instants at which they change nothing.

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
// FlushUnschedulablePodsLeftover changes nothing: no pod has waited longer
// than podMaxInUnschedulablePodsDuration, or those that have are picked to
// no effect. ok is false when no leftover flush can change anything until an
// operation changes the queue.
//
// A pick is without effect only for a gated pod that an earlier flush picked
// already (WasFlushedFromUnschedulable), up to v1.36, whose gating plugin's
// events do not match the flush's wildcard: movePodsToActiveOrBackoffQueue
// skips it. Its only trace is the event recorded for pods in flight, which
// changes nothing once the newest recorded event is that same event. From
// v1.37 every pick re-runs PreEnqueue and moves the pod's FlushTimestamp.
func (p *PriorityQueue) LeftoverFlushIdleUntil() (until time.Time, ok bool) {
	idleTail := p.activeQ.inFlightCount == 0 || p.activeQ.lastEventIs(EventUnschedulableTimeout)
	for _, pi := range p.unschedulablePods.pods {
		if idleTail && pi.WasFlushedFromUnschedulable && pi.Gated() && !p.flushReevaluatesGated &&
			!MatchAnyClusterEvent(EventUnschedulableTimeout, pi.GatingPluginEvents) {
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

// lastEventIs reports whether the newest entry of the in-flight list is e,
// recorded without objects (as the leftover flush records it).
func (aq *activeQueue) lastEventIs(e ClusterEvent) bool {
	if len(aq.inFlightEvents) <= aq.inFlightHead {
		return false
	}
	last := aq.inFlightEvents[len(aq.inFlightEvents)-1]
	return last.isEvent && last.event == e && last.oldObj == nil && last.newObj == nil
}
