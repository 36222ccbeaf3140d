package queue

// Location is where the queue holds a pod, in the words of the trace spec and
// the ground-truth endpoint; names.go gives its other spellings.
type Location string

// Locations.
const (
	LocationActive        Location = "active"
	LocationBackoff       Location = "backoff"
	LocationErrorBackoff  Location = "errorBackoff"
	LocationUnschedulable Location = "unschedulable"
	LocationGated         Location = "gated"
	LocationInFlight      Location = "inFlight"
	// v1.37's pod-group members waiting for their group: too few members
	// yet (incompletePodGroupPods), or the group not queued yet
	// (pendingPodGroupPods).
	LocationIncomplete Location = "incomplete"
	LocationPending    Location = "pending"
	// LocationUnknown is for inference that cannot tell (explain).
	LocationUnknown Location = "unknown"
)

// Locate returns where the pod with key namespace/name is queued, or "" if it
// is in no sub-queue. In-flight pods are found by UID with InFlight.
func (p *PriorityQueue) Locate(key string) (Location, *QueuedPodInfo) {
	id, ok := p.keyID(key)
	if !ok {
		return "", nil
	}
	return p.locate(id)
}

// LocatePod is Locate for a Pod object, without hashing its key again when
// the queue has seen the object before.
func (p *PriorityQueue) LocatePod(pod *Pod) (Location, *QueuedPodInfo) {
	return p.locate(p.intern(pod))
}

func (p *PriorityQueue) locate(id int32) (Location, *QueuedPodInfo) {
	tag, ok := p.positions.Holder(id)
	if !ok {
		if p.groups != nil {
			return p.locateMember(id)
		}
		return "", nil
	}
	switch tag {
	case tagActiveQ:
		pi, _ := p.activeQ.queue.Get(id)
		return LocationActive, pi
	case tagBackoffQ:
		pi, _ := p.backoffQ.podBackoffQ.Get(id)
		return LocationBackoff, pi
	case tagErrorBackoffQ:
		pi, _ := p.backoffQ.podErrorBackoffQ.Get(id)
		return LocationErrorBackoff, pi
	}
	pi := p.unschedulablePods.get(id)
	if pi.Gated() {
		return LocationGated, pi
	}
	return LocationUnschedulable, pi
}

// InFlight reports whether the pod (by its UID) has been popped and not yet
// reported done or failed.
func (p *PriorityQueue) InFlight(pod *Pod) bool {
	p.intern(pod)
	_, ok := p.activeQ.inFlightMarker(pod)
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
	for _, e := range p.activeQ.inFlightEvents[p.activeQ.inFlightHead:] {
		if e.pod != nil {
			out = append(out, e.pod)
		}
	}
	return out
}

// InFlightLen returns the number of pods popped and not yet done.
func (p *PriorityQueue) InFlightLen() int { return p.activeQ.inFlightCount }

// Len returns the number of pods in activeQ, backoffQ (both heaps) and
// unschedulablePods (gated included).
func (p *PriorityQueue) Len() (active, backoff, unschedulable int) {
	return p.activeQ.queue.Len(), p.backoffQ.len(), p.unschedulablePods.len()
}
