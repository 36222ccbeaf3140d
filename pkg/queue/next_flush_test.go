package queue

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// flushScene queues what a long gap holds on v1.37 with GenericWorkload:
// gated pods added in different 30 s windows (so that the flush picks them
// at different instants), a gated pod group, a pod group that failed and
// backs off when a gated member joins it, an unschedulable pod, and, with
// inFlight, a pod in flight across the gap. It returns the instant of its
// last operation.
func flushScene(t *testing.T, pfb, inFlight bool, opts ...Option) (*harness, time.Duration) {
	h := newGroupHarness(t, pfb)
	h.q = NewPriorityQueue(append([]Option{WithVersion(V1_37), WithGenericWorkload(true), WithClock(h.c),
		WithPopFromBackoffQ(pfb), WithMetricsRecorder(h.m),
		WithPreEnqueuePluginMap(map[string][]PreEnqueuePlugin{DefaultSchedulerName: {gates{}}})}, opts...)...)
	gated := func(ms int, name string) {
		h.at(ms)
		p := &Pod{Namespace: "ns", Name: name, UID: name, SchedulingGates: []string{"wait"}}
		h.pod[name] = p
		h.q.Add(p)
	}
	gated(1, "a")
	h.at(2)
	h.add("u", 0)
	h.fail(h.pop(), "B")
	h.at(3)
	h.q.AddPodGroup("ns", "g", 0)
	h.addMember("g1", "g", false)
	h.addMember("g2", "g", true)
	h.at(4)
	h.q.AddPodGroup("ns", "h", 0)
	h.addMember("h1", "h", false)
	grp := h.pop()
	if !grp.IsPodGroup() {
		t.Fatalf("popped %s, want group h", grp.Pod.Name)
	}
	h.fail(grp.Members()[0], "B")
	h.q.AddAttemptedPodGroupIfNeeded(grp, AttemptUnschedulable)
	h.at(5)
	h.addMember("h2", "h", true)
	gated(29999, "b")
	gated(45000, "c")
	last := 50001
	if inFlight {
		h.at(50000)
		h.add("f", 0)
		if pi := h.pop(); pi == nil || pi.Pod.Name != "f" {
			t.Fatalf("popped %v, want f", pi)
		}
	}
	gated(last, "d")
	return h, time.Duration(last) * time.Millisecond
}

// stepFlushes runs the flushes of every instant in (from, to] as a replay
// does: the backoff flush each second, the leftover flush each 30 s after it.
func stepFlushes(h *harness, from, to time.Duration) {
	for at := (from/time.Second + 1) * time.Second; at <= to; at += time.Second {
		h.c.now = epoch.Add(at)
		h.q.FlushBackoffQCompleted()
		if at%(30*time.Second) == 0 {
			h.q.FlushUnschedulablePodsLeftover()
		}
	}
}

// queueState describes everything a later operation or output can read: the
// metrics, every entity where it is with its queueing state, the order of
// unschedulablePods, and the in-flight events (a run of equal events as
// one, which is how determineSchedulingHintForInFlightPod reads them).
func queueState(q *PriorityQueue, m *Recorder) string {
	var b strings.Builder
	fmt.Fprintf(&b, "pending %v\nincoming %v\nmoveRequestCycle %d\n", m.PendingPods(), m.IncomingPods(), q.moveRequestCycle)
	describe := func(pi *QueuedPodInfo) {
		fmt.Fprintf(&b, " %s gating=%q rejectors=%v ts=%v flushed=%v/%v attempts=%d/%d/%d backoff=%v\n",
			pi.Pod.Name, pi.GatingPlugin, pi.UnschedulablePlugins, pi.Timestamp.Sub(epoch), pi.FlushTimestamp().Sub(epoch),
			pi.WasFlushedFromUnschedulable, pi.Attempts, pi.UnschedulableCount, pi.ConsecutiveErrorsCount, pi.BackoffExpiration.Sub(epoch))
	}
	q.Walk(func(l Location, pi *QueuedPodInfo) {
		fmt.Fprintf(&b, "%s", l)
		describe(pi)
		for _, mem := range pi.Members() {
			b.WriteString("  member")
			describe(mem)
		}
	})
	var last string
	for _, e := range q.activeQ.inFlightEvents[q.activeQ.inFlightHead:] {
		s := "marker " + fmt.Sprint(e.pod)
		if e.isEvent {
			s = fmt.Sprintf("event %s %v %v", e.event.Label(), e.oldObj, e.newObj)
		} else if e.pod != nil {
			s = "marker " + e.pod.Name
		}
		if s != last {
			b.WriteString(s + "\n")
		}
		last = s
	}
	return b.String()
}

// TestPriorityQueue_RecheckSettledGated: over a gap in which the leftover
// flush only re-checks settled gated entities, RecheckSettledGated leaves
// the queue as running the flushes of every instant does, for leftover
// durations that are and are not whole flush periods, with
// PopFromBackoffQ on and off, and with a pod in flight.
func TestPriorityQueue_RecheckSettledGated(t *testing.T) {
	const (
		warmUp = 2 * time.Hour
		// Neither end on a flush instant.
		gap = 10*time.Hour + 12345*time.Millisecond
	)
	for _, leftover := range []time.Duration{0, 5 * time.Second, 45 * time.Second, 5 * time.Minute, 400 * time.Second} {
		for _, pfb := range []bool{true, false} {
			for _, inFlight := range []bool{false, true} {
				// A 2000 s backoff outlasts the first picks: a gated group
				// backing off is sent to backoffQ with the gate off.
				for _, backoff := range []time.Duration{time.Second, 2000 * time.Second} {
					name := fmt.Sprintf("leftover=%s/popFromBackoffQ=%t/inFlight=%t/backoff=%s", leftover, pfb, inFlight, backoff)
					t.Run(name, func(t *testing.T) {
						opts := []Option{WithPodMaxInUnschedulablePodsDuration(leftover),
							WithPodInitialBackoffDuration(backoff), WithPodMaxBackoffDuration(backoff)}
						stepped, since := flushScene(t, pfb, inFlight, opts...)
						jumped, _ := flushScene(t, pfb, inFlight, opts...)
						from, to := since+warmUp, since+warmUp+gap
						for _, h := range []*harness{stepped, jumped} {
							stepFlushes(h, since, from)
						}
						if got, want := queueState(jumped.q, jumped.m), queueState(stepped.q, stepped.m); got != want {
							t.Fatalf("the scenes differ before the gap:\n%s\n%s", got, want)
						}
						sinceT := epoch.Add(since)
						// The contract: nothing but settled re-checks in the gap.
						if until, ok := jumped.q.LeftoverFlushIdleUntil(sinceT); ok && until.Before(epoch.Add(to)) {
							t.Fatalf("the leftover flush is idle only until %s, within the gap", until.Sub(epoch))
						}
						if e, ok := jumped.q.EarliestBackoffExpiry(); ok {
							t.Fatalf("backoffQ holds a pod (expiry %s) in the gap", e.Sub(epoch))
						}
						stepFlushes(stepped, from, to)
						period := 30 * time.Second
						first, last := (from/period+1)*period, to/period*period
						jumped.q.RecheckSettledGated(sinceT, epoch.Add(first), epoch.Add(last), period)
						want := queueState(stepped.q, stepped.m)
						if got := queueState(jumped.q, jumped.m); got != want {
							t.Fatalf("counted at once:\n%s\nstepped:\n%s", got, want)
						}
						if !strings.Contains(want, "UnschedulableTimeout") {
							t.Fatalf("no re-check counted:\n%s", want)
						}
						// What follows sees no difference either.
						for _, h := range []*harness{stepped, jumped} {
							stepFlushes(h, to, to+time.Hour)
							h.at(int((to + time.Hour) / time.Millisecond))
							ungated := *h.pod["a"]
							ungated.SchedulingGates = nil
							h.q.Update(h.pod["a"], &ungated)
							stepFlushes(h, to+time.Hour, to+2*time.Hour)
						}
						if got, want := queueState(jumped.q, jumped.m), queueState(stepped.q, stepped.m); got != want {
							t.Fatalf("after the gap, counted at once:\n%s\nstepped:\n%s", got, want)
						}
					})
				}
			}
		}
	}
}

// TestPriorityQueue_RecheckSettledGatedCounts: the closed form counts what
// the flush instants hold, for ranges that start and end on and off an
// entity's pick instants, and for the clock's whole range.
func TestPriorityQueue_RecheckSettledGatedCounts(t *testing.T) {
	const period = 30 * time.Second
	for _, tc := range []struct {
		name         string
		leftover     time.Duration
		first, last  time.Duration
		picks        int
		lastPickFrom time.Duration // the pod's FlushTimestamp after, since epoch
	}{
		// Picked at 330 s (settled there): then every 330 s.
		{"before the next pick", 5 * time.Minute, 360 * time.Second, 630 * time.Second, 0, 330 * time.Second},
		{"up to the next pick", 5 * time.Minute, 360 * time.Second, 660 * time.Second, 1, 660 * time.Second},
		{"a day", 5 * time.Minute, 360 * time.Second, 24 * time.Hour, 260, 86130 * time.Second},
		{"leftover 0: every flush", 0, 360 * time.Second, 24 * time.Hour, 2869, 24 * time.Hour},
		{"leftover 45 s: every 60 s", 45 * time.Second, 360 * time.Second, 3600 * time.Second, 55, 3600 * time.Second},
		{"to the clock's last instant", 5 * time.Minute, 360 * time.Second, time.Duration(1<<63-1) / period * period, 27949611, 9223371960000 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newGroupHarness(t, true)
			h.q = NewPriorityQueue(WithVersion(V1_37), WithClock(h.c), WithMetricsRecorder(h.m),
				WithPodMaxInUnschedulablePodsDuration(tc.leftover),
				WithPreEnqueuePluginMap(map[string][]PreEnqueuePlugin{DefaultSchedulerName: {gates{}}}))
			h.at(1)
			h.q.Add(&Pod{Namespace: "ns", Name: "a", UID: "a", SchedulingGates: []string{"wait"}})
			// The first pick: at 330 s, or the first flush after 1 ms + leftover.
			firstPick := (time.Millisecond+tc.leftover)/period*period + period
			stepFlushes(h, time.Millisecond, firstPick)
			before := h.m.IncomingPods()[LabelUnschedulable][UnschedulableTimeout]
			if before != 1 {
				t.Fatalf("%d picks up to %s, want 1", before, firstPick)
			}
			if tc.first <= firstPick {
				t.Fatalf("the range must start after the first pick (%s)", firstPick)
			}
			h.q.RecheckSettledGated(epoch.Add(time.Millisecond), epoch.Add(tc.first), epoch.Add(tc.last), period)
			if got := h.m.IncomingPods()[LabelUnschedulable][UnschedulableTimeout] - before; got != tc.picks {
				t.Errorf("%d picks counted, want %d", got, tc.picks)
			}
			want := tc.lastPickFrom
			if tc.picks == 0 {
				want = firstPick
			}
			_, pi := h.q.Locate("ns/a")
			if got := pi.FlushTimestamp().Sub(epoch); got != want {
				t.Errorf("FlushTimestamp %s, want %s", got, want)
			}
		})
	}
}
