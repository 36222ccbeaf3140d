package queue

import (
	"container/list"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/internal/heap"
)

// clusterEvent is an event recorded while pods were in flight, kept so that a
// pod failing later can ask whether the event may have helped it.
type clusterEvent struct {
	event          ClusterEvent
	oldObj, newObj any
}

// activeQueue is activeQ (a heap ordered by the profile's QueueSort less
// function), the in-flight pods and the in-flight events list, and the
// scheduling cycle counter.
type activeQueue struct {
	queue *heap.Heap[*QueuedPodInfo]
	// inFlightPods maps a popped pod's UID to its marker in inFlightEvents.
	inFlightPods map[string]*list.Element
	// inFlightEvents interleaves pod markers (*Pod) and events
	// (*clusterEvent) in arrival order.
	inFlightEvents *list.List
	schedCycle     int64
	metrics        Metrics

	// backoffQ is consulted by pop when activeQ is empty; nil unless
	// PopFromBackoffQ is on.
	backoffQ *backoffQueue
}

func newActiveQueue(metrics Metrics, backoffQ *backoffQueue) *activeQueue {
	return &activeQueue{
		queue:          heap.New[*QueuedPodInfo](heap.ByPriority, metrics.Pending(LabelActive)),
		inFlightPods:   map[string]*list.Element{},
		inFlightEvents: list.New(),
		metrics:        metrics,
		backoffQ:       backoffQ,
	}
}

// activeKey is PrioritySort's key: priority, then Timestamp.
func activeKey(p *QueuedPodInfo) heap.Key {
	return heap.Key{Priority: p.Pod.Priority, Timestamp: instant(p.Timestamp)}
}

func instant(t time.Time) heap.Instant {
	return heap.Instant{Sec: t.Unix(), Nsec: int32(t.Nanosecond())}
}

func (aq *activeQueue) add(p *QueuedPodInfo, event string) {
	aq.queue.AddOrUpdate(p.id, activeKey(p), p)
	aq.metrics.Incoming(LabelActive, event)
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
			aq.metrics.Incoming(LabelActive, PopFromBackoffQ)
		}
		if aq.movePodToInFlight(p) {
			return p
		}
		// Upstream discards a pod already in flight and pops again.
	}
}

func (aq *activeQueue) movePodToInFlight(p *QueuedPodInfo) bool {
	p.Attempts++
	if _, ok := aq.inFlightPods[p.Pod.UID]; ok {
		return false
	}
	aq.inFlightPods[p.Pod.UID] = aq.inFlightEvents.PushBack(p.Pod)
	aq.schedCycle++
	return true
}

// clusterEventsForPod returns the events recorded after the pod was popped.
func (aq *activeQueue) clusterEventsForPod(uid string) ([]*clusterEvent, bool) {
	marker, ok := aq.inFlightPods[uid]
	if !ok {
		return nil, false
	}
	var events []*clusterEvent
	for e := marker.Next(); e != nil; e = e.Next() {
		if ev, ok := e.Value.(*clusterEvent); ok {
			events = append(events, ev)
		}
	}
	return events, true
}

func (aq *activeQueue) addEventsIfPodInFlight(oldPod, newPod *Pod, events []ClusterEvent) bool {
	if _, ok := aq.inFlightPods[newPod.UID]; !ok {
		return false
	}
	for _, e := range events {
		aq.inFlightEvents.PushBack(&clusterEvent{event: e, oldObj: oldPod, newObj: newPod})
	}
	return true
}

func (aq *activeQueue) addEventIfAnyInFlight(oldObj, newObj any, event ClusterEvent) bool {
	if len(aq.inFlightPods) == 0 {
		return false
	}
	aq.inFlightEvents.PushBack(&clusterEvent{event: event, oldObj: oldObj, newObj: newObj})
	return true
}

// done forgets an in-flight pod, and the events at the front of the list that
// no older in-flight pod still needs.
func (aq *activeQueue) done(uid string) {
	marker, ok := aq.inFlightPods[uid]
	if !ok {
		return
	}
	delete(aq.inFlightPods, uid)
	aq.inFlightEvents.Remove(marker)
	for {
		e := aq.inFlightEvents.Front()
		if e == nil {
			return
		}
		if _, ok := e.Value.(*clusterEvent); !ok {
			return
		}
		aq.inFlightEvents.Remove(e)
	}
}
