package queue

import (
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/internal/heap"
)

// clusterEvent is an event recorded while pods were in flight, kept so that a
// pod failing later can ask whether the event may have helped it.
type clusterEvent struct {
	event          ClusterEvent
	oldObj, newObj any
}

// inFlightEntry is a pod's marker (pod set) or an event in inFlightEvents. A
// marker removed from the middle stays as an entry with neither, skipped.
type inFlightEntry struct {
	pod *Pod
	clusterEvent
	isEvent bool
}

// activeQueue is activeQ (a heap ordered by PrioritySort), the in-flight pods
// and the in-flight events list, and the scheduling cycle counter.
type activeQueue struct {
	queue *heap.Heap[*QueuedPodInfo]
	// inFlightEvents interleaves pod markers and events in arrival order
	// (upstream's list), from inFlightEvents[inFlightHead] on; entry i has
	// the sequence number inFlightBase+i.
	inFlightEvents []inFlightEntry
	inFlightHead   int
	inFlightBase   int64
	// inFlightPods is upstream's map from a popped pod's UID to its marker,
	// kept as the marker's sequence number plus one by the pod's key ID; a
	// pod popped while another with its key but another UID is in flight
	// (deleted, re-created) has its marker in inFlightByUID.
	inFlightPods  []int64
	inFlightByUID map[string]int64
	inFlightCount int
	schedCycle    int64
	metrics       Metrics

	// backoffQ is consulted by pop when activeQ is empty; nil unless
	// PopFromBackoffQ is on.
	backoffQ *backoffQueue
}

func newActiveQueue(metrics Metrics, backoffQ *backoffQueue, pos *heap.Positions) *activeQueue {
	return &activeQueue{
		queue:    heap.New[*QueuedPodInfo](heap.ByPriority, metrics.Pending(LabelActive), pos, tagActiveQ),
		metrics:  metrics,
		backoffQ: backoffQ,
	}
}

// activeKey is PrioritySort's key: priority, then Timestamp.
func activeKey(p *QueuedPodInfo) heap.Key {
	return heap.KeyOf(heap.Instant{}, instant(p.Timestamp), p.Pod.Priority)
}

func instant(t time.Time) heap.Instant {
	return heap.Instant{Sec: t.Unix(), Nsec: int32(t.Nanosecond())}
}

func (aq *activeQueue) add(p *QueuedPodInfo, event string) {
	aq.queue.AddOrUpdate(p.id, activeKey(p), p)
	if p.grp != nil {
		incoming(aq.metrics, p, LabelActive, event)
		return
	}
	aq.metrics.Incoming(LabelActive, event, 1)
}

func (aq *activeQueue) update(id int32, newPod *Pod) *QueuedPodInfo {
	if p, ok := aq.queue.Get(id); ok {
		p.Pod = newPod
		aq.queue.AddOrUpdate(id, activeKey(p), p)
		return p
	}
	return nil
}

// wouldBlock reports whether upstream's Pop would block: activeQ empty and
// nothing it may take from podBackoffQ.
func (aq *activeQueue) wouldBlock() bool {
	return aq.queue.Len() == 0 && (aq.backoffQ == nil || aq.backoffQ.lenBackoff() == 0)
}

// pop hands out activeQ's head, or with PopFromBackoffQ and an empty activeQ
// podBackoffQ's head whether or not its backoff completed. It returns nil
// where upstream would block.
func (aq *activeQueue) pop() *QueuedPodInfo {
	for {
		p, ok := aq.queue.Pop()
		if !ok {
			if aq.backoffQ == nil {
				return nil
			}
			if p, ok = aq.backoffQ.popBackoff(); !ok {
				return nil
			}
			incoming(aq.metrics, p, LabelActive, PopFromBackoffQ)
		}
		if aq.movePodToInFlight(p) {
			return p
		}
		// Upstream discards a pod already in flight and pops again.
	}
}

func (aq *activeQueue) movePodToInFlight(p *QueuedPodInfo) bool {
	if p.grp != nil && p.IsPodGroup() {
		return aq.moveGroupToInFlight(p)
	}
	p.Attempts++
	// By the record's ID, which is p.Pod's: the Pod object is read only
	// when a pod with its key is in flight, which is rare.
	if _, ok := aq.inFlightMarkerOf(p.id, p.Pod); ok {
		return false
	}
	aq.registerInFlight(p)
	aq.schedCycle++
	return true
}

// registerInFlight adds the pod's marker to inFlightEvents.
func (aq *activeQueue) registerInFlight(p *QueuedPodInfo) {
	seq := aq.push(inFlightEntry{pod: p.Pod})
	if n := int(p.id) + 1; n > len(aq.inFlightPods) {
		aq.inFlightPods = append(aq.inFlightPods, make([]int64, max(n-len(aq.inFlightPods), len(aq.inFlightPods)/2))...)
	}
	if aq.inFlightPods[p.id] == 0 {
		aq.inFlightPods[p.id] = seq + 1
	} else {
		if aq.inFlightByUID == nil {
			aq.inFlightByUID = map[string]int64{}
		}
		aq.inFlightByUID[p.Pod.UID] = seq
	}
	aq.inFlightCount++
}

// push appends e to inFlightEvents and returns its sequence number.
func (aq *activeQueue) push(e inFlightEntry) int64 {
	if h := aq.inFlightHead; h >= 1024 && h >= len(aq.inFlightEvents)/2 {
		// Drop the entries before the head.
		n := copy(aq.inFlightEvents, aq.inFlightEvents[h:])
		clear(aq.inFlightEvents[n:])
		aq.inFlightEvents = aq.inFlightEvents[:n]
		aq.inFlightBase += int64(h)
		aq.inFlightHead = 0
	}
	aq.inFlightEvents = append(aq.inFlightEvents, e)
	return aq.inFlightBase + int64(len(aq.inFlightEvents)-1)
}

// inFlightMarker returns the index in inFlightEvents of the in-flight pod's
// marker (pod must carry this queue's ID).
func (aq *activeQueue) inFlightMarker(pod *Pod) (int, bool) { return aq.inFlightMarkerOf(pod.id, pod) }

// inFlightMarkerOf is inFlightMarker for pod, whose ID is id.
func (aq *activeQueue) inFlightMarkerOf(id int32, pod *Pod) (int, bool) {
	if int(id) < len(aq.inFlightPods) {
		if seq := aq.inFlightPods[id] - 1; seq >= 0 {
			if i := int(seq - aq.inFlightBase); aq.inFlightEvents[i].pod == pod || aq.inFlightEvents[i].pod.UID == pod.UID {
				return i, true
			}
		}
	}
	// Guarded: reading pod.UID for an empty map would read the Pod object.
	if len(aq.inFlightByUID) != 0 {
		if seq, ok := aq.inFlightByUID[pod.UID]; ok {
			return int(seq - aq.inFlightBase), true
		}
	}
	return 0, false
}

// clusterEventsForPod returns the index in inFlightEvents from which on the
// entries were recorded after the pod was popped.
func (aq *activeQueue) clusterEventsForPod(pod *Pod) (int, bool) {
	i, ok := aq.inFlightMarker(pod)
	return i + 1, ok
}

func (aq *activeQueue) addEventsIfPodInFlight(oldPod, newPod *Pod, events []ClusterEvent) bool {
	if _, ok := aq.inFlightMarker(newPod); !ok {
		return false
	}
	for _, e := range events {
		aq.push(inFlightEntry{clusterEvent: clusterEvent{event: e, oldObj: oldPod, newObj: newPod}, isEvent: true})
	}
	return true
}

func (aq *activeQueue) addEventIfAnyInFlight(oldObj, newObj any, event ClusterEvent) bool {
	if aq.inFlightCount == 0 {
		return false
	}
	aq.push(inFlightEntry{clusterEvent: clusterEvent{event: event, oldObj: oldObj, newObj: newObj}, isEvent: true})
	return true
}

// done forgets an in-flight pod, and the events at the front of the list that
// no older in-flight pod still needs.
func (aq *activeQueue) done(pod *Pod) {
	i, ok := aq.inFlightMarker(pod)
	if !ok {
		return
	}
	if seq := aq.inFlightBase + int64(i); aq.inFlightPods[pod.id] == seq+1 {
		aq.inFlightPods[pod.id] = 0
	} else {
		delete(aq.inFlightByUID, pod.UID)
	}
	aq.inFlightCount--
	aq.inFlightEvents[i] = inFlightEntry{}
	for ; aq.inFlightHead < len(aq.inFlightEvents); aq.inFlightHead++ {
		if aq.inFlightEvents[aq.inFlightHead].pod != nil {
			return
		}
		aq.inFlightEvents[aq.inFlightHead] = inFlightEntry{}
	}
	// Empty: start over at the slice's beginning.
	aq.inFlightEvents = aq.inFlightEvents[:0]
	aq.inFlightBase += int64(aq.inFlightHead)
	aq.inFlightHead = 0
}

// moveGroupToInFlight puts a pod group's members in flight together, one
// scheduling cycle for the group; a member in flight already is dropped from
// the group (active_queue.go 1.37:268-320), and a group left empty is
// discarded.
func (aq *activeQueue) moveGroupToInFlight(g *QueuedPodInfo) bool {
	g.Attempts++
	for _, m := range g.grp.members {
		m.Attempts++
	}
	kept := g.grp.members[:0]
	for _, m := range g.grp.members {
		if _, ok := aq.inFlightMarkerOf(m.id, m.Pod); ok {
			m.grp = nil
			continue
		}
		aq.registerInFlight(m)
		kept = append(kept, m)
	}
	clear(g.grp.members[len(kept):])
	g.grp.members = kept
	if len(kept) == 0 {
		return false
	}
	aq.schedCycle++
	return true
}
