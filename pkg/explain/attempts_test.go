package explain

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// seriesEvent is the event of a series whose count 2 was written at
// second, the first failure at first: what the scheduler's recorder writes
// for a pod that keeps failing at the same resourceVersion.
func seriesEvent(pod *corev1.Pod, msg string, first, second time.Time) corev1.Event {
	e := failedEvent(pod, msg, first, 0)
	e.Series = &corev1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(second)}
	return e
}

// TestInfer_attempts: the attempts of a pod whose latest event is a series
// are estimated from the scheduler's attempts counter, in proportion to how
// long each pod has been out of sight, or marked as a lower bound when
// nothing tells; a pod whose failures are all in its events is counted.
func TestInfer_attempts(t *testing.T) {
	now := t0.Add(40 * time.Second)
	// Two pods failing over and over since +1 s (first failure, a new
	// event at +1.5 s, the series' count 2 at +2 s); old has been out of
	// sight three times as long as young.
	old := makePod("old").cond("Unschedulable", fitMsg, t0.Add(time.Second)).obj()
	young := makePod("young").cond("Unschedulable", fitMsg, t0.Add(time.Second)).obj()
	counted := makePod("counted").cond("Unschedulable", fitMsg, t0.Add(30*time.Second)).obj()
	events := []corev1.Event{
		failedEvent(old, fitMsg, t0.Add(time.Second), 1), seriesEvent(old, fitMsg, t0.Add(1500*time.Millisecond), t0.Add(10*time.Second)),
		failedEvent(young, fitMsg, t0.Add(time.Second), 1), seriesEvent(young, fitMsg, t0.Add(1500*time.Millisecond), t0.Add(30*time.Second)),
		failedEvent(counted, fitMsg, t0.Add(30*time.Second), 1),
	}
	// The events show 7 unschedulable attempts; the scheduler counted 47.
	withCounter := func(unschedulable float64) *QueueMetrics {
		m := metrics(0, 0, 3, 0)
		m.Attempts = map[string]float64{"unschedulable": unschedulable, "scheduled": 12}
		return m
	}
	type want struct {
		attempts int
		kind     string
	}
	for _, c := range []struct {
		name       string
		metrics    *QueueMetrics
		namespaced bool
		want       map[string]want
	}{
		{"the counter's 40 hidden, shared by time out of sight", withCounter(47), false,
			map[string]want{"old": {3 + 30, AttemptsEstimated}, "young": {3 + 10, AttemptsEstimated}, "counted": {1, ""}}},
		{"no metrics: lower bounds", nil, false,
			map[string]want{"old": {3, AttemptsAtLeast}, "young": {3, AttemptsAtLeast}, "counted": {1, ""}}},
		{"no attempts counter: lower bounds", metrics(0, 0, 3, 0), false,
			map[string]want{"old": {3, AttemptsAtLeast}, "young": {3, AttemptsAtLeast}, "counted": {1, ""}}},
		{"fewer attempts counted than the events show (a restarted scheduler): lower bounds", withCounter(5), false,
			map[string]want{"old": {3, AttemptsAtLeast}, "young": {3, AttemptsAtLeast}, "counted": {1, ""}}},
		{"events of one namespace only: lower bounds", withCounter(47), true,
			map[string]want{"old": {3, AttemptsAtLeast}, "young": {3, AttemptsAtLeast}, "counted": {1, ""}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := Input{Now: now, Pods: []*corev1.Pod{old, young, counted}, Events: events, Metrics: c.metrics, EventsNamespaced: c.namespaced}
			for _, e := range InferUncalibrated(in) {
				w := c.want[e.Name]
				kind := ""
				if e.AttemptsCount != nil {
					kind = e.AttemptsCount.Kind
				}
				if e.Attempts != w.attempts || kind != w.kind {
					t.Errorf("%s: attempts %s (%q), want %d (%q)", e.Name, FormatAttempts(e), kind, w.attempts, w.kind)
				}
				if kind == AttemptsEstimated && (e.AttemptsCount.Min != 3 || e.AttemptsCount.Max == nil || *e.AttemptsCount.Max != 43) {
					t.Errorf("%s: bounds %+v, want 3 to 43 (every hidden attempt its own)", e.Name, e.AttemptsCount)
				}
			}
		})
	}
}

func TestFormatAttempts(t *testing.T) {
	for _, c := range []struct {
		e    Explanation
		want string
	}{
		{Explanation{Attempts: 3}, "3"},
		{Explanation{Attempts: 3, AttemptsCount: &AttemptsCount{Kind: AttemptsAtLeast, Min: 3}}, "≥3"},
		{Explanation{Attempts: 37, AttemptsCount: &AttemptsCount{Kind: AttemptsEstimated, Min: 3}}, "~37"},
	} {
		if got := FormatAttempts(c.e); got != c.want {
			t.Errorf("FormatAttempts(%+v) = %q, want %q", c.e.AttemptsCount, got, c.want)
		}
	}
}

// TestInfer_nextTryEstimate: every pod with a time to its next try has an
// estimate between its window's bounds; a pod waiting for an event or its
// gates has none. The scheduler's attempt rate, when two scrapes measured
// it, times a pod waiting in activeQ behind others.
func TestInfer_nextTryEstimate(t *testing.T) {
	now := t0.Add(10 * time.Second)
	var pods []*corev1.Pod
	for _, n := range []string{"a0", "a1", "a2", "a3", "a4"} {
		pods = append(pods, makePod(n).obj())
	}
	parked := makePod("parked").cond("Unschedulable", fitMsg, t0.Add(time.Second)).obj()
	errPod := makePod("err").cond("SchedulerError", "running PreBind plugin: denied", t0.Add(9500*time.Millisecond)).obj()
	gated := makePod("gated").gates("example.com/hold").obj()
	pods = append(pods, parked, errPod, gated)
	events := []corev1.Event{failedEvent(parked, fitMsg, t0.Add(time.Second), 1), failedEvent(errPod, "running PreBind plugin: denied", t0.Add(9500*time.Millisecond), 1)}
	m := metrics(5, 1, 1, 1)
	in := Input{Now: now, Pods: pods, Events: events, Metrics: m}
	got := map[string]Explanation{}
	for _, e := range InferUncalibrated(in) {
		got[e.Name] = e
		nr := e.NextRetry
		switch e.Name {
		case "parked", "gated":
			if nr == nil || nr.Estimate != nil {
				t.Errorf("%s: next retry %+v, want no estimate", e.Name, nr)
			}
		default:
			if nr == nil || nr.Estimate == nil || nr.Earliest == nil || nr.Latest == nil || nr.Estimate.Before(*nr.Earliest) || nr.Estimate.After(*nr.Latest) {
				t.Errorf("%s (%s): next retry %+v, want an estimate within [earliest, latest]", e.Name, e.Queue.Word(), nr)
			}
		}
	}
	// a4 waits behind a0–a3 (created at the same time, in name order by
	// the pop order's tie): at 200 attempts a second, 4 × 5 ms.
	rate := 200.0
	m.AttemptRate, m.RateWindow = &rate, time.Second
	for _, e := range InferUncalibrated(in) {
		if e.Name == "a4" {
			if est := e.NextRetry.Estimate.Sub(now); est != 4*5*time.Millisecond {
				t.Errorf("a4: estimate now+%v, want now+20ms (4 pods before it at 200 attempts a second); %s", est, e.NextRetry.Note)
			}
		}
	}
}

// TestInfer_hiddenAttempts: what the attempts counter holds besides the
// lagging pods' hidden failures is not theirs to share: a failure whose
// event the recorder has not written yet (the pod's condition shows it),
// an earlier pod of a pending pod's name, an error pod's failures (its
// backoff's rhythm accounts for those its events hide); and no pod is
// given more failures than one per round of the pods retried in turn.
func TestInfer_hiddenAttempts(t *testing.T) {
	now := t0.Add(40 * time.Second)
	// As in TestInfer_attempts: old out of sight for 30 s, young for 10 s,
	// 3 failures each in their events.
	old := makePod("old").cond("Unschedulable", fitMsg, t0.Add(time.Second)).obj()
	young := makePod("young").cond("Unschedulable", fitMsg, t0.Add(time.Second)).obj()
	base := []corev1.Event{
		failedEvent(old, fitMsg, t0.Add(time.Second), 1), seriesEvent(old, fitMsg, t0.Add(1500*time.Millisecond), t0.Add(10*time.Second)),
		failedEvent(young, fitMsg, t0.Add(time.Second), 1), seriesEvent(young, fitMsg, t0.Add(1500*time.Millisecond), t0.Add(30*time.Second)),
	}
	// fresh failed a moment ago; its event is not written yet.
	fresh := makePod("fresh").cond("Unschedulable", fitMsg, t0.Add(39900*time.Millisecond)).obj()
	// re was deleted and recreated: 5 failures of the pod before, 1 its own.
	re := makePod("re").cond("Unschedulable", fitMsg, t0.Add(20*time.Second)).obj()
	before := failedEvent(re, fitMsg, t0.Add(5*time.Second), 5)
	before.InvolvedObject.UID = "uid-re-before"
	// errPod fails with an error over and over: its series' count 2 was
	// written at +21 s, and its backoff's rhythm tells the failures since.
	const denied = "running PreBind plugin: denied"
	errPod := makePod("err").cond("SchedulerError", denied, t0.Add(21*time.Second)).obj()
	errEvents := []corev1.Event{failedEvent(errPod, denied, t0.Add(20*time.Second), 1), seriesEvent(errPod, denied, t0.Add(20500*time.Millisecond), t0.Add(21*time.Second))}

	counter := func(unschedulable, errors float64, rate *float64) *QueueMetrics {
		m := metrics(0, 0, 3, 0)
		m.Attempts = map[string]float64{"unschedulable": unschedulable, "error": errors, "scheduled": 12}
		if rate != nil {
			m.AttemptRate, m.RateWindow = rate, time.Second
		}
		return m
	}
	onePerSecond := 1.0
	for _, c := range []struct {
		name    string
		pods    []*corev1.Pod
		events  []corev1.Event
		metrics *QueueMetrics
		// the attempts shown for old and young, and their upper bound
		old, young, most int
	}{
		{"40 hidden, shared by time out of sight", []*corev1.Pod{old, young}, base, counter(6+40, 0, nil), 3 + 30, 3 + 10, 3 + 40},
		{"a failure whose event is not written yet is not hidden",
			[]*corev1.Pod{old, young, fresh}, base, counter(6+1+40, 0, nil), 3 + 30, 3 + 10, 3 + 40},
		{"an earlier pod's failures are seen, not hidden",
			[]*corev1.Pod{old, young, re}, append([]corev1.Event{before, failedEvent(re, fitMsg, t0.Add(20*time.Second), 1)}, base...), counter(6+5+1+40, 0, nil), 3 + 30, 3 + 10, 3 + 40},
		{"an error pod's failures are its own",
			[]*corev1.Pod{old, young, errPod}, append(errEvents, base...), counter(6+40, 3+2, nil), 3 + 30, 3 + 10, 3 + 40},
		{"at most one failure per round of the 2 pods, 1 s a pod",
			[]*corev1.Pod{old, young}, base, counter(6+40, 0, &onePerSecond), 3 + 30/2, 3 + 10/2, 3 + 40},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := Input{Now: now, Pods: c.pods, Events: c.events, Metrics: c.metrics}
			for _, e := range InferUncalibrated(in) {
				want, ok := map[string]int{"old": c.old, "young": c.young}[e.Name]
				if !ok {
					if e.AttemptsCount != nil && e.AttemptsCount.Kind != AttemptsCounted && e.Name != "err" {
						t.Errorf("%s: attempts %s, want them counted from its events", e.Name, FormatAttempts(e))
					}
					continue
				}
				if e.Attempts != want || e.AttemptsCount == nil || e.AttemptsCount.Kind != AttemptsEstimated {
					t.Errorf("%s: attempts %s, want ~%d", e.Name, FormatAttempts(e), want)
					continue
				}
				if m := e.AttemptsCount.Max; m == nil || *m != c.most {
					t.Errorf("%s: bounds %+v, want at most %d", e.Name, e.AttemptsCount, c.most)
				}
			}
		})
	}
	// moved's failures hid in a series from +5 s until a new event (the pod
	// changed) at +30 s, which is not a series: its latest event shows
	// nothing hidden, its earlier series does, for 25 s; old's for 30 s.
	t.Run("a series before the latest event hid failures too", func(t *testing.T) {
		moved := makePod("moved").cond("Unschedulable", fitMsg, t0.Add(30*time.Second)).obj()
		events := []corev1.Event{
			base[0], base[1],
			failedEvent(moved, fitMsg, t0.Add(time.Second), 1), seriesEvent(moved, fitMsg, t0.Add(1500*time.Millisecond), t0.Add(5*time.Second)),
			failedEvent(moved, fitMsg, t0.Add(30*time.Second), 1),
		}
		in := Input{Now: now, Pods: []*corev1.Pod{old, moved}, Events: events, Metrics: counter(3+4+55, 0, nil)}
		want := map[string]int{"old": 3 + 30, "moved": 4 + 25}
		for _, e := range InferUncalibrated(in) {
			if e.Attempts != want[e.Name] || e.AttemptsCount == nil || e.AttemptsCount.Kind != AttemptsEstimated {
				t.Errorf("%s: attempts %s, want ~%d", e.Name, FormatAttempts(e), want[e.Name])
			}
		}
	})
}
