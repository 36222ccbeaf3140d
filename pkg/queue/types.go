package queue

import (
	"sort"
	"time"
)

// DefaultSchedulerName is the profile pods use when they name none.
const DefaultSchedulerName = "default-scheduler"

// Pod is the little of a v1.Pod that the queue looks at. Conversion from
// *v1.Pod lives at the edge (pkg/explain, perf/), never here.
type Pod struct {
	Namespace string
	Name      string
	// UID identifies the pod while it is in flight; queues key by
	// namespace/name.
	UID           string
	Priority      int32
	SchedulerName string
	// SchedulingGates are the names of spec.schedulingGates.
	SchedulingGates []string
	Labels          map[string]string
	// Tolerations is the number of tolerations; a change in it is the
	// UpdatePodToleration sub-event.
	Tolerations int
	// PodGroup is spec.schedulingGroup.podGroupName: with GenericWorkload
	// (v1.37) the pod is queued as a member of that PodGroup of its
	// namespace.
	PodGroup string

	// key caches Key; internedBy and id cache the queue's ID for the key, so
	// that a Pod object the caller keeps is hashed once, not at every call.
	key        string
	internedBy *PriorityQueue
	id         int32
}

// Key is the pod's queue key, namespace/name.
func (p *Pod) Key() string {
	if p.key == "" {
		p.key = p.Namespace + "/" + p.Name
	}
	return p.key
}

func (p *Pod) schedulerName() string {
	if p.SchedulerName == "" {
		return DefaultSchedulerName
	}
	return p.SchedulerName
}

// QueuedPodInfo is a pod's record while the queue holds it. Field names and
// meanings are upstream's (framework.QueuedPodInfo); the same pointer travels
// between the sub-queues and is mutated in place.
type QueuedPodInfo struct {
	Pod *Pod
	// id is the queue's ID for Pod.Key(): sub-queues index by it.
	id int32
	// Timestamp is when the pod was added, reset at each failure: the activeQ
	// tie-break, the base of backoff and of the leftover timeout.
	Timestamp time.Time
	// Attempts counts hand-outs by Pop.
	Attempts int
	// UnschedulableCount counts failures with rejector plugins.
	UnschedulableCount int
	// ConsecutiveErrorsCount counts failures without rejector plugins since
	// the last one with.
	ConsecutiveErrorsCount int
	// BackoffExpiration caches the backoff expiry (zero: not computed).
	BackoffExpiration time.Time
	// InitialAttemptTimestamp is when the pod first entered activeQ.
	InitialAttemptTimestamp *time.Time
	// initialAttemptTimestamp is where InitialAttemptTimestamp points, so
	// that setting it allocates nothing.
	initialAttemptTimestamp time.Time
	// UnschedulablePlugins rejected the pod in its last attempt (a PreEnqueue
	// rejector is added too); PendingPlugins returned Pending.
	UnschedulablePlugins PluginSet
	PendingPlugins       PluginSet
	// GatingPlugin is the PreEnqueue plugin gating the pod, and
	// GatingPluginEvents the events it registered.
	GatingPlugin       string
	GatingPluginEvents []ClusterEvent
	// WasFlushedFromUnschedulable is set by the leftover flush.
	WasFlushedFromUnschedulable bool
	// flushedAfter is upstream's FlushTimestamp (v1.37), when the leftover
	// flush last picked the pod, as the time since Timestamp (0: not since
	// the pod's last failure, which sets Timestamp and clears both): 8 bytes
	// rather than a time.Time's 24, as every queued pod carries it.
	flushedAfter time.Duration
	// grp links a pod group's entity and its queued members (v1.37): on the
	// entity and on each member it is the same link; nil on a pod queued on
	// its own and on a member waiting outside its group.
	grp *groupLink
}

// Size is how many pods the entity is: a pod group's queued members, else 1.
func (p *QueuedPodInfo) Size() int {
	if p.IsPodGroup() {
		return len(p.grp.members)
	}
	return 1
}

// IsPodGroup reports whether the record is a pod group's entity (v1.37)
// rather than a pod.
func (p *QueuedPodInfo) IsPodGroup() bool { return p.grp != nil && p.grp.entity == p }

// Members are a pod group entity's queued pods in upstream's order
// (priority, attempts, timestamp, name); nil for a pod.
func (p *QueuedPodInfo) Members() []*QueuedPodInfo {
	if p.IsPodGroup() {
		return p.grp.members
	}
	return nil
}

// Group is the pod group entity a member is queued in, or nil.
func (p *QueuedPodInfo) Group() *QueuedPodInfo {
	if p.grp != nil && p.grp.entity != p {
		return p.grp.entity
	}
	return nil
}

// FlushTimestamp is when the leftover flush last picked the pod (v1.37;
// zero when it has not since the pod's last failure).
func (p *QueuedPodInfo) FlushTimestamp() time.Time {
	if p.flushedAfter == 0 {
		return time.Time{}
	}
	return p.Timestamp.Add(p.flushedAfter)
}

// Gated reports whether a PreEnqueue plugin holds the pod back.
func (p *QueuedPodInfo) Gated() bool { return p.GatingPlugin != "" }

// ClearRejectorPlugins is what the scheduler's failure handler does before
// requeueing (v1.36: Pop no longer does it).
func (p *QueuedPodInfo) ClearRejectorPlugins() {
	p.UnschedulablePlugins = nil
	p.PendingPlugins = nil
	p.GatingPlugin = ""
	p.GatingPluginEvents = nil
}

// hasRejectors reports whether UnschedulablePlugins ∪ PendingPlugins is
// non-empty; without rejectors a failure is an error.
func (p *QueuedPodInfo) hasRejectors() bool {
	return len(p.UnschedulablePlugins) != 0 || len(p.PendingPlugins) != 0
}

func (p *QueuedPodInfo) isRejector(plugin string) bool {
	return p.UnschedulablePlugins.Has(plugin) || p.PendingPlugins.Has(plugin)
}

// PluginSet is a small sorted set of plugin names (a pod rarely has more than
// a few), cheaper than a map.
type PluginSet []string

// NewPluginSet returns the set of names. A list that is already sorted and
// free of duplicates is used as is (Insert never writes into it).
func NewPluginSet(names ...string) PluginSet {
	if sortedUnique(names) {
		return PluginSet(names)
	}
	var s PluginSet
	for _, n := range names {
		s = s.Insert(n)
	}
	return s
}

func sortedUnique(l []string) bool {
	for i := 1; i < len(l); i++ {
		if l[i-1] >= l[i] {
			return false
		}
	}
	return true
}

// Has reports membership.
func (s PluginSet) Has(name string) bool {
	for _, n := range s {
		if n == name {
			return true
		}
	}
	return false
}

// Insert returns the set with name added.
func (s PluginSet) Insert(name string) PluginSet {
	if s.Has(name) {
		return s
	}
	// Full-slice expression: never write into a backing array another set shares.
	s = append(s[:len(s):len(s)], name)
	sort.Strings(s)
	return s
}

// Len is the number of names.
func (s PluginSet) Len() int { return len(s) }

// QueueingHint is a plugin's answer to "may this event make the pod
// schedulable?".
type QueueingHint int

// The two hints; there is no QueueImmediately hint upstream.
const (
	QueueSkip QueueingHint = iota
	Queue
)

// QueueingHintFn answers for one pod and one event's old and new objects.
// An error is taken as Queue.
type QueueingHintFn func(pod *Pod, oldObj, newObj any) (QueueingHint, error)

// QueueingHintFunction is a plugin's hint for one registered event.
type QueueingHintFunction struct {
	PluginName     string
	QueueingHintFn QueueingHintFn
}

// QueueingHintMap is registered event → hint functions, for one profile.
type QueueingHintMap map[ClusterEvent][]*QueueingHintFunction

// QueueingHintMapPerProfile is profile (scheduler name) → QueueingHintMap.
type QueueingHintMapPerProfile map[string]QueueingHintMap

// PreEnqueuePlugin decides whether a pod may enter activeQ (or, with
// PopFromBackoffQ, backoffQ). A nil *Status admits it.
type PreEnqueuePlugin interface {
	Name() string
	PreEnqueue(pod *Pod) *Status
}

// Status is a PreEnqueue rejection.
type Status struct {
	// Error marks an internal error rather than an ordinary rejection.
	Error  bool
	Reason string
}

// queueingStrategy is what to do with a pod after an event or failure.
type queueingStrategy int

const (
	queueSkip queueingStrategy = iota
	queueAfterBackoff
	queueImmediately
)
