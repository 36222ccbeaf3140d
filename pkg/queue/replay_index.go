package queue

import "slices"

// ReplayIndex is for replays only (kubectl schedq simulate), not a part of
// the scheduler's queue: a replay numbers its pods densely from 0, as a trace
// does, and gives the queue each pod's number as the pod's ID, so that the
// queue never hashes a pod's key and the replay finds a pod by its number.
// Upstream's queue has no such thing: a scheduler keys pods by name only.
type ReplayIndex struct{ q *PriorityQueue }

// NewReplayIndex returns the replay index of q.
func NewReplayIndex(q *PriorityQueue) *ReplayIndex { return &ReplayIndex{q: q} }

// NamePod names pod key, whose namespace is key[:ns] (key[ns] is '/', the
// rest the pod's name), and gives it the ID id. The caller keeps one ID per
// key; IDs should be small, as the sub-queues index slices by them. The
// names are cut from key rather than given and compared with it, which a
// replay would pay for each of its hundreds of thousands of new pods. It
// panics if id is another key's.
func (x *ReplayIndex) NamePod(pod *Pod, key string, ns int, id int32) {
	p := x.q
	pod.Namespace, pod.Name = key[:ns], key[ns+1:]
	for int(id) >= len(p.keys) {
		p.keys = append(p.keys, "")
	}
	switch p.keys[id] {
	case key:
	case "":
		p.keys[id] = key
		p.unmapped = append(p.unmapped, id)
	default:
		panic("queue: NamePod: ID of " + p.keys[id] + " given to " + key)
	}
	pod.key, pod.internedBy, pod.id = key, p, id
}

// Reserve makes room for IDs below n, for a caller about to give NamePod
// that many: the tables indexed by ID then grow once, not as IDs arrive.
func (x *ReplayIndex) Reserve(n int) {
	p := x.q
	p.keys = slices.Grow(p.keys, max(0, n-len(p.keys)))
	p.unmapped = slices.Grow(p.unmapped, max(0, n-len(p.unmapped)))
	p.positions.Reserve(n)
	if n > len(p.activeQ.inFlightPods) {
		p.activeQ.inFlightPods = append(p.activeQ.inFlightPods, make([]int64, n-len(p.activeQ.inFlightPods))...)
	}
}

// RecordID returns the ID of the pod a record the queue made is of (a record
// Pop returned), without reading the Pod object.
func (x *ReplayIndex) RecordID(pi *QueuedPodInfo) int32 { return pi.id }

// Locate is PriorityQueue.Locate for the pod whose ID is id, without reading
// its Pod object.
func (x *ReplayIndex) Locate(id int32) (Location, *QueuedPodInfo) {
	p := x.q
	if id < 0 || int(id) >= len(p.keys) || p.keys[id] == "" {
		return "", nil
	}
	return p.locate(id)
}

// AddQueueingHints registers m beside the queue's registrations, for a
// replay that meets plugins as it reads its trace (trace.StreamDriver says
// when that replays as registering them all from the start).
func (x *ReplayIndex) AddQueueingHints(m QueueingHintMapPerProfile) { x.q.addQueueingHints(m) }

// Release gives back the record of a pod the scheduler is done with, which
// the queue's next new record may reuse: a replay of many short-lived pods
// then works in a few records that stay in the processor's caches instead
// of a fresh one per pod. The caller promises that the queue holds the
// record nowhere (the pod was popped and is done, not requeued) and that it
// keeps no reference to it.
func (x *ReplayIndex) Release(pi *QueuedPodInfo) {
	x.q.released = append(x.q.released, pi)
}
