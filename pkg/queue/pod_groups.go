package queue

import (
	"math"
	"slices"
	"time"
)

// Pod groups (v1.37 with GenericWorkload; scheduling_queue.go 1.37:882-1269,
// 1471-1673, framework/types.go 1.37:783-1045). A pod naming a PodGroup is
// queued as a member of one entity per group, which the sub-queues hold in
// place of the pods; members wait outside it while their PodGroup is not
// observed (incompletePodGroupPods) or while the group is being scheduled
// (pendingPodGroupPods). CompositePodGroup (alpha, off) is not modelled:
// every PodGroup is its own root.

// groupLink ties a pod group's entity to its queued members; the entity and
// each member point at the same link.
type groupLink struct {
	entity  *QueuedPodInfo
	members []*QueuedPodInfo
}

// AttemptStatus is how a pod group's scheduling cycle ended, as the status
// the scheduler passes to AddAttemptedPodGroupIfNeeded.
type AttemptStatus int

// Statuses of a pod group's cycle.
const (
	AttemptSuccess AttemptStatus = iota
	AttemptUnschedulable
	AttemptError
)

// WithGenericWorkload sets the GenericWorkload feature gate (beta, off by
// default in v1.37). It takes effect from v1.37: before, members were
// queued one by one and collected by the scheduler, which the model does
// not drive.
func WithGenericWorkload(enabled bool) Option {
	return func(o *priorityQueueOptions) { o.genericWorkload = enabled }
}

// podGroups is the queue's pod-group state.
type podGroups struct {
	// observed is workloadForest: the observed PodGroups by namespace/name,
	// each with the Pod that stands for its entity in the sub-queues.
	observed map[string]*Pod
	// pending and incomplete are pendingPodGroupPods and
	// incompletePodGroupPods by group key, in arrival order (upstream's are
	// maps, drained in random order); waiting finds a member in either.
	pending, incomplete map[string][]*QueuedPodInfo
	waiting             map[int32]Location
	// groupOf is each member's group key by the member's ID.
	groupOf         map[int32]string
	pendingGauge    MetricRecorder
	incompleteGauge MetricRecorder
	// lastPopped is activeQ's lastPoppedEntityKey when it names a group
	// ("" otherwise: a pod's key never equals a group's), and popped that
	// group's entity as Pop handed it out.
	lastPopped string
	popped     map[string]*QueuedPodInfo
}

func newPodGroups(m Metrics) *podGroups {
	return &podGroups{
		observed:        map[string]*Pod{},
		pending:         map[string][]*QueuedPodInfo{},
		incomplete:      map[string][]*QueuedPodInfo{},
		popped:          map[string]*QueuedPodInfo{},
		waiting:         map[int32]Location{},
		groupOf:         map[int32]string{},
		pendingGauge:    m.Pending(LabelPending),
		incompleteGauge: m.Pending(LabelIncomplete),
	}
}

// groupKeyOf is the key of the pod's group, namespace/name.
func groupKeyOf(pod *Pod) string { return pod.Namespace + "/" + pod.PodGroup }

// groupEntityKeyPrefix keeps group entities' keys apart from pods' in the
// queue's IDs: no namespace contains a colon.
const groupEntityKeyPrefix = "podgroup:"

func (p *PriorityQueue) isPodGroupMember(pod *Pod) bool {
	return p.groups != nil && pod.PodGroup != ""
}

// GenericWorkloadEnabled reports whether pods naming a PodGroup are queued
// by group.
func (p *PriorityQueue) GenericWorkloadEnabled() bool { return p.groups != nil }

// weigh is how many pods a sub-queue entry counts for.
func weigh(pi *QueuedPodInfo) int { return pi.Size() }

// incoming counts an entity's arrival in queue as upstream does: once per
// pod it holds (recordIncomingEntitiesMetrics).
func incoming(m Metrics, pi *QueuedPodInfo, queue, event string) {
	m.Incoming(queue, event, pi.Size())
}

// memberOrder is PodGroupMemberPodsOrderingFunc: priority (descending),
// attempts (descending), timestamp, then name.
func memberOrder(a, b *QueuedPodInfo) int {
	switch {
	case a.Pod.Priority != b.Pod.Priority:
		if a.Pod.Priority > b.Pod.Priority {
			return -1
		}
		return 1
	case a.Attempts != b.Attempts:
		if a.Attempts > b.Attempts {
			return -1
		}
		return 1
	case !a.Timestamp.Equal(b.Timestamp):
		if a.Timestamp.Before(b.Timestamp) {
			return -1
		}
		return 1
	case a.Pod.Name != b.Pod.Name:
		if a.Pod.Name < b.Pod.Name {
			return -1
		}
		return 1
	}
	return 0
}

// addMember is QueuedPodGroupInfo.AddPod: a binary search on the members as
// they stand, as upstream's.
func addMember(g, m *QueuedPodInfo) {
	i, _ := slices.BinarySearchFunc(g.grp.members, m, memberOrder)
	g.grp.members = slices.Insert(g.grp.members, i, m)
	m.grp = g.grp
}

// removeMember is QueuedPodGroupInfo.RemovePod, by name.
func removeMember(g *QueuedPodInfo, pod *Pod) *QueuedPodInfo {
	for i, m := range g.grp.members {
		if m.Pod.Name == pod.Name && m.Pod.Namespace == pod.Namespace {
			g.grp.members = slices.Delete(g.grp.members, i, i+1)
			m.grp = nil
			return m
		}
	}
	return nil
}

func memberOf(g *QueuedPodInfo, pod *Pod) *QueuedPodInfo {
	for _, m := range g.grp.members {
		if m.Pod.Name == pod.Name && m.Pod.Namespace == pod.Namespace {
			return m
		}
	}
	return nil
}

// newGroupEntity is a fresh entity for the group (buildQueuedPodGroupInfo).
func (p *PriorityQueue) newGroupEntity(groupPod *Pod) *QueuedPodInfo {
	g := p.newQueuedPodInfo(groupPod)
	g.Timestamp = time.Time{}
	g.grp = &groupLink{entity: g}
	return g
}

// GroupMaxBackoff is the maximum backoff of an entity of size pods: the pod
// maximum times √size for a group (backoff_queue.go 1.37:249-265).
func GroupMaxBackoff(podMax time.Duration, size int) time.Duration {
	if size > 1 {
		return time.Duration(float64(podMax) * math.Sqrt(float64(size)))
	}
	return podMax
}

// wait puts a member in pendingPodGroupPods or incompletePodGroupPods.
func (p *PriorityQueue) wait(where Location, m *QueuedPodInfo) {
	gs := p.groups
	k := groupKeyOf(m.Pod)
	m.grp = nil
	if where == LocationPending {
		gs.pending[k] = append(gs.pending[k], m)
		gs.pendingGauge.Inc()
	} else {
		gs.incomplete[k] = append(gs.incomplete[k], m)
		gs.incompleteGauge.Inc()
	}
	gs.waiting[m.id] = where
}

// takeWaiting empties the group's pending or incomplete members.
func (p *PriorityQueue) takeWaiting(where Location, groupKey string) []*QueuedPodInfo {
	gs := p.groups
	m, gauge := gs.pending, gs.pendingGauge
	if where == LocationIncomplete {
		m, gauge = gs.incomplete, gs.incompleteGauge
	}
	pods := m[groupKey]
	delete(m, groupKey)
	for _, pi := range pods {
		delete(gs.waiting, pi.id)
		gauge.Dec()
	}
	return pods
}

// waitingMember finds a member waiting outside its group.
func (p *PriorityQueue) waitingMember(pod *Pod) (Location, int, *QueuedPodInfo) {
	return p.waitingMemberID(p.intern(pod))
}

func (p *PriorityQueue) waitingMemberID(id int32) (Location, int, *QueuedPodInfo) {
	gs := p.groups
	where, ok := gs.waiting[id]
	if !ok {
		return "", -1, nil
	}
	list := gs.pending[gs.groupOf[id]]
	if where == LocationIncomplete {
		list = gs.incomplete[gs.groupOf[id]]
	}
	for i, m := range list {
		if m.id == id {
			return where, i, m
		}
	}
	return "", -1, nil
}

func (p *PriorityQueue) dropWaiting(pod *Pod) *QueuedPodInfo {
	where, i, m := p.waitingMember(pod)
	if m == nil {
		return nil
	}
	gs := p.groups
	k := groupKeyOf(pod)
	if where == LocationPending {
		gs.pending[k] = slices.Delete(gs.pending[k], i, i+1)
		if len(gs.pending[k]) == 0 {
			delete(gs.pending, k)
		}
		gs.pendingGauge.Dec()
	} else {
		gs.incomplete[k] = slices.Delete(gs.incomplete[k], i, i+1)
		if len(gs.incomplete[k]) == 0 {
			delete(gs.incomplete, k)
		}
		gs.incompleteGauge.Dec()
	}
	delete(gs.waiting, m.id)
	return m
}

// addPodGroupMember queues a member: in its group's entity if one is
// queued, pending if the group is being scheduled, else as the first member
// of a new entity in activeQ; incomplete while its PodGroup is unobserved.
func (p *PriorityQueue) addPodGroupMember(m *QueuedPodInfo) {
	k := groupKeyOf(m.Pod)
	p.groups.groupOf[m.id] = k
	groupPod, ok := p.groups.observed[k]
	if !ok {
		p.wait(LocationIncomplete, m)
		return
	}
	if p.addToPodGroupIfExists(m, groupPod) {
		return
	}
	if p.groups.lastPopped == k {
		p.wait(LocationPending, m)
		return
	}
	g := p.newGroupEntity(groupPod)
	addMember(g, m)
	g.Timestamp = m.Timestamp
	if m.InitialAttemptTimestamp != nil {
		g.initialAttemptTimestamp = *m.InitialAttemptTimestamp
		g.InitialAttemptTimestamp = &g.initialAttemptTimestamp
	}
	p.moveToActiveQ(g, p.unscheduledPodAddLabel, false)
}

// deleteFromAnyQueue takes an entity out of whichever sub-queue holds it,
// with the strategy that sends it back there.
func (p *PriorityQueue) deleteFromAnyQueue(id int32) (*QueuedPodInfo, queueingStrategy) {
	if g, ok := p.activeQ.queue.Get(id); ok {
		p.activeQ.queue.Delete(id)
		return g, queueImmediately
	}
	if g, ok := p.backoffQ.get(id); ok {
		p.backoffQ.delete(id)
		return g, queueAfterBackoff
	}
	if g := p.unschedulablePods.get(id); g != nil {
		p.unschedulablePods.delete(id, g.Gated())
		return g, queueSkip
	}
	return nil, queueSkip
}

func (p *PriorityQueue) addToPodGroupIfExists(m *QueuedPodInfo, groupPod *Pod) bool {
	g, strategy := p.deleteFromAnyQueue(p.intern(groupPod))
	if g == nil {
		return false
	}
	addMember(g, m)
	p.requeuePodWithQueueingStrategy(g, strategy, p.unscheduledPodAddLabel)
	return true
}

// AddPodGroup records an observed PodGroup (priority is spec.priority) and
// queues the members that waited for it.
func (p *PriorityQueue) AddPodGroup(namespace, name string, priority int32) {
	if p.groups == nil {
		return
	}
	k := namespace + "/" + name
	groupPod := &Pod{Namespace: namespace, Name: name, Priority: priority, key: groupEntityKeyPrefix + k}
	p.groups.observed[k] = groupPod
	for _, m := range p.takeWaiting(LocationIncomplete, k) {
		p.addPodGroupMember(m)
	}
}

// DeletePodGroup forgets a PodGroup: its queued and pending members wait in
// incompletePodGroupPods for it to be observed again.
func (p *PriorityQueue) DeletePodGroup(namespace, name string) {
	if p.groups == nil {
		return
	}
	k := namespace + "/" + name
	groupPod, ok := p.groups.observed[k]
	delete(p.groups.observed, k)
	if !ok {
		return
	}
	g, _ := p.deleteFromAnyQueue(p.intern(groupPod))
	if g == nil {
		if p.groups.lastPopped != k {
			return
		}
		for _, m := range p.takeWaiting(LocationPending, k) {
			p.wait(LocationIncomplete, m)
		}
		return
	}
	// The group is its own root: removing it removes every member.
	members := g.grp.members
	g.grp.members = nil
	for _, m := range members {
		p.wait(LocationIncomplete, m)
	}
}

// AddAttemptedPodGroupIfNeeded ends the scheduling cycle of the pod group
// Pop handed out as g: the members that failed or arrived meanwhile
// (pending) are queued again as one entity with g's queueing state, straight
// to activeQ after a success. It reports false, as upstream's error, when
// the group is queued already.
func (p *PriorityQueue) AddAttemptedPodGroupIfNeeded(g *QueuedPodInfo, status AttemptStatus) bool {
	if p.groups == nil || !g.IsPodGroup() {
		return false
	}
	id := g.id
	if p.unschedulablePods.get(id) != nil || p.activeQ.queue.Has(id) || p.backoffQ.has(id) {
		return false
	}
	k := g.Pod.Namespace + "/" + g.Pod.Name
	p.groups.lastPopped = ""
	delete(p.groups.popped, k)
	pending := p.takeWaiting(LocationPending, k)
	if len(pending) == 0 {
		return true
	}
	hadFailures := false
	for _, m := range pending {
		if slices.Contains(g.grp.members, m) {
			hadFailures = true
			break
		}
	}
	groupPod, ok := p.groups.observed[k]
	if !ok {
		for _, m := range pending {
			p.wait(LocationIncomplete, m)
		}
		return true
	}
	root := p.newGroupEntity(groupPod)
	for _, m := range pending {
		addMember(root, m)
	}
	copyQueueingParams(root, g)

	requeueWithoutBackoff, preserveTimestamp := false, false
	switch status {
	case AttemptSuccess:
		requeueWithoutBackoff, preserveTimestamp = true, hadFailures
		root.ConsecutiveErrorsCount, root.UnschedulableCount = 0, 0
	case AttemptUnschedulable:
		root.UnschedulableCount++
		root.ConsecutiveErrorsCount = 0
		root.BackoffExpiration = time.Time{}
	default:
		root.ConsecutiveErrorsCount++
		root.BackoffExpiration = time.Time{}
	}
	if !preserveTimestamp {
		root.Timestamp = p.clock.Now()
	}
	root.WasFlushedFromUnschedulable = false
	root.flushedAfter = 0
	if !requeueWithoutBackoff && p.backoffQ.isPodBackingoff(root) {
		p.moveToBackoffQ(root, ScheduleAttemptFailure)
	} else {
		p.moveToActiveQ(root, ScheduleAttemptFailure, false)
	}
	return true
}

// copyQueueingParams is `rootInfo.QueueingParams = pgInfo.QueueingParams`.
func copyQueueingParams(to, from *QueuedPodInfo) {
	to.Timestamp = from.Timestamp
	to.Attempts = from.Attempts
	to.UnschedulableCount = from.UnschedulableCount
	to.ConsecutiveErrorsCount = from.ConsecutiveErrorsCount
	to.BackoffExpiration = from.BackoffExpiration
	to.InitialAttemptTimestamp = nil
	if from.InitialAttemptTimestamp != nil {
		to.initialAttemptTimestamp = *from.InitialAttemptTimestamp
		to.InitialAttemptTimestamp = &to.initialAttemptTimestamp
	}
	to.UnschedulablePlugins = from.UnschedulablePlugins
	to.PendingPlugins = from.PendingPlugins
	to.GatingPlugin = from.GatingPlugin
	to.GatingPluginEvents = from.GatingPluginEvents
	to.WasFlushedFromUnschedulable = from.WasFlushedFromUnschedulable
	to.flushedAfter = from.flushedAfter
}

// PoppedPodGroup returns the entity of the group namespace/name that Pop
// handed out and whose cycle has not ended (AddAttemptedPodGroupIfNeeded),
// or nil.
func (p *PriorityQueue) PoppedPodGroup(groupKey string) *QueuedPodInfo {
	if p.groups == nil {
		return nil
	}
	return p.groups.popped[groupKey]
}

// deletePodGroupMember is Delete of a member.
func (p *PriorityQueue) deletePodGroupMember(pod *Pod) {
	k := groupKeyOf(pod)
	groupPod, ok := p.groups.observed[k]
	if !ok {
		p.dropWaiting(pod)
		return
	}
	g, strategy := p.deleteFromAnyQueue(p.intern(groupPod))
	if g == nil {
		p.dropWaiting(pod)
		return
	}
	removeMember(g, pod)
	if len(g.grp.members) == 0 {
		return
	}
	p.requeuePodWithQueueingStrategy(g, strategy, p.unscheduledPodAddLabel)
}

// updatePodGroupMember is Update of a member (scheduling_queue.go
// 1.37:1353-1458).
func (p *PriorityQueue) updatePodGroupMember(oldPod, newPod *Pod, events []ClusterEvent) {
	groupPod, ok := p.groups.observed[groupKeyOf(oldPod)]
	if !ok {
		if where, _, m := p.waitingMember(newPod); m != nil && where == LocationIncomplete {
			m.Pod = newPod
		}
		return
	}
	if p.activeQ.addEventsIfPodInFlight(oldPod, newPod, events) {
		return
	}
	gid := p.intern(groupPod)
	p.intern(newPod)
	if g, ok := p.activeQ.queue.Get(gid); ok {
		if m := memberOf(g, newPod); m != nil {
			m.Pod = newPod
			p.activeQ.queue.AddOrUpdate(gid, activeKey(g), g)
			return
		}
	}
	for _, h := range p.backoffQ.heaps() {
		if g, ok := h.Get(gid); ok {
			if m := memberOf(g, newPod); m != nil {
				m.Pod = newPod
				h.AddOrUpdate(gid, p.backoffQ.key(g), g)
				return
			}
		}
	}
	if g := p.unschedulablePods.get(gid); g != nil {
		m := memberOf(g, newPod)
		if m == nil {
			p.add(newPod)
			return
		}
		m.Pod = newPod
		for _, e := range events {
			q := p.requeuePodWithQueueingStrategy(g, p.isEntityWorthRequeuing(g, e, oldPod, newPod, nil), e.Label())
			if q == activeQName || p.popFromBackoffQ && q == backoffQName {
				break
			}
		}
		return
	}
	if where, _, m := p.waitingMember(newPod); m != nil && where == LocationPending {
		m.Pod = newPod
		return
	}
	p.add(newPod)
}

// activatePodGroupMember is Activate of a member: its whole group.
func (p *PriorityQueue) activatePodGroupMember(pod *Pod) {
	groupPod, ok := p.groups.observed[groupKeyOf(pod)]
	if !ok {
		return
	}
	if p.activateID(p.intern(groupPod)) {
		return
	}
	p.activeQ.addEventsIfPodInFlight(nil, pod, []ClusterEvent{EventForceActivate})
}

// isEntityWorthRequeuing is the best strategy any member's hints give.
func (p *PriorityQueue) isEntityWorthRequeuing(pi *QueuedPodInfo, e ClusterEvent, oldObj, newObj any, memo *eventMatches) queueingStrategy {
	if !pi.IsPodGroup() {
		return p.isPodWorthRequeuingWith(pi, e, oldObj, newObj, memo)
	}
	best := queueSkip
	for _, m := range pi.grp.members {
		if s := p.isPodWorthRequeuingWith(m, e, oldObj, newObj, memo); s > best {
			best = s
			if best == queueImmediately {
				break
			}
		}
	}
	return best
}

// runPreEnqueueGroup runs PreEnqueue for every member: one gated member
// gates the group (runPreEnqueuePlugins 1.37:707-729).
func (p *PriorityQueue) runPreEnqueueGroup(g *QueuedPodInfo) {
	var gated *QueuedPodInfo
	for _, m := range g.grp.members {
		p.runPreEnqueuePlugins(m)
		if m.Gated() {
			gated = m
		}
	}
	if gated != nil {
		g.GatingPlugin, g.GatingPluginEvents = gated.GatingPlugin, gated.GatingPluginEvents
	} else {
		g.GatingPlugin, g.GatingPluginEvents = "", nil
	}
}

// setInitialAttemptTimestamp sets it, where unset, on the entity and, for a
// group, on each member.
func setInitialAttemptTimestamp(pi *QueuedPodInfo, now time.Time) {
	if pi.InitialAttemptTimestamp == nil {
		pi.initialAttemptTimestamp = now
		pi.InitialAttemptTimestamp = &pi.initialAttemptTimestamp
	}
	if pi.IsPodGroup() {
		for _, m := range pi.grp.members {
			setInitialAttemptTimestamp(m, now)
		}
	}
}

// locateMember is Locate for a member (by ID): its group's place, or
// waiting outside the group; "" if neither (in flight, say).
func (p *PriorityQueue) locateMember(id int32) (Location, *QueuedPodInfo) {
	if p.groups == nil {
		return "", nil
	}
	if where, _, m := p.waitingMemberID(id); m != nil {
		return where, m
	}
	k, ok := p.groups.groupOf[id]
	if !ok {
		return "", nil
	}
	groupPod, ok := p.groups.observed[k]
	if !ok {
		return "", nil
	}
	gid := p.intern(groupPod)
	if _, ok := p.positions.Holder(gid); !ok {
		return "", nil
	}
	loc, g := p.locate(gid)
	for _, m := range g.grp.members {
		if m.id == id {
			return loc, m
		}
	}
	return "", nil
}

// setWasFlushed is SetWasFlushedFromUnschedulable: on a group, on its
// members too.
func setWasFlushed(pi *QueuedPodInfo, v bool) {
	pi.WasFlushedFromUnschedulable = v
	if pi.IsPodGroup() {
		for _, m := range pi.grp.members {
			m.WasFlushedFromUnschedulable = v
		}
	}
}

// WalkWaiting calls fn for every pod-group member waiting outside its
// group: in pendingPodGroupPods (LocationPending) or incompletePodGroupPods
// (LocationIncomplete); in no defined order.
func (p *PriorityQueue) WalkWaiting(fn func(Location, *QueuedPodInfo)) {
	if p.groups == nil {
		return
	}
	for _, l := range p.groups.pending {
		for _, m := range l {
			fn(LocationPending, m)
		}
	}
	for _, l := range p.groups.incomplete {
		for _, m := range l {
			fn(LocationIncomplete, m)
		}
	}
}
