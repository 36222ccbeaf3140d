package queue

import (
	"fmt"
	"testing"
	"time"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type harness struct {
	t   *testing.T
	c   *fakeClock
	q   *PriorityQueue
	m   *Recorder
	pod map[string]*Pod
}

// newHarness builds a queue whose plugins "A" and "B" are registered for
// NodeAdd and answer Queue when the event's new object names them.
func newHarness(t *testing.T, pfb bool, opts ...Option) *harness {
	h := &harness{t: t, c: &fakeClock{now: epoch}, m: NewRecorder(), pod: map[string]*Pod{}}
	nodeAdd := ClusterEvent{Resource: ResourceNode, ActionType: Add}
	hint := func(plugin string) *QueueingHintFunction {
		return &QueueingHintFunction{PluginName: plugin, QueueingHintFn: func(_ *Pod, _, newObj any) (QueueingHint, error) {
			if s, ok := newObj.(string); ok && s == plugin {
				return Queue, nil
			}
			return QueueSkip, nil
		}}
	}
	h.q = NewPriorityQueue(append([]Option{WithClock(h.c), WithPopFromBackoffQ(pfb), WithMetricsRecorder(h.m),
		WithQueueingHintMapPerProfile(QueueingHintMapPerProfile{DefaultSchedulerName: {nodeAdd: {hint("A"), hint("B")}}})}, opts...)...)
	return h
}

func (h *harness) at(ms int) { h.c.now = epoch.Add(time.Duration(ms) * time.Millisecond) }

func (h *harness) add(name string, prio int32) {
	p := &Pod{Namespace: "ns", Name: name, UID: name, Priority: prio}
	h.pod[name] = p
	h.q.Add(p)
}

func (h *harness) pop() *QueuedPodInfo { return h.q.Pop() }

func (h *harness) fail(pi *QueuedPodInfo, plugins ...string) {
	pi.ClearRejectorPlugins()
	pi.UnschedulablePlugins = NewPluginSet(plugins...)
	h.q.AddUnschedulableIfNotPresent(pi, h.q.SchedulingCycle())
}

func (h *harness) where(name string) Location {
	loc, _ := h.q.Locate("ns/" + name)
	return loc
}

func names(pis ...*QueuedPodInfo) string {
	s := ""
	for _, pi := range pis {
		if pi == nil {
			s += "<nil> "
		} else {
			s += pi.Pod.Name + " "
		}
	}
	return s
}

func TestPriorityQueue_activeQOrder(t *testing.T) {
	h := newHarness(t, true)
	h.add("low", 0)
	h.at(1)
	h.add("high", 100)
	h.at(2)
	h.add("mid", 50)
	h.at(3)
	h.add("mid2", 50)
	if got, want := names(h.pop(), h.pop(), h.pop(), h.pop(), h.pop()), "high mid mid2 low <nil> "; got != want {
		t.Errorf("pop order %q, want %q", got, want)
	}
	if got := h.q.SchedulingCycle(); got != 4 {
		t.Errorf("scheduling cycle %d, want 4", got)
	}
}

// TestPopFromBackoffQWhenActiveQEmpty: with the gate on, an empty activeQ pops
// podBackoffQ's head before its backoff ends; with it off Pop blocks.
func TestPopFromBackoffQWhenActiveQEmpty(t *testing.T) {
	for _, pfb := range []bool{true, false} {
		t.Run(fmt.Sprintf("popFromBackoffQ=%v", pfb), func(t *testing.T) {
			h := newHarness(t, pfb)
			h.add("a", 0)
			pi := h.pop()
			h.at(100)
			h.q.MoveAllToActiveOrBackoffQueue(ClusterEvent{Resource: ResourceNode, ActionType: Add}, nil, "A", nil)
			h.at(200)
			h.fail(pi, "A")
			if got := h.where("a"); got != LocationBackoff {
				t.Fatalf("after an in-flight NodeAdd the pod is in %q, want backoff", got)
			}
			h.at(300)
			got := h.pop()
			if pfb {
				if got == nil || got.Attempts != 2 {
					t.Fatalf("Pop = %v, want a with attempts 2", got)
				}
				if n := h.m.IncomingPods()[LabelActive][PopFromBackoffQ]; n != 1 {
					t.Errorf("incoming{active,PopFromBackoffQ} = %d, want 1", n)
				}
			} else if got != nil {
				t.Fatalf("Pop = %v, want nil (blocks) with the gate off", got.Pod.Name)
			}
		})
	}
}

// TestErrorBackoffNotPoppedEarly: pods without rejector plugins wait in
// podErrorBackoffQ, which PopFromBackoffQ never takes from.
func TestErrorBackoffNotPoppedEarly(t *testing.T) {
	h := newHarness(t, true)
	h.add("e", 0)
	pi := h.pop()
	h.at(300)
	h.fail(pi)
	if got := h.where("e"); got != LocationErrorBackoff {
		t.Fatalf("error failure lands in %q, want errorBackoff", got)
	}
	if !h.q.WouldBlock() || h.pop() != nil {
		t.Fatal("Pop took a pod from podErrorBackoffQ")
	}
	h.at(1000)
	h.q.FlushBackoffQCompleted()
	if got := h.where("e"); got != LocationErrorBackoff {
		t.Fatalf("at 1 s the pod is in %q; its window (1 s) is still current", got)
	}
	h.at(2000)
	h.q.FlushBackoffQCompleted()
	if got := h.where("e"); got != LocationActive {
		t.Fatalf("at 2 s the pod is in %q, want active", got)
	}
	if n := h.m.IncomingPods()[LabelActive][BackoffComplete]; n != 1 {
		t.Errorf("incoming{active,BackoffComplete} = %d, want 1", n)
	}
}

// TestWindowPriorityOrdering: pods expiring in one window pop by priority.
func TestWindowPriorityOrdering(t *testing.T) {
	h := newHarness(t, true)
	h.add("low", 0)
	h.add("high", 10)
	h.add("mid", 5)
	low, high, mid := h.pop(), h.pop(), h.pop()
	h.q.MoveAllToActiveOrBackoffQueue(ClusterEvent{Resource: ResourceNode, ActionType: Add}, nil, "A", nil)
	for _, s := range []struct {
		ms int
		pi *QueuedPodInfo
	}{{100, high}, {200, low}, {900, mid}} {
		h.at(s.ms)
		h.fail(s.pi, "A")
	}
	// All three expire in the 1 s window: priority decides, not failure time.
	if got, want := names(h.pop(), h.pop(), h.pop()), "high mid low "; got != want {
		t.Errorf("PopFromBackoffQ order %q, want %q", got, want)
	}
}

// TestGatedPod: a gated pod stays gated across leftover flushes (v1.37
// re-checks it there, and counts it anew in unschedulable) and leaves for
// activeQ when its gates are removed, under the version's event name.
func TestGatedPod(t *testing.T) {
	for _, tc := range []struct {
		version          Version
		ungateLabel      string
		flushReaddsGated int
	}{
		{V1_34, "UnschedulablePodUpdatePodSchedulingGatesEliminated", 0},
		{V1_36, "UnschedulablePodUpdatePodSchedulingGatesEliminated", 0},
		{V1_37, "TargetPodUpdatePodSchedulingGatesEliminated", 1},
	} {
		t.Run(tc.version.String(), func(t *testing.T) { testGatedPod(t, tc.version, tc.ungateLabel, tc.flushReaddsGated) })
	}
}

func testGatedPod(t *testing.T, v Version, ungateLabel string, flushReaddsGated int) {
	h := newHarness(t, true)
	h.q = NewPriorityQueue(WithVersion(v), WithClock(h.c), WithMetricsRecorder(h.m),
		WithPreEnqueuePluginMap(map[string][]PreEnqueuePlugin{DefaultSchedulerName: {gates{}}}),
		WithQueueingHintMapPerProfile(QueueingHintMapPerProfile{DefaultSchedulerName: {
			{Resource: ResourcePod, ActionType: UpdatePodSchedulingGatesEliminated}: {{PluginName: "SchedulingGates", QueueingHintFn: func(pod *Pod, _, newObj any) (QueueingHint, error) {
				if p, ok := newObj.(*Pod); ok && p.UID == pod.UID {
					return Queue, nil
				}
				return QueueSkip, nil
			}}},
		}}))
	old := &Pod{Namespace: "ns", Name: "g", UID: "g", SchedulingGates: []string{"x"}}
	h.q.Add(old)
	if got := h.where("g"); got != LocationGated {
		t.Fatalf("gated pod in %q", got)
	}
	if g := h.m.PendingPods()[LabelGated]; g != 1 {
		t.Errorf("pending{gated} = %d, want 1", g)
	}
	h.q.FlushUnschedulablePodsLeftover()
	h.at(int(10 * time.Minute / time.Millisecond))
	h.q.FlushUnschedulablePodsLeftover()
	if got := h.where("g"); got != LocationGated {
		t.Fatalf("the leftover flush moved a gated pod to %q", got)
	}
	if n := h.m.IncomingPods()[LabelUnschedulable][UnschedulableTimeout]; n != flushReaddsGated {
		t.Errorf("incoming{unschedulable, UnschedulableTimeout} = %d, want %d", n, flushReaddsGated)
	}
	if g := h.m.PendingPods()[LabelGated]; g != 1 {
		t.Errorf("pending{gated} after the flush = %d, want 1", g)
	}
	updated := *old
	updated.SchedulingGates = nil
	h.q.Update(old, &updated)
	if got := h.where("g"); got != LocationActive {
		t.Fatalf("after ungate the pod is in %q, want active", got)
	}
	if n := h.m.IncomingPods()[LabelActive][ungateLabel]; n != 1 {
		t.Errorf("incoming by gate removal = %d, want 1", n)
	}
	if p := h.m.PendingPods(); p[LabelGated] != 0 || p[LabelActive] != 1 {
		t.Errorf("pending after ungate = %v", p)
	}
}

type gates struct{}

func (gates) Name() string { return "SchedulingGates" }
func (gates) PreEnqueue(p *Pod) *Status {
	if len(p.SchedulingGates) > 0 {
		return &Status{Reason: "gated"}
	}
	return nil
}

// TestLeftoverFlush: strictly more than podMaxInUnschedulablePodsDuration.
func TestLeftoverFlush(t *testing.T) {
	h := newHarness(t, true)
	h.add("u", 0)
	pi := h.pop()
	h.fail(pi, "B")
	if got := h.where("u"); got != LocationUnschedulable {
		t.Fatalf("no event while in flight: pod in %q, want unschedulable", got)
	}
	h.at(300000)
	h.q.FlushUnschedulablePodsLeftover()
	if got := h.where("u"); got != LocationUnschedulable {
		t.Fatalf("at exactly 5 min the pod moved to %q", got)
	}
	h.at(300001)
	h.q.FlushUnschedulablePodsLeftover()
	if got := h.where("u"); got != LocationActive {
		t.Fatalf("after 5 min the pod is in %q, want active", got)
	}
	if !pi.WasFlushedFromUnschedulable {
		t.Error("WasFlushedFromUnschedulable not set")
	}
}

// TestActivateInFlight: Activate of an in-flight pod sends it to backoffQ
// when it fails.
func TestActivateInFlight(t *testing.T) {
	h := newHarness(t, true)
	h.add("a", 0)
	pi := h.pop()
	h.q.Activate([]*Pod{h.pod["a"]})
	h.at(10)
	h.fail(pi, "A")
	if got := h.where("a"); got != LocationBackoff {
		t.Fatalf("pod in %q, want backoff", got)
	}
}

// TestEventsRetainedForOldestInFlight: Done drops events only up to the next
// in-flight pod's marker.
func TestEventsRetainedForOldestInFlight(t *testing.T) {
	h := newHarness(t, true)
	h.add("a", 0)
	h.at(1)
	h.add("b", 0)
	a, b := h.pop(), h.pop()
	h.q.MoveAllToActiveOrBackoffQueue(ClusterEvent{Resource: ResourceNode, ActionType: Add}, nil, "A", nil)
	h.q.Done(b.Pod)
	h.fail(a, "A")
	if got := h.where("a"); got != LocationBackoff {
		t.Fatalf("a in %q, want backoff: the event was recorded after a was popped", got)
	}
	if n := len(h.q.activeQ.inFlightEvents) - h.q.activeQ.inFlightHead; n != 0 {
		t.Errorf("%d in-flight events left after every pod is done", n)
	}
}

func TestDeleteAndDuplicateFailure(t *testing.T) {
	h := newHarness(t, true)
	h.add("a", 0)
	pi := h.pop()
	h.fail(pi, "A")
	if h.q.AddUnschedulableIfNotPresent(pi, 0) {
		t.Error("a pod already queued was requeued again")
	}
	h.q.Delete(h.pod["a"])
	if got := h.where("a"); got != "" {
		t.Errorf("deleted pod still in %q", got)
	}
	if p := h.m.PendingPods(); p[LabelUnschedulable] != 0 {
		t.Errorf("pending after delete = %v", p)
	}
}

func TestIncomingEventLabels(t *testing.T) {
	tests := []struct {
		plugin  string
		version Version
		want    string
	}{
		{"NodeResourcesFit", V1_36, "AssignedPodDelete AssignedPodUpdatePodScaleDown NodeAdd NodeUpdateNodeAllocatable UnschedulablePodUpdatePodScaleDown"},
		{"TaintToleration", V1_34, "AssignedPodUpdatePodToleration NodeAdd NodeUpdateNodeTaint UnschedulablePodUpdatePodToleration"},
		{"SchedulingGates", V1_36, "AssignedPodUpdatePodSchedulingGatesEliminated UnschedulablePodUpdatePodSchedulingGatesEliminated"},
		// v1.37: the pending pod's own updates are TargetPod events.
		{"SchedulingGates", V1_37, "AssignedPodUpdatePodSchedulingGatesEliminated TargetPodUpdatePodSchedulingGatesEliminated"},
		{"NodeResourcesFit", V1_37, "AssignedPodDelete AssignedPodUpdatePodScaleDown NodeAdd NodeUpdateNodeAllocatable TargetPodUpdatePodScaleDown"},
		{"NoSuchPlugin", V1_37, ""},
	}
	for _, tt := range tests {
		t.Run(tt.plugin+"/"+tt.version.String(), func(t *testing.T) {
			got := ""
			for i, l := range IncomingEventLabels(tt.plugin, tt.version) {
				if i > 0 {
					got += " "
				}
				got += l
			}
			if got != tt.want {
				t.Errorf("IncomingEventLabels(%s) = %q, want %q", tt.plugin, got, tt.want)
			}
		})
	}
}

func TestGatingMatch_matches(t *testing.T) {
	nodeAdd := ClusterEvent{Resource: ResourceNode, ActionType: Add}
	gatesEliminated := PodGatesEliminated(false)
	registered := []ClusterEvent{nodeAdd, {Resource: ResourcePod, ActionType: UpdatePodSchedulingGatesEliminated}}
	copied := append([]ClusterEvent(nil), registered...)
	// One memo through the whole table, as through one event's pods: each
	// answer must be the list's own, whatever was asked before.
	var g gatingMatch
	for _, tc := range []struct {
		name   string
		events []ClusterEvent
		want   bool
	}{
		{"no events", nil, false},
		{"a list that matches", registered, true},
		{"the same list again", registered, true},
		{"a prefix of the same array", registered[:1], false},
		{"the whole list after its prefix", registered, true},
		{"an equal list elsewhere", copied, true},
		{"a list that does not match", []ClusterEvent{nodeAdd}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := g.matches(gatesEliminated, tc.events); got != tc.want {
				t.Errorf("matches(%v, %v) = %v, want %v", gatesEliminated, tc.events, got, tc.want)
			}
		})
	}
}
