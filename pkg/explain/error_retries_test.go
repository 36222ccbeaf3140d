package explain

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

func TestExtrapolateErrors(t *testing.T) {
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	ms := time.Millisecond
	tests := []struct {
		name  string
		last  time.Duration
		count int
		grace time.Duration
		drift time.Duration
		now   time.Duration
		pfb   bool
		// want
		failures, hidden int
		lo, hi           time.Duration
	}{
		// Backoffs 1, 2, 4, 8, 10, 10 … s; with PopFromBackoffQ each pop is on
		// the whole second after the window of last failure + backoff.
		{name: "visible failure, backing off", last: 100 * ms, count: 3, now: 2 * time.Second, pfb: true,
			failures: 3, lo: 5 * time.Second, hi: 5 * time.Second},
		{name: "past its pop, events current: being retried", last: 100 * ms, count: 3, grace: time.Second, now: 5*time.Second + 900*ms, pfb: true,
			failures: 3, lo: 5 * time.Second, hi: 5 * time.Second},
		{name: "past its pop and its grace: failed again", last: 100 * ms, count: 3, grace: time.Second, now: 6*time.Second + 100*ms, pfb: true,
			failures: 4, hidden: 1, lo: 14 * time.Second, hi: 14 * time.Second},
		{name: "a series hides three failures", last: 100 * ms, count: 3, grace: popToFailure, now: 30 * time.Second, pfb: true,
			// pops at 5 (fails 5.1, backoff 8), 14 (backoff 10), 25, then 36
			failures: 6, hidden: 3, lo: 36 * time.Second, hi: 36 * time.Second},
		{name: "a series, just popped", last: 100 * ms, count: 3, grace: popToFailure, now: 25*time.Second + 50*ms, pfb: true,
			failures: 5, hidden: 2, lo: 25 * time.Second, hi: 25 * time.Second},
		// Without PopFromBackoffQ the flush ticks at the phase of the tick
		// that popped the pod before its last failure.
		{name: "gate off, first failure: anywhere in a second", last: 300 * ms, count: 1, now: 500 * ms,
			failures: 1, lo: 1300 * ms, hi: 2300 * ms},
		{name: "gate off, failure after a tick: the grid is known", last: 10*time.Second + 50*ms, count: 2, now: 11 * time.Second,
			failures: 2, lo: 12*time.Second + 800*ms, hi: 13*time.Second + 50*ms},
		{name: "gate off, a series: cycles of backoff + 1 s", last: 10*time.Second + 50*ms, count: 2, grace: popToFailure, now: 20 * time.Second,
			// pops in [12.8, 13.05] (fails, backoff 4), [17.8, 18.05] (backoff 8), then [26.8, 27.05]
			failures: 4, hidden: 2, lo: 26*time.Second + 800*ms, hi: 27*time.Second + 50*ms},
		// A busy activeQ delays each pop by up to drift: the windows of the
		// hidden cycles widen by as much, up to a whole cycle.
		{name: "a series, busy activeQ: windows widen", last: 100 * ms, count: 3, grace: popToFailure, drift: 2 * time.Second, now: 16 * time.Second, pfb: true,
			// pops in [5, 5]; fails by 7.1 at the latest, backoff 8: [14, 16]
			failures: 4, hidden: 1, lo: 14 * time.Second, hi: 16 * time.Second},
		{name: "a series, busy activeQ, many cycles: the phase is lost", last: 100 * ms, count: 5, grace: popToFailure, drift: 4 * time.Second, now: 2 * time.Minute, pfb: true,
			// windows one whole cycle wide (10 s backoff + the 1 s flush), now inside
			failures: 13, hidden: 8, lo: 2 * time.Minute, hi: 2*time.Minute + 11*time.Second},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/popFromBackoffQ=%v", tt.name, tt.pfb), func(t *testing.T) {
			c := extrapolateErrors(at(tt.last), tt.count, tt.grace, tt.drift, at(tt.now), DefaultConfig(), flushGrid{pfb: tt.pfb})
			if c.failures != tt.failures || c.hidden != tt.hidden || !c.popEarliest.Equal(at(tt.lo)) || !c.popLatest.Equal(at(tt.hi)) {
				t.Errorf("got failures %d hidden %d pop [%v, %v], want %d %d [%v, %v]",
					c.failures, c.hidden, c.popEarliest.Sub(t0), c.popLatest.Sub(t0),
					tt.failures, tt.hidden, tt.lo, tt.hi)
			}
		})
	}
}

// TestInfer_errorSeries: kube-scheduler's events.k8s.io recorder writes the
// first failure as one event, the second as another (the pod's
// resourceVersion changed when its condition was set) and the third as that
// event's series (count 2); later ones are not written for 30 minutes.
func TestInfer_errorSeries(t *testing.T) {
	const msg = `running Bind plugin "DefaultBinder": pods "err" is forbidden: binding denied`
	pod := makePod("err").cond("SchedulerError", msg, t0.Add(100*time.Millisecond)).obj()
	first := failedEvent(pod, msg, t0.Add(100*time.Millisecond), 0)
	second := failedEvent(pod, msg, t0.Add(2100*time.Millisecond), 0)
	second.Series = &corev1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(t0.Add(5100 * time.Millisecond))}
	// Without the metrics to confirm it, the extrapolation stands alone.
	in := Input{Pods: []*corev1.Pod{pod}, Events: []corev1.Event{first, second}, MetricsMissing: "--no-metrics"}

	// The third failure (+5.1 s) set backoff 4 s: popped at +10 s, failed,
	// backoff 8 s: popped at +19 s, failed, backoff 10 s: popped at +30 s.
	in.Now = t0.Add(25 * time.Second)
	e := InferUncalibrated(in)[0]
	if e.Queue != queue.LocationErrorBackoff || e.Attempts != 5 || e.NextRetry == nil || e.NextRetry.Earliest == nil || !e.NextRetry.Earliest.Equal(t0.Add(30*time.Second)) {
		t.Errorf("at +25s: queue %s attempts %d next %+v, want errorBackoff, 5 attempts, next at +30s", e.Queue, e.Attempts, e.NextRetry)
	}
	if e.Confidence >= 0.95 || len(e.Alternatives) == 0 {
		t.Errorf("confidence %.2f alternatives %v: hidden failures should lower it and name an alternative", e.Confidence, e.Alternatives)
	}

	// Just after the pop at +30 s: being retried.
	in.Now = t0.Add(30*time.Second + 20*time.Millisecond)
	in.Metrics = metrics(0, 0, 0, 0)
	if e := InferUncalibrated(in)[0]; e.Queue != queue.LocationInFlight {
		t.Errorf("just after its pop: queue %s, want inFlight", e.Queue)
	}
}

// TestLearnGrid: without PopFromBackoffQ the flush ticks once a second at a
// phase of its own; error pods failing again just after it reveal it.
func TestLearnGrid(t *testing.T) {
	ms := time.Millisecond
	// Ticks at .150; failures 10–40 ms after three ticks, and one pod
	// that waited in a busy activeQ (an outlier).
	fails := []time.Time{t0.Add(3160 * ms), t0.Add(3190 * ms), t0.Add(8170 * ms), t0.Add(12155 * ms), t0.Add(20700 * ms)}
	g := learnGrid(false, fails)
	if !g.known || g.anchor.Sub(t0)%time.Second != 155*ms {
		t.Fatalf("grid %+v, want the phase of the earliest failure of the cluster (.155)", g)
	}
	// A backoff expiring at +30.4 s completes at the tick after it, +31.155
	// at most (the tick is up to 250 ms before the earliest failure).
	lo, hi := g.completion(t0.Add(30400 * ms))
	if !hi.Equal(t0.Add(31155*ms)) || !lo.Equal(t0.Add(30905*ms)) {
		t.Errorf("completion [%v, %v], want [+30.905s, +31.155s]", lo.Sub(t0), hi.Sub(t0))
	}
	if g := learnGrid(true, fails); g.known {
		t.Errorf("with PopFromBackoffQ the grid is whole seconds, not learnt")
	}
	if g := learnGrid(false, nil); g.known {
		t.Errorf("no failures, no grid")
	}
}

// TestInfer_bindingFailuresMovePods: each binding failure is an
// AssignedPodDelete, which moves pods parked by NodeResourcesFit; explain
// says so, and estimates their hidden retries.
func TestInfer_bindingFailuresMovePods(t *testing.T) {
	const bindMsg = `running Bind plugin "DefaultBinder": pods "err" is forbidden: binding denied`
	const fitMsg = "0/4 nodes are available: 4 Insufficient cpu. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod."
	errPod := makePod("err").cond("SchedulerError", bindMsg, t0.Add(3*time.Second)).obj()
	parked := makePod("parked").cond("Unschedulable", fitMsg, t0.Add(time.Second)).obj()
	in := Input{
		Now:    t0.Add(3200 * time.Millisecond),
		Pods:   []*corev1.Pod{errPod, parked},
		Events: []corev1.Event{failedEvent(errPod, bindMsg, t0.Add(3*time.Second), 0), failedEvent(parked, fitMsg, t0.Add(time.Second), 0)},
		Nodes:  []*corev1.Node{testNode("n0", "4", t0.Add(-time.Hour), nil)},
		// activeQ busy: the moved pod waits for its backoff.
		Metrics: metrics(5, 2, 0, 0),
	}
	e := InferUncalibrated(in)[1]
	if e.Queue != queue.LocationBackoff && e.Queue != queue.LocationActive {
		t.Errorf("queue %s, want backoff or active (moved by the AssignedPodDelete at +3s)", e.Queue)
	}
	found := false
	for _, ev := range e.Evidence {
		found = found || strings.Contains(ev, "AssignedPodDelete")
	}
	if !found {
		t.Errorf("evidence %q does not name the AssignedPodDelete", e.Evidence)
	}
	// A pod rejected by a plugin that does not register pod deletions is
	// not moved.
	if movedByAssignedPodDelete([]string{"NodeAffinity"}) || !movedByAssignedPodDelete([]string{"NodeResourcesFit"}) {
		t.Errorf("movedByAssignedPodDelete: NodeAffinity no, NodeResourcesFit yes")
	}
}

// TestInfer_bindingFailuresKeepParkedPodsUnsure: the demo's case. Pods
// whose binding a policy denies fail again and again; each failure moves
// the pods parked by NodeResourcesFit out of unschedulablePods, and they
// are retried and parked again. The queue counts, read at the scrape's
// instant, put every parked pod in unschedulablePods, but explain speaks
// of another instant: its certainty is the share of the time such a pod is
// parked, never 100%, with the places it is in meanwhile as alternatives,
// and the evidence says it was parked again. A pod no binding failure
// moved stays certain.
func TestInfer_bindingFailuresKeepParkedPodsUnsure(t *testing.T) {
	const fitMsg = "0/4 nodes are available: 4 Insufficient cpu. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
	bindMsg := func(n string) string {
		return `running Bind plugin "DefaultBinder": pods "` + n + `" is forbidden: ValidatingAdmissionPolicy denied request`
	}
	for _, tc := range []struct {
		name     string
		denied   int
		wantSure bool
	}{
		{"no binding failures", 0, true},
		{"four pods denied binding, again and again", 4, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parked := makePod("big-0").cond("Unschedulable", fitMsg, t0).obj()
			in := Input{
				Now:    t0.Add(14 * time.Second),
				Pods:   []*corev1.Pod{parked},
				Events: []corev1.Event{failedEvent(parked, fitMsg, t0, 3)},
				Nodes:  []*corev1.Node{testNode("n0", "4", t0.Add(-time.Hour), nil)},
				// The scrape finds the parked pod in unschedulablePods and
				// the denied ones in errorBackoffQ.
				Metrics: metrics(0, float64(tc.denied), 1, 0),
			}
			for i := range tc.denied {
				name := fmt.Sprintf("deny-bind-%d", i)
				msg := bindMsg(name)
				p := makePod(name).cond("SchedulerError", msg, t0.Add(5*time.Second)).obj()
				in.Pods = append(in.Pods, p)
				in.Events = append(in.Events, failedEvent(p, msg, t0.Add(5*time.Second), 3))
			}
			e := InferUncalibrated(in)[0]
			if e.Queue != queue.LocationUnschedulable {
				t.Fatalf("queue %s, want unschedulablePods", e.Queue)
			}
			var parkedAgain bool
			for _, ev := range e.Evidence {
				parkedAgain = parkedAgain || strings.Contains(ev, "AssignedPodDelete") && strings.Contains(ev, "parked again")
			}
			if tc.wantSure {
				if e.Confidence < 0.99 {
					t.Errorf("confidence %.2f; nothing moved it, the counts place it", e.Confidence)
				}
				return
			}
			if e.Confidence >= 0.995 || e.Confidence < 0.5 || len(e.Alternatives) == 0 {
				t.Errorf("confidence %.2f, alternatives %v: binding failures keep moving it, so it is likely, not certainly, parked", e.Confidence, e.Alternatives)
			}
			if !parkedAgain {
				t.Errorf("evidence %q does not say it was moved and parked again", e.Evidence)
			}
			t.Logf("%s (%.0f%% sure), alternatives %v; %s", e.Queue, 100*e.Confidence, e.Alternatives, e.Evidence[len(e.Evidence)-1])
		})
	}
}
