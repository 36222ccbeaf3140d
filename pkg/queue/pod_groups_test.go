package queue

import (
	"testing"
	"time"
)

// newGroupHarness is newHarness on v1.37 with GenericWorkload and the
// SchedulingGates PreEnqueue plugin.
func newGroupHarness(t *testing.T, pfb bool) *harness {
	return newHarness(t, pfb, WithVersion(V1_37), WithGenericWorkload(true),
		WithPreEnqueuePluginMap(map[string][]PreEnqueuePlugin{DefaultSchedulerName: {gates{}}}))
}

func (h *harness) addMember(name, group string, gated bool) {
	p := &Pod{Namespace: "ns", Name: name, UID: name, PodGroup: group}
	if gated {
		p.SchedulingGates = []string{"wait"}
	}
	h.pod[name] = p
	h.q.Add(p)
}

func (h *harness) pending(queue string) int { return h.m.PendingPods()[queue] }

func (h *harness) wantWhere(names []string, want Location) {
	h.t.Helper()
	for _, n := range names {
		if got := h.where(n); got != want {
			h.t.Errorf("%s is in %q, want %q", n, got, want)
		}
	}
}

func memberNames(g *QueuedPodInfo) string {
	s := ""
	for _, m := range g.Members() {
		s += m.Pod.Name + " "
	}
	return s
}

// A gang created before its PodGroup waits in incompletePodGroupPods; the
// PodGroup queues it as one entity, and each member's arrival counts the
// whole group again (v1.37: incoming grows by the entity's size).
func TestPodGroups_incompleteThenObserved(t *testing.T) {
	h := newGroupHarness(t, true)
	for i, n := range []string{"a", "b", "c"} {
		h.at(i)
		h.addMember(n, "g", false)
	}
	h.wantWhere([]string{"a", "b", "c"}, LocationIncomplete)
	if got := h.pending(LabelIncomplete); got != 3 {
		t.Fatalf("pending incomplete %d, want 3", got)
	}
	h.at(10)
	h.q.AddPodGroup("ns", "g", 5)
	h.wantWhere([]string{"a", "b", "c"}, LocationActive)
	if got, want := h.m.IncomingPods()[LabelActive][EventUnscheduledPodAdd.Label()], 1+2+3; got != want {
		t.Errorf("incoming active UnscheduledPodAdd %d, want %d", got, want)
	}
	if a, i := h.pending(LabelActive), h.pending(LabelIncomplete); a != 3 || i != 0 {
		t.Errorf("pending active %d incomplete %d, want 3 and 0", a, i)
	}
	g := h.pop()
	if g == nil || !g.IsPodGroup() || g.Pod.Priority != 5 || g.Attempts != 1 {
		t.Fatalf("pop %+v, want group g of priority 5 at attempt 1", g)
	}
	if got := memberNames(g); got != "a b c " {
		t.Errorf("members %q, want a b c (timestamp order)", got)
	}
	for _, m := range g.Members() {
		if !h.q.InFlight(m.Pod) || m.Attempts != 1 {
			t.Errorf("member %s in flight %v attempts %d, want true and 1", m.Pod.Name, h.q.InFlight(m.Pod), m.Attempts)
		}
	}
	if h.q.SchedulingCycle() != 1 {
		t.Errorf("scheduling cycle %d, want 1: one per entity", h.q.SchedulingCycle())
	}
}

// A rejected group has no rejector plugins of its own, so it backs off in
// the error heap, which PopFromBackoffQ never pops from; its maximum backoff
// is the pods' times √size.
func TestPodGroups_rejectedGroupBacksOffInErrorHeap(t *testing.T) {
	h := newGroupHarness(t, true)
	h.q.AddPodGroup("ns", "g", 0)
	for _, n := range []string{"a", "b", "c", "d"} {
		h.addMember(n, "g", false)
	}
	var expiries []time.Duration
	for round := 0; round < 6; round++ {
		g := h.pop()
		if g == nil || !g.IsPodGroup() {
			t.Fatalf("round %d: pop %v, want the group", round, g)
		}
		for _, m := range g.Members() {
			h.fail(m, "A")
		}
		h.wantWhere([]string{"a", "b", "c", "d"}, LocationPending)
		if !h.q.AddAttemptedPodGroupIfNeeded(g, AttemptUnschedulable) {
			t.Fatalf("round %d: attempted refused", round)
		}
		h.wantWhere([]string{"a", "b", "c", "d"}, LocationErrorBackoff)
		if h.pop() != nil {
			t.Fatalf("round %d: popped from the error heap with PopFromBackoffQ on", round)
		}
		_, root := h.q.Locate(groupEntityKeyPrefix + "ns/g")
		expiries = append(expiries, root.BackoffExpiration.Sub(h.c.Now()))
		h.c.now = root.BackoffExpiration.Add(time.Second)
		h.q.FlushBackoffQCompleted()
		h.wantWhere([]string{"a"}, LocationActive)
	}
	// 1, 2, 4, 8, 16 s, then 10 s × √4 = 20 s (aligned to whole seconds).
	want := []time.Duration{1, 2, 4, 8, 16, 20}
	for i := range want {
		want[i] *= time.Second
	}
	for i := range want {
		if expiries[i] != want[i] {
			t.Errorf("backoffs %v, want %v", expiries, want)
			break
		}
	}
	if got := h.pending(LabelBackoff) + h.pending(LabelActive); got != 4 {
		t.Errorf("pending active+backoff %d, want 4 pods", got)
	}
}

// After a successful cycle the members left (one failed, one arrived
// meanwhile) go straight to activeQ; the failure keeps the group's
// timestamp, so that it comes back at once for preemption.
func TestPodGroups_successRequeuesRestToActiveQ(t *testing.T) {
	h := newGroupHarness(t, true)
	h.q.AddPodGroup("ns", "g", 0)
	h.addMember("a", "g", false)
	h.addMember("b", "g", false)
	h.at(100)
	h.add("solo", 0)
	g := h.pop()
	h.at(200)
	h.addMember("late", "g", false)
	h.wantWhere([]string{"late"}, LocationPending)
	h.q.Done(g.Members()[0].Pod)
	h.fail(g.Members()[1], "A")
	h.at(300)
	h.q.AddAttemptedPodGroupIfNeeded(g, AttemptSuccess)
	h.wantWhere([]string{"b", "late"}, LocationActive)
	if got := h.where("a"); got != "" {
		t.Errorf("scheduled a is in %q", got)
	}
	// Timestamp 0 < solo's 100: the group is ahead.
	if next := h.pop(); next == nil || !next.IsPodGroup() || memberNames(next) != "b late " {
		t.Errorf("pop %v, want group [b late] before solo", next)
	}
}

// One gated member gates its whole group; removing its gates releases it.
func TestPodGroups_gatedMemberGatesGroup(t *testing.T) {
	h := newGroupHarness(t, true)
	h.q.AddPodGroup("ns", "g", 0)
	h.addMember("a", "g", false)
	h.addMember("b", "g", true)
	h.wantWhere([]string{"a", "b"}, LocationGated)
	if got := h.pending(LabelGated); got != 2 {
		t.Errorf("pending gated %d, want 2 pods", got)
	}
	ungated := *h.pod["b"]
	ungated.SchedulingGates = nil
	h.q.Update(h.pod["b"], &ungated)
	h.wantWhere([]string{"a", "b"}, LocationActive)
	if g, u := h.pending(LabelGated), h.pending(LabelActive); g != 0 || u != 2 {
		t.Errorf("pending gated %d active %d, want 0 and 2", g, u)
	}
}

// Deleting a member requeues the rest; deleting the PodGroup sends them to
// incompletePodGroupPods; Activate of a member activates its group.
func TestPodGroups_deleteAndActivate(t *testing.T) {
	h := newGroupHarness(t, true)
	h.q.AddPodGroup("ns", "g", 0)
	h.addMember("a", "g", false)
	h.addMember("b", "g", false)
	h.addMember("c", "g", false)
	g := h.pop()
	for _, m := range g.Members() {
		h.fail(m, "A")
	}
	h.q.AddAttemptedPodGroupIfNeeded(g, AttemptUnschedulable)
	h.wantWhere([]string{"a"}, LocationErrorBackoff)
	h.q.Activate([]*Pod{h.pod["a"]})
	h.wantWhere([]string{"a", "b", "c"}, LocationActive)
	h.q.Delete(h.pod["b"])
	if got := h.where("b"); got != "" {
		t.Errorf("deleted b is in %q", got)
	}
	if got := h.pending(LabelActive); got != 2 {
		t.Errorf("pending active %d, want 2", got)
	}
	h.q.DeletePodGroup("ns", "g")
	h.wantWhere([]string{"a", "c"}, LocationIncomplete)
	if a, i := h.pending(LabelActive), h.pending(LabelIncomplete); a != 0 || i != 2 {
		t.Errorf("pending active %d incomplete %d, want 0 and 2", a, i)
	}
}

// Without GenericWorkload, or before v1.37, a pod naming a PodGroup is
// queued on its own.
func TestPodGroups_offQueuesPodsAlone(t *testing.T) {
	for _, v := range []Version{V1_36, V1_37} {
		c := &fakeClock{now: epoch}
		q := NewPriorityQueue(WithClock(c), WithVersion(v), WithGenericWorkload(v == V1_36))
		q.Add(&Pod{Namespace: "ns", Name: "a", UID: "a", PodGroup: "g"})
		if pi := q.Pop(); pi == nil || pi.IsPodGroup() || pi.Pod.Name != "a" {
			t.Errorf("%v: pop %v, want pod a alone", v, pi)
		}
	}
}
