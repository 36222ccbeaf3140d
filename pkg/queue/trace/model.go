package trace

import (
	"strings"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

// clock is the model's virtual clock.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

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

// Model drives the queue model (pkg/queue) with a trace.
type Model struct {
	Queue   *queue.PriorityQueue
	Metrics *queue.Recorder
	clock   *clock
	// pods is indexed by the queue's pod ID, so that a name is hashed once
	// per operation (by the queue's own key index).
	pods []*podState
	// last caches the latest lookup: Replay asks Where and then applies the
	// op to the same pod.
	lastName  string
	lastState *podState
}

// podState is what the driver keeps per pod name: the latest object, and the
// record handed out by Pop while the pod is in flight.
type podState struct {
	pod      *queue.Pod
	inFlight *queue.QueuedPodInfo
}

var _ Driver = &Model{}

// NewModel returns a model queue configured as the trace says: cfg, and every
// plugin in plugins registered for every event of Events.
func NewModel(cfg Config, plugins []string) *Model {
	m := &Model{
		Metrics: queue.NewRecorder(),
		clock:   &clock{now: Epoch},
	}
	hints := queue.QueueingHintMap{}
	for _, ev := range Events {
		var fns []*queue.QueueingHintFunction
		for _, pl := range plugins {
			pl := pl
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
	hints[queue.ClusterEvent{Resource: queue.ResourcePod, ActionType: queue.UpdatePodSchedulingGatesEliminated}] = []*queue.QueueingHintFunction{{
		PluginName: SchedulingGatesPlugin,
		QueueingHintFn: func(pod *queue.Pod, _, newObj any) (queue.QueueingHint, error) {
			if p, ok := newObj.(*queue.Pod); ok && p.UID == pod.UID {
				return queue.Queue, nil
			}
			return queue.QueueSkip, nil
		},
	}}
	m.Queue = queue.NewPriorityQueue(
		queue.WithClock(m.clock),
		queue.WithPopFromBackoffQ(cfg.PopFromBackoffQ),
		queue.WithPodInitialBackoffDuration(time.Duration(cfg.PodInitialBackoffSeconds)*time.Second),
		queue.WithPodMaxBackoffDuration(time.Duration(cfg.PodMaxBackoffSeconds)*time.Second),
		queue.WithPodMaxInUnschedulablePodsDuration(time.Duration(cfg.PodMaxInUnschedulablePodsSeconds)*time.Second),
		queue.WithQueueingHintMapPerProfile(queue.QueueingHintMapPerProfile{queue.DefaultSchedulerName: hints}),
		queue.WithPreEnqueuePluginMap(map[string][]queue.PreEnqueuePlugin{queue.DefaultSchedulerName: {schedulingGates{}}}),
		queue.WithMetricsRecorder(m.Metrics),
	)
	return m
}

// state returns the pod's state, nil for a name never added.
func (m *Model) state(name string) *podState {
	if m.lastState != nil && name == m.lastName {
		return m.lastState
	}
	id, ok := m.Queue.KeyID(name)
	if !ok || int(id) >= len(m.pods) || m.pods[id] == nil {
		return nil
	}
	st := m.pods[id]
	m.lastName, m.lastState = name, st
	return st
}

// stateOf returns the state of a pod object the queue handed out.
func (m *Model) stateOf(p *queue.Pod) *podState { return m.pods[m.Queue.PodID(p)] }

// pod returns the latest object of a pod, or a new one for a name never added.
func (m *Model) pod(name string) *queue.Pod {
	if st := m.state(name); st != nil {
		return st.pod
	}
	ns, n, _ := strings.Cut(name, "/")
	return &queue.Pod{Namespace: ns, Name: n, UID: name}
}

// SetTime implements Driver.
func (m *Model) SetTime(ms int64) { m.clock.now = Epoch.Add(time.Duration(ms) * time.Millisecond) }

// Add implements Driver.
func (m *Model) Add(name string, priority int32, gates []string) {
	if st := m.state(name); st != nil {
		// A re-add: a new object, keeping the old one's interned identity.
		p := *st.pod
		p.Priority, p.SchedulingGates = priority, gates
		st.pod = &p
		m.Queue.Add(&p)
		return
	}
	ns, n, _ := strings.Cut(name, "/")
	p := &queue.Pod{Namespace: ns, Name: n, UID: name, Priority: priority, SchedulingGates: gates}
	id := int(m.Queue.PodID(p))
	for len(m.pods) <= id {
		m.pods = append(m.pods, nil)
	}
	m.pods[id] = &podState{pod: p}
	m.Queue.Add(p)
}

// Pop implements Driver.
func (m *Model) Pop() (string, int, bool) {
	pi := m.Queue.Pop()
	if pi == nil {
		return "", 0, false
	}
	m.stateOf(pi.Pod).inFlight = pi
	return pi.Pod.UID, pi.Attempts, true
}

// Fail implements Driver.
func (m *Model) Fail(name string, plugins, pending []string) {
	st := m.state(name)
	pi := st.inFlight
	st.inFlight = nil
	pi.ClearRejectorPlugins()
	pi.UnschedulablePlugins = queue.NewPluginSet(plugins...)
	pi.PendingPlugins = queue.NewPluginSet(pending...)
	m.Queue.AddUnschedulableIfNotPresent(pi, m.Queue.SchedulingCycle())
}

// Done implements Driver.
func (m *Model) Done(name string) {
	m.state(name).inFlight = nil
	m.Queue.Done(name)
}

// Event implements Driver.
func (m *Model) Event(label string, plugins []string) {
	m.Queue.MoveAllToActiveOrBackoffQueue(Events[label], nil, &eventObject{queue: queue.NewPluginSet(plugins...)}, nil)
}

// Activate implements Driver.
func (m *Model) Activate(names []string) {
	pods := make([]*queue.Pod, 0, len(names))
	seen := map[string]bool{}
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			pods = append(pods, m.pod(n))
		}
	}
	m.Queue.Activate(pods)
}

// Ungate implements Driver: an update that removes all scheduling gates.
func (m *Model) Ungate(name string) {
	st := m.state(name)
	old := st.pod
	updated := *old
	updated.SchedulingGates = nil
	st.pod = &updated
	m.Queue.Update(old, &updated)
}

// Delete implements Driver.
func (m *Model) Delete(name string) { m.Queue.Delete(m.pod(name)) }

// FlushBackoffQCompleted implements Driver.
func (m *Model) FlushBackoffQCompleted() { m.Queue.FlushBackoffQCompleted() }

// FlushUnschedulablePodsLeftover implements Driver.
func (m *Model) FlushUnschedulablePodsLeftover() { m.Queue.FlushUnschedulablePodsLeftover() }

// Where implements Driver.
func (m *Model) Where(name string) string {
	st := m.state(name)
	if st == nil {
		return ""
	}
	if st.inFlight != nil {
		return string(queue.LocationInFlight)
	}
	loc, _ := m.Queue.LocatePod(st.pod)
	return string(loc)
}

// Snapshot implements Driver.
func (m *Model) Snapshot() Snapshot {
	pending := m.Metrics.PendingPods()
	s := Snapshot{
		Pending: Pending{
			Active:        pending[queue.LabelActive],
			Backoff:       pending[queue.LabelBackoff],
			Unschedulable: pending[queue.LabelUnschedulable],
			Gated:         pending[queue.LabelGated],
		},
		Incoming: m.Metrics.IncomingPods(),
		Pods:     map[string]PodState{},
	}
	m.Queue.Walk(func(loc queue.Location, pi *queue.QueuedPodInfo) {
		s.Pods[pi.Pod.Key()] = PodState{Queue: string(loc), Attempts: pi.Attempts}
	})
	for _, st := range m.pods {
		if st != nil && st.inFlight != nil {
			s.Pods[st.pod.Key()] = PodState{Queue: string(queue.LocationInFlight), Attempts: st.inFlight.Attempts}
		}
	}
	return s
}

// Quiescent implements Quiescer: backoffQ and unschedulablePods are empty.
func (m *Model) Quiescent() bool {
	_, backoff, unschedulable := m.Queue.Len()
	return backoff == 0 && unschedulable == 0
}
