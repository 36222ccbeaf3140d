package queue

// Location is where the queue holds a pod, in the words of the trace spec and
// the ground-truth endpoint.
type Location string

// Locations.
const (
	LocationActive        Location = "active"
	LocationBackoff       Location = "backoff"
	LocationErrorBackoff  Location = "errorBackoff"
	LocationUnschedulable Location = "unschedulable"
	LocationGated         Location = "gated"
	LocationInFlight      Location = "inFlight"
	// LocationUnknown is for inference that cannot tell (explain).
	LocationUnknown Location = "unknown"
)

// Locate returns where the pod with key namespace/name is queued, or "" if it
// is in no sub-queue. In-flight pods are found by UID with InFlight.
func (p *PriorityQueue) Locate(key string) (Location, *QueuedPodInfo) {
	if pi, ok := p.activeQ.queue.GetByKey(key); ok {
		return LocationActive, pi
	}
	if pi, ok := p.backoffQ.podBackoffQ.GetByKey(key); ok {
		return LocationBackoff, pi
	}
	if pi, ok := p.backoffQ.podErrorBackoffQ.GetByKey(key); ok {
		return LocationErrorBackoff, pi
	}
	if pi := p.unschedulablePods.get(key); pi != nil {
		if pi.Gated() {
			return LocationGated, pi
		}
		return LocationUnschedulable, pi
	}
	return "", nil
}

// InFlight reports whether the pod with this UID has been popped and not yet
// reported done or failed.
func (p *PriorityQueue) InFlight(uid string) bool {
	_, ok := p.activeQ.inFlightPods[uid]
	return ok
}

// Walk calls fn for every queued pod (not in flight): activeQ, podBackoffQ,
// podErrorBackoffQ, then unschedulablePods; within each, in no defined order.
func (p *PriorityQueue) Walk(fn func(Location, *QueuedPodInfo)) {
	for _, pi := range p.activeQ.queue.List() {
		fn(LocationActive, pi)
	}
	for _, pi := range p.backoffQ.podBackoffQ.List() {
		fn(LocationBackoff, pi)
	}
	for _, pi := range p.backoffQ.podErrorBackoffQ.List() {
		fn(LocationErrorBackoff, pi)
	}
	for _, pi := range p.unschedulablePods.pods {
		if pi.Gated() {
			fn(LocationGated, pi)
		} else {
			fn(LocationUnschedulable, pi)
		}
	}
}

// InFlightPods returns the pods popped and not yet done, oldest first.
func (p *PriorityQueue) InFlightPods() []*Pod {
	var out []*Pod
	for e := p.activeQ.inFlightEvents.Front(); e != nil; e = e.Next() {
		if pod, ok := e.Value.(*Pod); ok {
			out = append(out, pod)
		}
	}
	return out
}

// Len returns the number of pods in activeQ, backoffQ (both heaps) and
// unschedulablePods (gated included).
func (p *PriorityQueue) Len() (active, backoff, unschedulable int) {
	return p.activeQ.queue.Len(), p.backoffQ.len(), p.unschedulablePods.len()
}
