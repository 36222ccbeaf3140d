package queue

import (
	"slices"
	"sort"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/internal/heap"
)

// The sub-queues' tags in PriorityQueue.positions.
const (
	tagActiveQ heap.Tag = iota
	tagBackoffQ
	tagErrorBackoffQ
	tagUnschedulablePods
)

// Defaults, as kube-scheduler's (podInitialBackoffSeconds,
// podMaxBackoffSeconds, podMaxInUnschedulablePodsDuration).
const (
	DefaultPodInitialBackoffDuration         = 1 * time.Second
	DefaultPodMaxBackoffDuration             = 10 * time.Second
	DefaultPodMaxInUnschedulablePodsDuration = 5 * time.Minute
	// UnschedulablePodsFlushInterval is how often upstream runs the leftover
	// flush (on wall time).
	UnschedulablePodsFlushInterval = 30 * time.Second
	// BackoffQFlushInterval is how often upstream runs the backoff flush.
	BackoffQFlushInterval = time.Second
)

// PassiveClock is the queue's clock; the model never reads wall time. Its
// readings must carry no monotonic reading: the heaps order wall times.
type PassiveClock interface {
	Now() time.Time
}

type priorityQueueOptions struct {
	clock                             PassiveClock
	podInitialBackoffDuration         time.Duration
	podMaxBackoffDuration             time.Duration
	podMaxInUnschedulablePodsDuration time.Duration
	popFromBackoffQ                   bool
	queueingHintMap                   QueueingHintMapPerProfile
	preEnqueuePluginMap               map[string][]PreEnqueuePlugin
	metrics                           Metrics
	version                           Version
	genericWorkload                   bool
}

// Option configures a PriorityQueue.
type Option func(*priorityQueueOptions)

// WithClock sets the queue's clock (required: there is no wall-clock default).
func WithClock(c PassiveClock) Option { return func(o *priorityQueueOptions) { o.clock = c } }

// WithPodInitialBackoffDuration sets podInitialBackoffSeconds.
func WithPodInitialBackoffDuration(d time.Duration) Option {
	return func(o *priorityQueueOptions) { o.podInitialBackoffDuration = d }
}

// WithPodMaxBackoffDuration sets podMaxBackoffSeconds; 0 disables backoff.
func WithPodMaxBackoffDuration(d time.Duration) Option {
	return func(o *priorityQueueOptions) { o.podMaxBackoffDuration = d }
}

// WithPodMaxInUnschedulablePodsDuration sets the leftover timeout.
func WithPodMaxInUnschedulablePodsDuration(d time.Duration) Option {
	return func(o *priorityQueueOptions) { o.podMaxInUnschedulablePodsDuration = d }
}

// WithPopFromBackoffQ sets the SchedulerPopFromBackoffQ feature gate (on by
// default in v1.36, as upstream).
func WithPopFromBackoffQ(enabled bool) Option {
	return func(o *priorityQueueOptions) { o.popFromBackoffQ = enabled }
}

// WithQueueingHintMapPerProfile sets the plugins' registered events and hints.
func WithQueueingHintMapPerProfile(m QueueingHintMapPerProfile) Option {
	return func(o *priorityQueueOptions) { o.queueingHintMap = m }
}

// WithPreEnqueuePluginMap sets each profile's PreEnqueue plugins. They run in
// the order given (upstream: Go map order, so a pod rejected by several has a
// random gating plugin).
func WithPreEnqueuePluginMap(m map[string][]PreEnqueuePlugin) Option {
	return func(o *priorityQueueOptions) { o.preEnqueuePluginMap = m }
}

// WithMetricsRecorder sets where the queue's metrics go.
func WithMetricsRecorder(m Metrics) Option { return func(o *priorityQueueOptions) { o.metrics = m } }

// hintEntry is one registered event of a profile with its hint functions.
type hintEntry struct {
	event ClusterEvent
	fns   []*QueueingHintFunction
}

// PriorityQueue is a model of kube-scheduler's scheduling queue
// (pkg/scheduler/backend/queue.PriorityQueue) of one of Versions, for pods
// that belong to no pod group, with SchedulerQueueingHints on (locked from
// v1.34, the only code from v1.37). It is single-threaded and starts nothing: where
// upstream's Run starts two loops, callers invoke FlushBackoffQCompleted and
// FlushUnschedulablePodsLeftover at the instants they choose; where upstream's
// Pop would block, Pop returns nil.
type PriorityQueue struct {
	clock                             PassiveClock
	podMaxInUnschedulablePodsDuration time.Duration
	popFromBackoffQ                   bool
	behaviour
	// unscheduledPodAddLabel and unqueuedPodUpdateLabel are the incoming
	// events of a new pod and of an update of a pod in no queue, in the
	// version's words.
	unscheduledPodAddLabel string
	unqueuedPodUpdateLabel string

	activeQ           *activeQueue
	backoffQ          *backoffQueue
	unschedulablePods *unschedulablePods
	// positions is where activeQ, podBackoffQ, podErrorBackoffQ and
	// unschedulablePods keep their pods' indices, tagged with the sub-queue:
	// a pod is in at most one, and finding which reads one word.
	positions heap.Positions

	// keys[id] is the pod key (namespace/name) the sub-queues index by id;
	// ids maps keys back, but for the keys in unmapped, given by a
	// ReplayIndex and entered in ids only when a key is looked up.
	keys     []string
	ids      map[string]int32
	unmapped []int32
	// podInfos is where newQueuedPodInfo takes records from, a block at a
	// time: one allocation per block rather than per pod; released holds
	// records a replay gave back (ReplayIndex.Release), taken first.
	podInfos []QueuedPodInfo
	released []*QueuedPodInfo

	hintMap           map[string][]hintEntry
	matchCache        map[string]map[ClusterEvent][]hintEntry
	registeredEvents  []ClusterEvent
	preEnqueuePlugins map[string][]PreEnqueuePlugin
	// defaultPreEnqueue is preEnqueuePlugins[DefaultSchedulerName], looked
	// up once: nearly every pod is the default scheduler's.
	defaultPreEnqueue []PreEnqueuePlugin
	pluginToEventsMap map[string][]ClusterEvent
	moveRequestCycle  int64
	// moveScratch is the array the pods to move out of unschedulablePods
	// are listed in (takeMoveScratch); lastEvent and lastLabel memoise label.
	moveScratch []*QueuedPodInfo
	lastEvent   ClusterEvent
	lastLabel   string
	metrics     Metrics
	// groups is the pod-group state, nil unless GenericWorkload (v1.37).
	groups *podGroups
}

// NewPriorityQueue returns an empty queue.
func NewPriorityQueue(opts ...Option) *PriorityQueue {
	o := priorityQueueOptions{
		podInitialBackoffDuration:         DefaultPodInitialBackoffDuration,
		podMaxBackoffDuration:             DefaultPodMaxBackoffDuration,
		podMaxInUnschedulablePodsDuration: DefaultPodMaxInUnschedulablePodsDuration,
		popFromBackoffQ:                   true,
		metrics:                           noopMetrics{},
		version:                           DefaultVersion,
	}
	for _, opt := range opts {
		opt(&o)
	}
	if o.clock == nil {
		panic("queue: NewPriorityQueue needs WithClock")
	}
	pq := &PriorityQueue{
		clock:                             o.clock,
		podMaxInUnschedulablePodsDuration: o.podMaxInUnschedulablePodsDuration,
		popFromBackoffQ:                   o.popFromBackoffQ,
		behaviour:                         behaviourOf(o.version),
		preEnqueuePlugins:                 o.preEnqueuePluginMap,
		defaultPreEnqueue:                 o.preEnqueuePluginMap[DefaultSchedulerName],
		ids:                               map[string]int32{},
		hintMap:                           map[string][]hintEntry{},
		matchCache:                        map[string]map[ClusterEvent][]hintEntry{},
		pluginToEventsMap:                 map[string][]ClusterEvent{},
		moveRequestCycle:                  -1,
		metrics:                           o.metrics,
	}
	pq.unscheduledPodAddLabel = pq.eventUnscheduledPodAdd().Label()
	pq.unqueuedPodUpdateLabel = EventUnschedulablePodUpdate.Label()
	if pq.updateOfUnqueuedPodAdds {
		pq.unqueuedPodUpdateLabel = pq.unscheduledPodAddLabel
	}
	pq.backoffQ = newBackoffQueue(o.clock, o.podInitialBackoffDuration, o.podMaxBackoffDuration, o.popFromBackoffQ, o.metrics, &pq.positions)
	var popper *backoffQueue
	if o.popFromBackoffQ {
		popper = pq.backoffQ
	}
	pq.activeQ = newActiveQueue(o.metrics, popper, &pq.positions)
	pq.unschedulablePods = newUnschedulablePods(o.metrics, &pq.positions)
	if o.genericWorkload && o.version >= V1_37 {
		pq.groups = newPodGroups(o.metrics)
		// Only then: an entry's weight costs a call per move.
		pq.activeQ.queue.SetWeigh(weigh)
		for _, h := range pq.backoffQ.heaps() {
			h.SetWeigh(weigh)
		}
	}

	pq.addQueueingHints(o.queueingHintMap)
	return pq
}

// addQueueingHints registers m's events and hint functions beside those
// registered already, in a fixed order; hint results do not depend on it.
func (p *PriorityQueue) addQueueingHints(m QueueingHintMapPerProfile) {
	profiles := make([]string, 0, len(m))
	for profile := range m {
		profiles = append(profiles, profile)
	}
	sort.Strings(profiles)
	for _, profile := range profiles {
		entries := p.hintMap[profile]
		for ev, fns := range m[profile] {
			i := slices.IndexFunc(entries, func(e hintEntry) bool { return e.event == ev })
			if i < 0 {
				entries = append(entries, hintEntry{event: ev})
				i = len(entries) - 1
			}
			entries[i].fns = append(entries[i].fns[:len(entries[i].fns):len(entries[i].fns)], fns...)
			if !slices.Contains(p.registeredEvents, ev) {
				p.registeredEvents = append(p.registeredEvents, ev)
			}
			for _, fn := range fns {
				p.pluginToEventsMap[fn.PluginName] = append(p.pluginToEventsMap[fn.PluginName], ev)
			}
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].event.Label() < entries[j].event.Label() })
		p.hintMap[profile] = entries
		// The memoised matches are of the registrations before.
		delete(p.matchCache, profile)
	}
}

// intern returns the ID of the pod's key, remembering it on the Pod object
// (a Pod must not be renamed once given to the queue).
func (p *PriorityQueue) intern(pod *Pod) int32 {
	if pod.internedBy == p {
		return pod.id
	}
	k := pod.Key()
	id, ok := p.keyID(k)
	if !ok {
		id = int32(len(p.keys))
		p.keys = append(p.keys, k)
		p.ids[k] = id
	}
	pod.internedBy, pod.id = p, id
	return id
}

func (p *PriorityQueue) keyID(key string) (int32, bool) {
	for _, id := range p.unmapped {
		p.ids[p.keys[id]] = id
	}
	p.unmapped = p.unmapped[:0]
	id, ok := p.ids[key]
	return id, ok
}

// SchedulingCycle is the number of pods handed out so far.
func (p *PriorityQueue) SchedulingCycle() int64 { return p.activeQ.schedCycle }

// eventUnscheduledPodAdd is the event of a new unscheduled pod.
func (p *PriorityQueue) eventUnscheduledPodAdd() ClusterEvent {
	if p.targetPodEvents {
		return EventUnscheduledPodAdd
	}
	return EventUnschedulablePodAdd
}

// PopFromBackoffQEnabled reports the SchedulerPopFromBackoffQ setting.
func (p *PriorityQueue) PopFromBackoffQEnabled() bool { return p.popFromBackoffQ }

func (p *PriorityQueue) isEventOfInterest(e ClusterEvent) bool {
	if e.IsWildCard() {
		return true
	}
	for _, r := range p.registeredEvents {
		if MatchClusterEvents(r, e) {
			return true
		}
	}
	return false
}

// matchingHints returns a profile's registrations that match e (memoised:
// the set of distinct events is small).
func (p *PriorityQueue) matchingHints(profile string, e ClusterEvent) ([]hintEntry, bool) {
	entries, ok := p.hintMap[profile]
	if !ok {
		return nil, false
	}
	cache := p.matchCache[profile]
	if cache == nil {
		cache = map[ClusterEvent][]hintEntry{}
		p.matchCache[profile] = cache
	}
	if m, ok := cache[e]; ok {
		return m, true
	}
	var m []hintEntry
	for _, entry := range entries {
		if MatchClusterEvents(entry.event, e) {
			m = append(m, entry)
		}
	}
	cache[e] = m
	return m, true
}

// isPodWorthRequeuing asks the rejector plugins' hints whether e may make the
// pod schedulable.
func (p *PriorityQueue) isPodWorthRequeuing(pInfo *QueuedPodInfo, e ClusterEvent, oldObj, newObj any) queueingStrategy {
	return p.isPodWorthRequeuingWith(pInfo, e, oldObj, newObj, nil)
}

// eventMatches memoises, for one event offered to many pods, the
// registrations of the last profile asked about.
type eventMatches struct {
	profile string
	entries []hintEntry
	ok      bool
}

func (p *PriorityQueue) isPodWorthRequeuingWith(pInfo *QueuedPodInfo, e ClusterEvent, oldObj, newObj any, memo *eventMatches) queueingStrategy {
	if !pInfo.hasRejectors() {
		return queueAfterBackoff
	}
	if e.IsWildCard() {
		// A wildcard aimed at one pod (ForceActivate of an in-flight pod)
		// only concerns that pod.
		if newObj != nil {
			if pod, ok := newObj.(*Pod); !ok || pod.UID != pInfo.Pod.UID {
				return queueSkip
			}
		}
		return queueAfterBackoff
	}
	profile := pInfo.Pod.schedulerName()
	var entries []hintEntry
	var ok bool
	if memo != nil && memo.entries != nil && memo.profile == profile {
		entries, ok = memo.entries, memo.ok
	} else {
		entries, ok = p.matchingHints(profile, e)
		if memo != nil {
			*memo = eventMatches{profile: profile, entries: entries, ok: ok}
			if memo.entries == nil {
				memo.entries = []hintEntry{}
			}
		}
	}
	if !ok {
		return queueAfterBackoff
	}
	strategy := queueSkip
	for _, entry := range entries {
		for _, fn := range entry.fns {
			if !pInfo.isRejector(fn.PluginName) {
				continue
			}
			hint, err := fn.QueueingHintFn(pInfo.Pod, oldObj, newObj)
			if err != nil {
				hint = Queue
			}
			if hint == QueueSkip {
				continue
			}
			if pInfo.PendingPlugins.Has(fn.PluginName) {
				return queueImmediately
			}
			if len(pInfo.PendingPlugins) == 0 {
				return queueAfterBackoff
			}
			strategy = queueAfterBackoff
		}
	}
	return strategy
}

// runPreEnqueuePlugins runs the profile's PreEnqueue plugins, the gating
// plugin first, and records the first rejection as the gating plugin.
func (p *PriorityQueue) runPreEnqueuePlugins(pInfo *QueuedPodInfo) {
	if pInfo.grp != nil && pInfo.IsPodGroup() {
		p.runPreEnqueueGroup(pInfo)
		return
	}
	plugins := p.defaultPreEnqueue
	if n := pInfo.Pod.SchedulerName; n != "" && n != DefaultSchedulerName {
		plugins = p.preEnqueuePlugins[n]
	}
	gating := pInfo.GatingPlugin
	if gating != "" {
		for _, pl := range plugins {
			if pl.Name() == gating {
				if !p.runPreEnqueuePlugin(pl, pInfo) {
					return
				}
				break
			}
		}
	}
	for _, pl := range plugins {
		if gating != "" && pl.Name() == gating {
			continue
		}
		if !p.runPreEnqueuePlugin(pl, pInfo) {
			return
		}
	}
	pInfo.GatingPlugin = ""
}

func (p *PriorityQueue) runPreEnqueuePlugin(pl PreEnqueuePlugin, pInfo *QueuedPodInfo) bool {
	if s := pl.PreEnqueue(pInfo.Pod); s == nil {
		return true
	}
	pInfo.UnschedulablePlugins = pInfo.UnschedulablePlugins.Insert(pl.Name())
	pInfo.GatingPlugin = pl.Name()
	pInfo.GatingPluginEvents = p.pluginToEventsMap[pl.Name()]
	return false
}

// moveToActiveQ runs PreEnqueue (unless the pod comes from backoffQ with
// PopFromBackoffQ on) and puts the pod in activeQ, or, gated, in
// unschedulablePods. It reports whether the pod reached activeQ.
func (p *PriorityQueue) moveToActiveQ(pInfo *QueuedPodInfo, event string, movesFromBackoffQ bool) bool {
	gatedBefore := pInfo.Gated()
	if !(p.popFromBackoffQ && movesFromBackoffQ) {
		p.runPreEnqueuePlugins(pInfo)
	}
	if pInfo.Gated() {
		p.addGated(pInfo, gatedBefore, event, true)
		return false
	}
	if pInfo.InitialAttemptTimestamp == nil || pInfo.grp != nil {
		setInitialAttemptTimestamp(pInfo, p.clock.Now())
	}
	p.unschedulablePods.delete(pInfo.id, gatedBefore)
	p.backoffQ.delete(pInfo.id)
	p.activeQ.add(pInfo, event)
	return true
}

// moveToBackoffQ puts the pod in backoffQ; with PopFromBackoffQ, PreEnqueue
// runs first and may send it to unschedulablePods instead.
func (p *PriorityQueue) moveToBackoffQ(pInfo *QueuedPodInfo, event string) bool {
	gatedBefore := pInfo.Gated()
	if p.popFromBackoffQ {
		p.runPreEnqueuePlugins(pInfo)
		if pInfo.Gated() {
			p.addGated(pInfo, gatedBefore, event, false)
			return false
		}
	}
	p.unschedulablePods.delete(pInfo.id, gatedBefore)
	p.backoffQ.add(pInfo, event)
	return true
}

// addGated keeps a pod that PreEnqueue rejected in unschedulablePods. Up to
// v1.36, moveToActiveQ leaves it where it is if activeQ or backoffQ hold it
// (fromActiveQMove); up to v1.35, a pod unschedulablePods holds already is
// left as it is, gauges included; v1.37 clears the flush mark, as a gated
// pod makes no attempt that would.
func (p *PriorityQueue) addGated(pInfo *QueuedPodInfo, gatedBefore bool, event string, fromActiveQMove bool) {
	if fromActiveQMove && p.gatedMoveChecksQueues && (p.activeQ.queue.Has(pInfo.id) || p.backoffQ.has(pInfo.id)) {
		return
	}
	if p.gatedReaddKeepsRecord && p.unschedulablePods.get(pInfo.id) != nil {
		return
	}
	if p.flushReevaluatesGated {
		setWasFlushed(pInfo, false)
	}
	p.unschedulablePods.addOrUpdate(pInfo, gatedBefore, event)
}

// Where a requeue sent a pod.
const (
	activeQName        = "Active"
	backoffQName       = "Backoff"
	unschedulableQName = "Unschedulable"
)

func (p *PriorityQueue) requeuePodWithQueueingStrategy(pInfo *QueuedPodInfo, strategy queueingStrategy, event string) string {
	if strategy == queueSkip {
		p.unschedulablePods.addOrUpdate(pInfo, pInfo.Gated(), event)
		return unschedulableQName
	}
	if strategy == queueAfterBackoff && p.backoffQ.isPodBackingoff(pInfo) {
		if p.moveToBackoffQ(pInfo, event) {
			return backoffQName
		}
		return unschedulableQName
	}
	if p.moveToActiveQ(pInfo, event, false) {
		return activeQName
	}
	return unschedulableQName
}

func (p *PriorityQueue) newQueuedPodInfo(pod *Pod) *QueuedPodInfo {
	var pInfo *QueuedPodInfo
	if n := len(p.released); n > 0 {
		pInfo = p.released[n-1]
		p.released = p.released[:n-1]
		*pInfo = QueuedPodInfo{}
	} else {
		if len(p.podInfos) == 0 {
			p.podInfos = make([]QueuedPodInfo, 256)
		}
		pInfo = &p.podInfos[0]
		p.podInfos = p.podInfos[1:]
	}
	// The slot is fresh, all zero: set only what is not, field by field
	// rather than copying a whole record (with write barriers while the GC
	// runs).
	pInfo.Pod, pInfo.id, pInfo.Timestamp = pod, p.intern(pod), p.clock.Now()
	return pInfo
}

// Add enqueues a new pod (the informer saw an unscheduled pod).
func (p *PriorityQueue) Add(pod *Pod) { p.add(pod) }

func (p *PriorityQueue) add(pod *Pod) {
	pInfo := p.newQueuedPodInfo(pod)
	if p.isPodGroupMember(pod) {
		p.addPodGroupMember(pInfo)
		return
	}
	p.moveToActiveQ(pInfo, p.unscheduledPodAddLabel, false)
}

// Pop hands out the next entity, or nil where upstream's Pop would block
// (activeQ empty and, with PopFromBackoffQ, podBackoffQ empty too). A pod
// group's entity (IsPodGroup) puts all its members in flight at once.
func (p *PriorityQueue) Pop() *QueuedPodInfo {
	pi := p.activeQ.pop()
	if p.groups != nil && pi != nil {
		p.groups.lastPopped = ""
		if pi.IsPodGroup() {
			k := pi.Pod.Namespace + "/" + pi.Pod.Name
			p.groups.lastPopped = k
			p.groups.popped[k] = pi
		}
	}
	return pi
}

// WouldBlock reports whether Pop would return nil.
func (p *PriorityQueue) WouldBlock() bool { return p.activeQ.wouldBlock() }

// Done tells the queue that the in-flight pod's attempt is over.
// Upstream's Done takes the pod's UID; this one finds the pod by its key's
// ID first.
func (p *PriorityQueue) Done(pod *Pod) {
	p.intern(pod)
	p.activeQ.done(pod)
}

// AddUnschedulableIfNotPresent requeues a pod whose attempt failed; the caller
// has set its rejector plugins (empty for an error). It reports false, as
// upstream's error, when the pod is already queued; Done runs either way.
func (p *PriorityQueue) AddUnschedulableIfNotPresent(pInfo *QueuedPodInfo, podSchedulingCycle int64) bool {
	defer p.Done(pInfo.Pod)
	if pInfo.Pod.internedBy != p {
		// A record this queue did not make (a caller's own QueuedPodInfo).
		pInfo.id = p.intern(pInfo.Pod)
	}
	id := pInfo.id
	if p.unschedulablePods.get(id) != nil || p.activeQ.queue.Has(id) || p.backoffQ.has(id) {
		return false
	}
	if !pInfo.hasRejectors() {
		pInfo.ConsecutiveErrorsCount++
	} else {
		pInfo.UnschedulableCount++
		pInfo.ConsecutiveErrorsCount = 0
	}
	pInfo.Timestamp = p.clock.Now()
	pInfo.BackoffExpiration = time.Time{}
	pInfo.WasFlushedFromUnschedulable = false
	pInfo.flushedAfter = 0
	if p.groups != nil {
		if p.isPodGroupMember(pInfo.Pod) {
			// Done first: the member may join a group Pop could hand out.
			p.Done(pInfo.Pod)
			p.addPodGroupMember(pInfo)
			return true
		}
		p.groups.lastPopped = ""
	}
	p.requeuePodWithQueueingStrategy(pInfo, p.determineSchedulingHintForInFlightPod(pInfo), ScheduleAttemptFailure)
	return true
}

func (p *PriorityQueue) determineSchedulingHintForInFlightPod(pInfo *QueuedPodInfo) queueingStrategy {
	if !pInfo.hasRejectors() {
		return queueAfterBackoff
	}
	from, ok := p.activeQ.clusterEventsForPod(pInfo.Pod)
	if !ok {
		return queueAfterBackoff
	}
	strategy := queueSkip
	for _, e := range p.activeQ.inFlightEvents[from:] {
		if !e.isEvent {
			continue
		}
		switch p.isPodWorthRequeuing(pInfo, e.event, e.oldObj, e.newObj) {
		case queueImmediately:
			return queueImmediately
		case queueAfterBackoff:
			strategy = queueAfterBackoff
			if len(pInfo.PendingPlugins) == 0 {
				return queueAfterBackoff
			}
		}
	}
	return strategy
}

// FlushBackoffQCompleted moves every pod whose backoff completed to activeQ
// (upstream runs it every second; with PopFromBackoffQ on whole seconds).
func (p *PriorityQueue) FlushBackoffQCompleted() {
	for _, pInfo := range p.backoffQ.popAllBackoffCompleted() {
		p.moveToActiveQ(pInfo, BackoffComplete, true)
	}
}

// FlushUnschedulablePodsLeftover moves pods that waited in unschedulablePods
// longer than podMaxInUnschedulablePodsDuration (upstream runs it every 30 s).
// From v1.37 the wait counts from the pod's last flush too (FlushTimestamp),
// so that a gated pod, which the flush re-checks and leaves in place, is
// picked once per duration rather than at every flush.
func (p *PriorityQueue) FlushUnschedulablePodsLeftover() {
	now := p.clock.Now()
	podsToMove := p.takeMoveScratch()
	for _, pInfo := range p.unschedulablePods.pods {
		// FlushTimestamp, when set, is after Timestamp.
		last := pInfo.Timestamp.Add(pInfo.flushedAfter)
		if now.Sub(last) > p.podMaxInUnschedulablePodsDuration {
			setWasFlushed(pInfo, true)
			if p.flushReevaluatesGated {
				pInfo.flushedAfter = now.Sub(pInfo.Timestamp)
			}
			podsToMove = append(podsToMove, pInfo)
		}
	}
	if len(podsToMove) > 0 {
		p.movePodsToActiveOrBackoffQueue(podsToMove, EventUnschedulableTimeout, nil, nil)
	}
	p.keepMoveScratch(podsToMove)
}

// takeMoveScratch returns moveScratch emptied, for a list of pods to move
// out of unschedulablePods: a copy, as upstream's, since moving a pod
// changes unschedulablePods. keepMoveScratch gives the array back for the
// next list, without the pointers it held.
func (p *PriorityQueue) takeMoveScratch() []*QueuedPodInfo {
	s := p.moveScratch[:0]
	p.moveScratch = nil
	return s
}

func (p *PriorityQueue) keepMoveScratch(s []*QueuedPodInfo) {
	clear(s)
	p.moveScratch = s[:0]
}

// label is e.Label(), spelled once for a run of the same event.
func (p *PriorityQueue) label(e ClusterEvent) string {
	if e != p.lastEvent || p.lastLabel == "" {
		p.lastEvent, p.lastLabel = e, e.Label()
	}
	return p.lastLabel
}

// PreEnqueueCheck filters the pods a MoveAll considers.
type PreEnqueueCheck func(pod *Pod) bool

// MoveAllToActiveOrBackoffQueue offers a cluster event to every pod in
// unschedulablePods (that passes preCheck), and records it for in-flight pods.
func (p *PriorityQueue) MoveAllToActiveOrBackoffQueue(e ClusterEvent, oldObj, newObj any, preCheck PreEnqueueCheck) {
	if !p.isEventOfInterest(e) {
		return
	}
	pods := p.takeMoveScratch()
	for _, pInfo := range p.unschedulablePods.pods {
		if preCheck == nil || anyPod(pInfo, preCheck) {
			pods = append(pods, pInfo)
		}
	}
	p.movePodsToActiveOrBackoffQueue(pods, e, oldObj, newObj)
	p.keepMoveScratch(pods)
}

func (p *PriorityQueue) movePodsToActiveOrBackoffQueue(pods []*QueuedPodInfo, e ClusterEvent, oldObj, newObj any) {
	if !p.isEventOfInterest(e) {
		return
	}
	label := p.label(e)
	var memo eventMatches
	var gating gatingMatch
	for _, pInfo := range pods {
		// Gated pods only react to their gating plugin's events, and from
		// v1.37 to wildcard events (the leftover flush) too.
		if pInfo.Gated() && !(p.flushReevaluatesGated && e.IsWildCard()) && !gating.matches(e, pInfo.GatingPluginEvents) {
			continue
		}
		hint := p.isEntityWorthRequeuing(pInfo, e, oldObj, newObj, &memo)
		if hint == queueSkip {
			continue
		}
		i := p.unschedulablePods.index(pInfo.id)
		p.unschedulablePods.delete(pInfo.id, pInfo.Gated())
		if p.requeuePodWithQueueingStrategy(pInfo, hint, label) == unschedulableQName {
			p.unschedulablePods.keepPlace(pInfo.id, i)
		}
	}
	p.moveRequestCycle = p.activeQ.schedCycle
	p.activeQ.addEventIfAnyInFlight(oldObj, newObj, e)
}

// gatingMatch memoises, for one event offered to many gated pods, whether it
// matches a gating plugin's events: the pods gated by one plugin share that
// plugin's list (pluginToEventsMap), so it is matched once per event rather
// than once per pod.
type gatingMatch struct {
	events []ClusterEvent
	match  bool
}

func (g *gatingMatch) matches(e ClusterEvent, events []ClusterEvent) bool {
	if len(events) == 0 {
		return false
	}
	if len(g.events) != len(events) || &g.events[0] != &events[0] {
		g.events, g.match = events, MatchAnyClusterEvent(e, events)
	}
	return g.match
}

// Activate forces pods in unschedulablePods or backoffQ into activeQ; for an
// in-flight pod it records a ForceActivate aimed at it.
func (p *PriorityQueue) Activate(pods []*Pod) {
	for _, pod := range pods {
		if p.isPodGroupMember(pod) {
			p.activatePodGroupMember(pod)
			continue
		}
		if p.activateID(p.intern(pod)) {
			continue
		}
		p.activeQ.addEventsIfPodInFlight(nil, pod, []ClusterEvent{EventForceActivate})
		p.moveRequestCycle = p.activeQ.schedCycle
	}
}

func (p *PriorityQueue) activateID(id int32) bool {
	pInfo := p.unschedulablePods.get(id)
	movesFromBackoffQ := false
	if pInfo == nil {
		var ok bool
		if pInfo, ok = p.backoffQ.get(id); !ok || !p.backoffQ.delete(id) {
			return false
		}
		movesFromBackoffQ = !p.activateFromBackoffRunsPreEnqueue
	}
	return p.moveToActiveQ(pInfo, ForceActivate, movesFromBackoffQ)
}

// Update applies an update of an unscheduled pod.
func (p *PriorityQueue) Update(oldPod, newPod *Pod) {
	events := PodSchedulingPropertiesChange(newPod, oldPod, p.targetPodEvents)
	if oldPod != nil && p.isPodGroupMember(oldPod) {
		p.updatePodGroupMember(oldPod, newPod, events)
		return
	}
	if p.activeQ.addEventsIfPodInFlight(oldPod, newPod, events) {
		return
	}
	id := p.intern(newPod)
	if oldPod != nil {
		if p.activeQ.update(id, newPod) != nil || p.backoffQ.update(id, newPod) != nil {
			return
		}
	}
	if pInfo := p.unschedulablePods.get(id); pInfo != nil {
		pInfo.Pod = newPod
		for _, e := range events {
			q := p.requeuePodWithQueueingStrategy(pInfo, p.isPodWorthRequeuing(pInfo, e, oldPod, newPod), e.Label())
			if q == activeQName || p.popFromBackoffQ && q == backoffQName {
				break
			}
		}
		return
	}
	if p.updateOfUnqueuedPodAdds {
		p.add(newPod)
		return
	}
	p.moveToActiveQ(p.newQueuedPodInfo(newPod), p.unqueuedPodUpdateLabel, false)
}

// Delete removes a queued pod; in-flight pods are not affected.
func (p *PriorityQueue) Delete(pod *Pod) {
	if p.isPodGroupMember(pod) {
		p.deletePodGroupMember(pod)
		return
	}
	id := p.intern(pod)
	if p.activeQ.queue.Delete(id) || p.backoffQ.delete(id) {
		return
	}
	if pInfo := p.unschedulablePods.get(id); pInfo != nil {
		p.unschedulablePods.delete(id, pInfo.Gated())
	}
}

// anyPod reports whether check passes for the pod or, for a group, for any
// member.
func anyPod(pi *QueuedPodInfo, check PreEnqueueCheck) bool {
	if !pi.IsPodGroup() {
		return check(pi.Pod)
	}
	for _, m := range pi.grp.members {
		if check(m.Pod) {
			return true
		}
	}
	return false
}
