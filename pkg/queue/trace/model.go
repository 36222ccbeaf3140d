package trace

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

// clock is the model's virtual clock. It is set in milliseconds and makes
// the time.Time only when read: most instants of a trace see no reading.
type clock struct {
	ms    int64
	now   time.Time
	stale bool
}

func (c *clock) Now() time.Time {
	if c.stale {
		c.now = Epoch.Add(time.Duration(c.ms) * time.Millisecond)
		c.stale = false
	}
	return c.now
}

// eventObject is the new object of a trace event: it carries which plugins
// answer Queue, so that in-flight pods asking later get the same answers.
type eventObject struct{ queue queue.PluginSet }

// schedulingGates is the trace's PreEnqueue plugin, as upstream's
// SchedulingGates: it rejects a pod while it has scheduling gates.
type schedulingGates struct{}

func (schedulingGates) Name() string { return SchedulingGatesPlugin }
func (schedulingGates) PreEnqueue(pod *queue.Pod) *queue.Status {
	if len(pod.SchedulingGates) == 0 {
		return nil
	}
	return &queue.Status{Reason: "waiting for scheduling gates: " + strings.Join(pod.SchedulingGates, ", ")}
}

// Model drives the queue model (pkg/queue) with a trace. Replay drives it
// by the pods' indices, which it gives the queue as the pods' IDs through a
// queue.ReplayIndex, so that a replay hashes no names. A Model is driven by
// names (the Driver methods) or by indices, not both.
type Model struct {
	Queue   *queue.PriorityQueue
	Metrics *queue.Recorder
	clock   *clock
	replay  *queue.ReplayIndex
	// pods is indexed by pod index.
	pods []podState
	// names holds pod i's name as name i, when a replay gave them
	// (setPodNames); givenNames are the names the Driver methods were given,
	// which ids indexes: kept as given, not copied.
	names      podNames
	givenNames []string
	ids        map[string]int32
	// byName and byIndex say which methods drove the model so far, to catch
	// a caller mixing them.
	byName, byIndex bool
	// reserved is the number of pods the tables have room for.
	reserved int
	// podBlock is where new Pod objects are taken from, a block at a time,
	// after freePods: objects of bound pods that nothing references any more.
	podBlock []queue.Pod
	freePods []*queue.Pod
	// groups is set when the trace queues pod groups (GenericWorkload): the
	// queue then numbers pods and groups itself (no ReplayIndex), records
	// stay referenced by the groups that held them (none is released or
	// reused), and byKey finds a pod's index from its name.
	groups bool
	byKey  map[string]int32
	// keyed is how many of names byKey holds (indexOf).
	keyed int
}

// podState is what the driver keeps per pod: the latest object (nil until
// added), and the record handed out by Pop while the pod is in flight.
// shared is set once the object went to the queue in an update or an
// activation, which may keep it among the in-flight events: it is then
// never reused.
type podState struct {
	pod      *queue.Pod
	inFlight *queue.QueuedPodInfo
	shared   bool
}

var (
	_ indexedDriver = &Model{}
	_ PodLister     = &Model{}
	_ StreamDriver  = &Model{}
	_ GroupDriver   = &Model{}
	_ flushPlanner  = &Model{}
)

// NewModel returns a model queue configured as the trace says: cfg, and every
// plugin in plugins registered for every event of Events.
func NewModel(cfg Config, plugins []string) *Model {
	m := &Model{
		Metrics: queue.NewRecorder(),
		clock:   &clock{now: Epoch},
	}
	hints := pluginHints(plugins)
	hints[queue.ClusterEvent{Resource: queue.ResourcePod, ActionType: queue.UpdatePodSchedulingGatesEliminated}] = []*queue.QueueingHintFunction{{
		PluginName: SchedulingGatesPlugin,
		QueueingHintFn: func(pod *queue.Pod, _, newObj any) (queue.QueueingHint, error) {
			if p, ok := newObj.(*queue.Pod); ok && p.UID == pod.UID {
				return queue.Queue, nil
			}
			return queue.QueueSkip, nil
		},
	}}
	version := cfg.Version
	if version == 0 {
		version = queue.DefaultVersion
	}
	m.Queue = queue.NewPriorityQueue(
		queue.WithVersion(version),
		queue.WithClock(m.clock),
		queue.WithPopFromBackoffQ(cfg.PopFromBackoffQ),
		queue.WithPodInitialBackoffDuration(time.Duration(cfg.PodInitialBackoffSeconds)*time.Second),
		queue.WithPodMaxBackoffDuration(time.Duration(cfg.PodMaxBackoffSeconds)*time.Second),
		queue.WithPodMaxInUnschedulablePodsDuration(time.Duration(cfg.PodMaxInUnschedulablePodsSeconds)*time.Second),
		queue.WithQueueingHintMapPerProfile(queue.QueueingHintMapPerProfile{queue.DefaultSchedulerName: hints}),
		queue.WithPreEnqueuePluginMap(map[string][]queue.PreEnqueuePlugin{queue.DefaultSchedulerName: {schedulingGates{}}}),
		queue.WithMetricsRecorder(m.Metrics),
		queue.WithGenericWorkload(cfg.GenericWorkload),
	)
	m.groups = m.Queue.GenericWorkloadEnabled()
	m.byKey = map[string]int32{}
	m.replay = queue.NewReplayIndex(m.Queue)
	return m
}

// pluginHints registers each plugin for every event of Events, its hint
// Queue when the event's queue list names it.
func pluginHints(plugins []string) queue.QueueingHintMap {
	hints := queue.QueueingHintMap{}
	for _, ev := range Events {
		var fns []*queue.QueueingHintFunction
		for _, pl := range plugins {
			fns = append(fns, &queue.QueueingHintFunction{PluginName: pl, QueueingHintFn: func(_ *queue.Pod, _, newObj any) (queue.QueueingHint, error) {
				if o, ok := newObj.(*eventObject); ok && o.queue.Has(pl) {
					return queue.Queue, nil
				}
				return queue.QueueSkip, nil
			}})
		}
		if len(fns) > 0 {
			hints[ev] = fns
		}
	}
	return hints
}

// RegisterPlugins implements StreamDriver.
func (m *Model) RegisterPlugins(plugins []string) {
	m.replay.AddQueueingHints(queue.QueueingHintMapPerProfile{queue.DefaultSchedulerName: pluginHints(plugins)})
}

// index returns the index of a pod the Driver methods name.
func (m *Model) index(name string) int32 {
	if m.byIndex {
		panic("trace: a Model driven by indices was given a name")
	}
	m.byName = true
	if m.ids == nil {
		m.ids = map[string]int32{}
	}
	i, ok := m.ids[name]
	if !ok {
		i = int32(len(m.ids))
		m.ids[name] = i
		m.givenNames = append(m.givenNames, name)
	}
	return i
}

// setPodNames implements indexedDriver.
func (m *Model) setPodNames(names podNames) {
	if m.byName {
		panic("trace: a Model driven by names was given indices")
	}
	m.names = names
	// Every pod of the replay gets a state: the tables grow here, once for
	// a whole trace, or by doubling as a streamed one is read.
	if names.len() > m.reserved {
		m.reserved = max(names.len(), 2*m.reserved)
		m.pods = slices.Grow(m.pods, m.reserved-len(m.pods))
		m.replay.Reserve(m.reserved)
	}
}

// state returns pod i's state, growing the table for a new index.
func (m *Model) state(i int32) *podState {
	m.byIndex = m.byIndex || !m.byName
	for int(i) >= len(m.pods) {
		m.pods = append(m.pods, podState{})
	}
	return &m.pods[i]
}

// zeroPod returns a new zero object: a bound pod's, or one of a block (one
// allocation per block of pods, not per pod). A reused object is one the
// processor's caches likely still hold, where a new one is memory the
// replay has not touched yet.
func (m *Model) zeroPod() *queue.Pod {
	if n := len(m.freePods); n > 0 {
		p := m.freePods[n-1]
		m.freePods = m.freePods[:n-1]
		*p = queue.Pod{}
		return p
	}
	if len(m.podBlock) == 0 {
		m.podBlock = make([]queue.Pod, 256)
	}
	c := &m.podBlock[0]
	m.podBlock = m.podBlock[1:]
	return c
}

// copyPod returns a new object equal to p.
func (m *Model) copyPod(p *queue.Pod) *queue.Pod {
	c := m.zeroPod()
	*c = *p
	return c
}

// newPod returns a new object for pod i, with the queue's ID i.
func (m *Model) newPod(i int32) *queue.Pod {
	var name string
	if m.byName {
		name = m.givenNames[i]
	} else {
		name = m.names.at(i)
	}
	uid := name
	ns := strings.IndexByte(name, '/')
	if ns < 0 {
		// Not namespace/name: the namespace is the whole name, as
		// strings.Cut would have it.
		name += "/"
		ns = len(name) - 1
	}
	// Field by field: the rest is zero already.
	p := m.zeroPod()
	p.UID = uid
	if m.groups {
		p.Namespace, p.Name = name[:ns], name[ns+1:]
		m.byKey[uid] = i
		return p
	}
	m.replay.NamePod(p, name, ns, i)
	return p
}

// pod returns the latest object of pod i, or a new one for a pod never added.
func (m *Model) pod(i int32) *queue.Pod {
	if st := m.state(i); st.pod != nil {
		return st.pod
	}
	return m.newPod(i)
}

// SetTime implements Driver.
func (m *Model) SetTime(ms int64) {
	// Most operations share their instant with the one before.
	if ms != m.clock.ms {
		m.clock.ms, m.clock.stale = ms, true
	}
}

// Add implements Driver.
func (m *Model) Add(name string, priority int32, gates []string) {
	m.addIndex(m.index(name), priority, gates)
}

// addIndex implements indexedDriver.
func (m *Model) addIndex(i int32, priority int32, gates []string) {
	m.addPod(i, priority, gates, "")
}

// addPod adds pod i, a member of the pod group named group ("" for none:
// an add without a group makes a pod of no group, whatever it was).
func (m *Model) addPod(i int32, priority int32, gates []string, group string) {
	st := m.state(i)
	var p *queue.Pod
	if st.pod != nil {
		// A re-add: a new object, keeping the old one's queue ID.
		p = m.copyPod(st.pod)
	} else {
		p = m.newPod(i)
	}
	p.Priority, p.SchedulingGates, p.PodGroup = priority, gates, group
	st.pod, st.shared = p, false
	m.Queue.Add(p)
}

// Pop implements Driver.
func (m *Model) Pop() (string, int, bool) {
	pi := m.Queue.Pop()
	if pi == nil {
		return "", 0, false
	}
	m.pods[m.replay.RecordID(pi)].inFlight = pi
	return pi.Pod.UID, pi.Attempts, true
}

// Fail implements Driver.
func (m *Model) Fail(name string, plugins, pending []string) {
	m.failIndex(m.index(name), plugins, pending)
}

// failIndex implements indexedDriver.
func (m *Model) failIndex(i int32, plugins, pending []string) {
	st := m.state(i)
	pi := st.inFlight
	st.inFlight = nil
	pi.ClearRejectorPlugins()
	pi.UnschedulablePlugins = queue.NewPluginSet(plugins...)
	pi.PendingPlugins = queue.NewPluginSet(pending...)
	m.Queue.AddUnschedulableIfNotPresent(pi, m.Queue.SchedulingCycle())
}

// Done implements Driver.
func (m *Model) Done(name string) { m.doneIndex(m.index(name)) }

// doneIndex implements indexedDriver.
func (m *Model) doneIndex(i int32) {
	st := m.state(i)
	m.Queue.Done(st.pod)
	if m.groups {
		// The object stays: a delete of a bound member still reaches its
		// group, which upstream requeues (counting it again).
		st.inFlight = nil
		return
	}
	if pi := st.inFlight; pi != nil {
		// Done without failing: bound. The record is in no sub-queue, and
		// this was its last reference.
		st.inFlight = nil
		if pi.Pod == st.pod && !st.shared {
			// The record was the only other holder of the object: no
			// re-add made a newer one, no update or activation shared it.
			m.freePods = append(m.freePods, st.pod)
		}
		m.replay.Release(pi)
	}
	// The pod is nowhere now; an add makes a new object anyway. Letting go
	// of this one lets the collector free it.
	st.pod = nil
}

// Event implements Driver.
func (m *Model) Event(label string, plugins []string) {
	m.Queue.MoveAllToActiveOrBackoffQueue(Events[label], nil, &eventObject{queue: queue.NewPluginSet(plugins...)}, nil)
}

// Activate implements Driver.
func (m *Model) Activate(names []string) {
	is := make([]int32, len(names))
	for j, n := range names {
		is[j] = m.index(n)
	}
	m.activateIndex(is)
}

// activateIndex implements indexedDriver.
func (m *Model) activateIndex(is []int32) {
	pods := make([]*queue.Pod, 0, len(is))
	var seen map[int32]bool
	if len(is) > 16 {
		seen = make(map[int32]bool, len(is))
	}
	for j, i := range is {
		// Lists are short: a scan finds duplicates faster than a map.
		if seen != nil && !seen[i] || seen == nil && !slices.Contains(is[:j], i) {
			if seen != nil {
				seen[i] = true
			}
			pods = append(pods, m.pod(i))
			m.state(i).shared = true
		}
	}
	m.Queue.Activate(pods)
}

// Ungate implements Driver: an update that removes all scheduling gates.
func (m *Model) Ungate(name string) { m.ungateIndex(m.index(name)) }

// ungateIndex implements indexedDriver.
func (m *Model) ungateIndex(i int32) {
	st := m.state(i)
	old := st.pod
	updated := m.copyPod(old)
	updated.SchedulingGates = nil
	st.pod, st.shared = updated, true
	m.Queue.Update(old, updated)
}

// Delete implements Driver.
func (m *Model) Delete(name string) { m.deleteIndex(m.index(name)) }

// deleteIndex implements indexedDriver.
func (m *Model) deleteIndex(i int32) {
	// Without an object the pod is nowhere (never added, or done): the
	// delete would find nothing.
	if st := m.state(i); st.pod != nil {
		m.Queue.Delete(st.pod)
	}
}

// indexOf is the index of the pod named name, in a replay by index.
func (m *Model) indexOf(name string) int32 {
	if m.byName || m.names.len() == 0 {
		return m.index(name)
	}
	m.byIndex = true
	if i, ok := m.byKey[name]; ok {
		return i
	}
	// Index the names given since the last miss, once each (a streamed
	// replay gives more as it reads).
	for ; m.keyed < m.names.len(); m.keyed++ {
		m.byKey[m.names.at(int32(m.keyed))] = int32(m.keyed)
	}
	if i, ok := m.byKey[name]; ok {
		return i
	}
	panic("trace: no pod " + name)
}

// AddPodGroup implements GroupDriver.
func (m *Model) AddPodGroup(group string, priority int32) {
	ns, name, _ := strings.Cut(group, "/")
	m.Queue.AddPodGroup(ns, name, priority)
}

// DeletePodGroup implements GroupDriver.
func (m *Model) DeletePodGroup(group string) {
	ns, name, _ := strings.Cut(group, "/")
	m.Queue.DeletePodGroup(ns, name)
}

// AddGroupMember implements GroupDriver.
func (m *Model) AddGroupMember(pod string, priority int32, gates []string, group string) {
	_, name, _ := strings.Cut(group, "/")
	m.addPod(m.indexOf(pod), priority, gates, name)
}

// PopEntity implements GroupDriver.
func (m *Model) PopEntity() (string, bool, []string, int, bool) {
	pi := m.Queue.Pop()
	if pi == nil {
		return "", false, nil, 0, false
	}
	if !pi.IsPodGroup() {
		m.state(m.indexOf(pi.Pod.UID)).inFlight = pi
		return pi.Pod.UID, false, nil, pi.Attempts, true
	}
	members := make([]string, 0, pi.Size())
	for _, mem := range pi.Members() {
		m.state(m.indexOf(mem.Pod.UID)).inFlight = mem
		members = append(members, mem.Pod.UID)
	}
	return pi.Pod.Namespace + "/" + pi.Pod.Name, true, members, pi.Attempts, true
}

// Attempted implements GroupDriver.
func (m *Model) Attempted(group string, status string) {
	g := m.Queue.PoppedPodGroup(group)
	if g == nil {
		return
	}
	s := queue.AttemptError
	switch status {
	case "success":
		s = queue.AttemptSuccess
	case "unschedulable":
		s = queue.AttemptUnschedulable
	}
	m.Queue.AddAttemptedPodGroupIfNeeded(g, s)
}

// FlushBackoffQCompleted implements Driver.
func (m *Model) FlushBackoffQCompleted() { m.Queue.FlushBackoffQCompleted() }

// FlushUnschedulablePodsLeftover implements Driver.
func (m *Model) FlushUnschedulablePodsLeftover() { m.Queue.FlushUnschedulablePodsLeftover() }

// Where implements Driver.
func (m *Model) Where(name string) string {
	if m.byIndex {
		panic("trace: a Model driven by indices was given a name")
	}
	i, ok := m.ids[name]
	if !ok {
		return ""
	}
	return m.whereIndex(i)
}

// whereIndex implements indexedDriver.
func (m *Model) whereIndex(i int32) string {
	if int(i) >= len(m.pods) || m.pods[i].pod == nil {
		return ""
	}
	st := &m.pods[i]
	if st.inFlight != nil {
		return string(queue.LocationInFlight)
	}
	if m.groups {
		loc, _ := m.Queue.LocatePod(st.pod)
		return string(loc)
	}
	// The queue's ID of pod i is i (newPod).
	loc, _ := m.replay.Locate(i)
	return string(loc)
}

// Snapshot implements Driver.
func (m *Model) Snapshot() Snapshot {
	s, pods := m.SnapshotList(nil)
	s.Pods = make(map[string]PodState, len(pods))
	for _, p := range pods {
		s.Pods[p.Name] = p.PodState
	}
	return s
}

// SnapshotList implements PodLister.
func (m *Model) SnapshotList(pods []NamedPodState) (Snapshot, []NamedPodState) {
	pending := m.Metrics.PendingPods()
	s := Snapshot{
		Pending: Pending{
			Active:        pending[queue.LabelActive],
			Backoff:       pending[queue.LabelBackoff],
			Unschedulable: pending[queue.LabelUnschedulable],
			Gated:         pending[queue.LabelGated],
		},
		Incoming: m.Metrics.IncomingPods(),
	}
	if m.groups {
		s.Pending.Incomplete, s.Pending.PendingPodGroup = pending[queue.LabelIncomplete], pending[queue.LabelPending]
	}
	active, backoff, unschedulable := m.Queue.Len()
	pods = slices.Grow(pods, active+backoff+unschedulable+m.Queue.InFlightLen())
	m.Queue.Walk(func(loc queue.Location, pi *queue.QueuedPodInfo) {
		if !pi.IsPodGroup() {
			pods = append(pods, NamedPodState{pi.Pod.Key(), PodState{Queue: string(loc), Attempts: pi.Attempts}})
			return
		}
		if s.Groups == nil {
			s.Groups = map[string]GroupState{}
		}
		s.Groups[pi.Pod.Namespace+"/"+pi.Pod.Name] = GroupState{Queue: string(loc), Attempts: pi.Attempts, Size: pi.Size()}
		for _, mem := range pi.Members() {
			pods = append(pods, NamedPodState{mem.Pod.Key(), PodState{Queue: string(loc), Attempts: mem.Attempts}})
		}
	})
	m.Queue.WalkWaiting(func(loc queue.Location, pi *queue.QueuedPodInfo) {
		pods = append(pods, NamedPodState{pi.Pod.Key(), PodState{Queue: string(loc), Attempts: pi.Attempts}})
	})
	for _, st := range m.pods {
		if st.inFlight != nil {
			pods = append(pods, NamedPodState{st.pod.Key(), PodState{Queue: string(queue.LocationInFlight), Attempts: st.inFlight.Attempts}})
		}
	}
	return s, pods
}

// skipIdleFlushes implements flushPlanner. The next change is the first
// whole second after the earliest backoff expiry, or the first leftover
// instant (a multiple of 30 s) after the instant up to which the leftover
// flush is idle, whichever comes first, and not before the first flush
// instant after from; the leftover instants before it are those at which
// the flush only re-checks settled gated entities (v1.37), which the queue
// counts at once.
func (m *Model) skipIdleFlushes(since, from, to int64) int64 {
	sinceT := atTime(since)
	next := int64(math.MaxInt64)
	if e, ok := m.Queue.EarliestBackoffExpiry(); ok {
		next = firstInstantAfter(e, BackoffFlushPeriodMillis)
	}
	if u, ok := m.Queue.LeftoverFlushIdleUntil(sinceT); ok {
		next = min(next, firstInstantAfter(u, LeftoverFlushPeriodMillis))
	}
	next = max(next, (floorDiv(from, BackoffFlushPeriodMillis)+1)*BackoffFlushPeriodMillis)
	first := (floorDiv(from, LeftoverFlushPeriodMillis) + 1) * LeftoverFlushPeriodMillis
	last := floorDiv(min(next-1, to), LeftoverFlushPeriodMillis) * LeftoverFlushPeriodMillis
	if first <= last {
		m.Queue.RecheckSettledGated(sinceT, atTime(first), atTime(last), LeftoverFlushPeriodMillis*time.Millisecond)
	}
	return next
}

// atTime is the queue clock's reading at trace time ms.
func atTime(ms int64) time.Time { return Epoch.Add(time.Duration(ms) * time.Millisecond) }

// firstInstantAfter returns the first multiple of period milliseconds since
// Epoch that is after t (an instant that many milliseconds after Epoch is
// after t when it is after t's whole millisecond).
func firstInstantAfter(t time.Time, period int64) int64 {
	ms := floorDiv(int64(t.Sub(Epoch)), int64(time.Millisecond)) // Sub saturates
	return (floorDiv(ms, period) + 1) * period
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// Quiescent implements Quiescer: backoffQ and unschedulablePods are empty.
func (m *Model) Quiescent() bool {
	_, backoff, unschedulable := m.Queue.Len()
	return backoff == 0 && unschedulable == 0
}
