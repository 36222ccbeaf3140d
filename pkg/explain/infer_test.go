package explain

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type podBuilder struct{ p *corev1.Pod }

func makePod(name string) *podBuilder {
	return &podBuilder{&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(t0)}}}
}
func (b *podBuilder) gates(g ...string) *podBuilder {
	for _, n := range g {
		b.p.Spec.SchedulingGates = append(b.p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: n})
	}
	return b
}
func (b *podBuilder) node(n string) *podBuilder { b.p.Spec.NodeName = n; return b }
func (b *podBuilder) prio(p int32) *podBuilder  { b.p.Spec.Priority = &p; return b }
func (b *podBuilder) created(d time.Duration) *podBuilder {
	b.p.CreationTimestamp = metav1.NewTime(t0.Add(d))
	return b
}
func (b *podBuilder) cond(reason, msg string, at time.Time) *podBuilder {
	b.p.Status.Conditions = append(b.p.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(at)})
	return b
}
func (b *podBuilder) obj() *corev1.Pod { return b.p }

func failedEvent(pod *corev1.Pod, msg string, at time.Time, count int32) corev1.Event {
	return corev1.Event{
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Reason:         FailedSchedulingReason, Message: msg,
		EventTime: metav1.NewMicroTime(at), Count: count,
	}
}

func metrics(active, backoff, unsched, gated float64) *QueueMetrics {
	on := true
	return &QueueMetrics{Pending: map[string]float64{"active": active, "backoff": backoff, "unschedulable": unsched, "gated": gated}, PopFromBackoffQ: &on}
}

func metricsNoPFB(active, backoff, unsched, gated float64) *QueueMetrics {
	m := metrics(active, backoff, unsched, gated)
	off := false
	m.PopFromBackoffQ = &off
	return m
}

const fitMsg = "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."

func TestInfer(t *testing.T) {
	fitPod := makePod("fit").cond("Unschedulable", fitMsg, t0.Add(time.Second)).obj()
	fitPod2 := makePod("fit2").cond("Unschedulable", fitMsg, t0.Add(2*time.Second)).obj()
	errPod := makePod("err").cond("Unschedulable", "no nodes available to schedule pods", t0.Add(300*time.Millisecond)).obj()
	first := makePod("first").prio(10).obj()
	second := makePod("second").created(time.Millisecond).obj()
	reused := makePod("reused").obj()
	staleEvent := failedEvent(reused, fitMsg, t0, 1)
	staleEvent.InvolvedObject.UID = "an-older-pod"

	tests := []struct {
		name       string
		now        time.Duration
		pods       []*corev1.Pod
		events     []corev1.Event
		metrics    *QueueMetrics
		pod        string
		wantState  State
		wantQueue  queue.Location
		minConf    float64
		wantInText string
		check      func(t *testing.T, e Explanation)
	}{
		{name: "gated", pods: []*corev1.Pod{makePod("g").gates("example.com/wait").obj()}, metrics: metrics(0, 0, 0, 1),
			pod: "g", wantState: StatePending, wantQueue: queue.LocationGated, minConf: 0.99, wantInText: "example.com/wait"},
		{name: "bound", pods: []*corev1.Pod{makePod("b").node("n1").obj()}, metrics: metrics(0, 0, 0, 0),
			pod: "b", wantState: StateBound},
		{name: "never failed, activeQ holds it", pods: []*corev1.Pod{makePod("a").obj()}, metrics: metrics(1, 0, 0, 0),
			pod: "a", wantState: StatePending, wantQueue: queue.LocationActive, minConf: 0.8},
		{name: "pop order: higher priority is in flight", pods: []*corev1.Pod{second, first}, metrics: metrics(1, 0, 0, 0),
			pod: "first", wantState: StatePending, wantQueue: queue.LocationInFlight, minConf: 0.7},
		{name: "pop order: the other waits", pods: []*corev1.Pod{second, first}, metrics: metrics(1, 0, 0, 0),
			pod: "second", wantState: StatePending, wantQueue: queue.LocationActive, minConf: 0.8},
		{name: "rejected by plugins, metrics agree", now: 10 * time.Second, pods: []*corev1.Pod{fitPod},
			events: []corev1.Event{failedEvent(fitPod, fitMsg, t0.Add(time.Second), 1)}, metrics: metrics(0, 0, 1, 0),
			pod: "fit", wantState: StatePending, wantQueue: queue.LocationUnschedulable, minConf: 1, wantInText: "NodeResourcesFit",
			check: func(t *testing.T, e Explanation) {
				if e.NextRetry == nil || e.NextRetry.Latest == nil || !e.NextRetry.Latest.Equal(t0.Add(time.Second+5*time.Minute+30*time.Second)) {
					t.Errorf("latest retry %v, want last failure + 5m30s", e.NextRetry)
				}
				if !strings.Contains(strings.Join(e.NextRetry.Triggers, " "), "NodeAdd") {
					t.Errorf("triggers %v lack NodeAdd", e.NextRetry.Triggers)
				}
			}},
		{name: "two rejected, one moved to backoff: cannot tell", now: 10 * time.Second, pods: []*corev1.Pod{fitPod, fitPod2}, metrics: metrics(0, 1, 1, 0),
			pod: "fit", wantState: StatePending, minConf: 0.5, wantInText: "cannot tell",
			check: func(t *testing.T, e Explanation) {
				if e.Confidence > 0.5 || len(e.Alternatives) != 1 {
					t.Errorf("confidence %v alternatives %v, want 0.5 and one alternative", e.Confidence, e.Alternatives)
				}
			}},
		{name: "error backs off in the error heap", now: 1500 * time.Millisecond, pods: []*corev1.Pod{errPod}, metrics: metrics(0, 1, 0, 0),
			pod: "err", wantState: StatePending, wantQueue: queue.LocationErrorBackoff, minConf: 0.9,
			check: func(t *testing.T, e Explanation) {
				// Failed at +0.3 s, backoff 1 s, PopFromBackoffQ on: window 1 s, done at 2 s.
				if e.NextRetry.Earliest == nil || !e.NextRetry.Earliest.Equal(t0.Add(2*time.Second)) {
					t.Errorf("completion %v, want +2s (the flush after the 1 s window)", e.NextRetry.Earliest)
				}
			}},
		{name: "error whose backoff ended is ready", now: time.Minute, pods: []*corev1.Pod{errPod}, metrics: metrics(1, 0, 0, 0),
			pod: "err", wantState: StatePending, wantQueue: queue.LocationActive, minConf: 0.8},
		// Without PopFromBackoffQ and with no later failure to learn the
		// flush's phase from, the pod that failed at +0.3 s with a 1 s
		// backoff is moved by a flush somewhere in [1.3 s, 2.3 s]: the
		// queue metrics say which side of it the pod is.
		{name: "error in its flush window, backoffQ still holds it", now: 2100 * time.Millisecond, pods: []*corev1.Pod{errPod}, metrics: metricsNoPFB(0, 1, 0, 0),
			pod: "err", wantState: StatePending, wantQueue: queue.LocationErrorBackoff, minConf: 0.9},
		{name: "error in its flush window, moved to activeQ", now: 2100 * time.Millisecond, pods: []*corev1.Pod{errPod}, metrics: metricsNoPFB(1, 0, 0, 0),
			pod: "err", wantState: StatePending, wantQueue: queue.LocationActive, minConf: 0.9},
		{name: "error popped and failed again, its event not written yet", now: 2400 * time.Millisecond, pods: []*corev1.Pod{errPod}, metrics: metricsNoPFB(0, 1, 0, 0),
			pod: "err", wantState: StatePending, wantQueue: queue.LocationErrorBackoff, minConf: 0.9,
			check: func(t *testing.T, e Explanation) {
				// Its second failure, in [1.4 s, 2.4 s], backs off 2 s.
				if e.NextRetry.Earliest == nil || e.NextRetry.Earliest.Before(t0.Add(3400*time.Millisecond)) {
					t.Errorf("next retry %v, want the next cycle (after +3.4s)", e.NextRetry.Earliest)
				}
			}},
		{name: "no metrics: lower confidence, says why", now: 10 * time.Second, pods: []*corev1.Pod{fitPod},
			pod: "fit", wantState: StatePending, wantQueue: queue.LocationUnschedulable, minConf: 0.7, wantInText: "403",
			check: func(t *testing.T, e Explanation) {
				if e.Confidence >= 0.9 {
					t.Fatalf("confidence %.2f: the case needs the below-90%% evidence line", e.Confidence)
				}
				for _, ev := range e.Evidence {
					if ev == "" || strings.HasPrefix(ev, ";") || strings.HasPrefix(ev, " ") {
						t.Errorf("evidence line %q has no start", ev)
					}
				}
				if !strings.Contains(strings.Join(e.Evidence, "\n"), "without the queue metrics") {
					t.Errorf("evidence %q does not say the metrics are missing", e.Evidence)
				}
			}},
		{name: "events of an earlier pod with the same name are ignored", pods: []*corev1.Pod{reused}, events: []corev1.Event{staleEvent},
			metrics: metrics(1, 0, 0, 0), pod: "reused", wantState: StatePending, wantQueue: queue.LocationActive, minConf: 0.8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var target *corev1.Pod
			for _, p := range tt.pods {
				if p.Name == tt.pod {
					target = p
				}
			}
			in := Input{Now: t0.Add(tt.now), Pods: []*corev1.Pod{target}, PendingPods: tt.pods, Events: tt.events, Metrics: tt.metrics}
			if tt.metrics == nil {
				in.MetricsMissing = "403 Forbidden on /metrics"
			}
			got := InferUncalibrated(in)
			if len(got) != 1 {
				t.Fatalf("%d explanations", len(got))
			}
			e := got[0]
			if e.State != tt.wantState || e.Queue != tt.wantQueue && tt.wantQueue != "" || e.Confidence < tt.minConf-1e-9 {
				t.Errorf("got state %s queue %q confidence %.2f, want %s %q ≥ %.2f\n%+v", e.State, e.Queue, e.Confidence, tt.wantState, tt.wantQueue, tt.minConf, e)
			}
			text := e.Summary + " " + strings.Join(e.Reasons, " ") + " " + strings.Join(e.Evidence, " ") + " " + strings.Join(e.Plugins, " ")
			if tt.wantInText != "" && !strings.Contains(text, tt.wantInText) {
				t.Errorf("%q not in %q", tt.wantInText, text)
			}
			if tt.check != nil {
				tt.check(t, e)
			}
		})
	}
}

func TestExplanation_JSON(t *testing.T) {
	e := Explanation{Namespace: "ns", Name: "a", Queue: queue.LocationUnschedulable, Alternatives: []Alternative{{queue.LocationBackoff, 0.2}, {queue.LocationInFlight, 0.1}}}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"queue":"unschedulablePods"`, `"queue":"backoffQ"`, `"queue":"inFlight"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	var back Explanation
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Queue != e.Queue || back.Alternatives[0].Queue != queue.LocationBackoff || back.Name != "a" {
		t.Errorf("round trip: %+v", back)
	}
	// Older output, in the trace format's words, still reads.
	if err := json.Unmarshal([]byte(`{"queue":"errorBackoff"}`), &back); err != nil || back.Queue != queue.LocationErrorBackoff {
		t.Errorf("old words: %v %+v", err, back)
	}
}

// TestInfer_schedulerNames: a pod is placed only in the queue of the
// scheduler that handles it: the profile explained, or another profile of
// the same scheduler (its profiles share one queue); never when no
// kube-scheduler serves the name asked for.
func TestInfer_schedulerNames(t *testing.T) {
	named := func(name, scheduler string) *corev1.Pod {
		p := makePod(name).cond("Unschedulable", fitMsg, t0.Add(time.Second)).obj()
		p.Spec.SchedulerName = scheduler
		return p
	}
	def, batch, second := named("def", corev1.DefaultSchedulerName), named("batch", "batch"), named("second", "second-scheduler")
	pods := []*corev1.Pod{def, batch, second}
	for _, tc := range []struct {
		name      string
		scheduler string
		profiles  []string
		notServed string
		// placed are the pods placed in a queue; the others are
		// OtherScheduler, with wantOther in their summary.
		placed    []string
		wantOther map[string]string
	}{
		{"the default profile alone", "", nil, "", []string{"def"},
			map[string]string{"batch": `handled by scheduler "batch", not by this one`, "second": `handled by scheduler "second-scheduler", not by this one`}},
		{"profiles of one scheduler share its queue", "", []string{"default-scheduler", "batch"}, "", []string{"def", "batch"},
			map[string]string{"second": `handled by scheduler "second-scheduler", not by this one`}},
		{"a second scheduler, read from its own metrics", "second-scheduler", []string{"second-scheduler"}, "", []string{"second"},
			map[string]string{"def": `handled by scheduler "default-scheduler", not by this one`, "batch": `handled by scheduler "batch", not by this one`}},
		{"a name no kube-scheduler serves", "volcano", nil, `no kube-scheduler here serves scheduler name "volcano"`, nil,
			map[string]string{"def": `handled by scheduler "default-scheduler", not by this one`}},
		{"its own pods are placed nowhere", "second-scheduler", nil, `no kube-scheduler here serves scheduler name "second-scheduler"`, nil,
			map[string]string{"second": `handled by scheduler "second-scheduler", which no kube-scheduler here serves`, "def": "not by this one"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Now: t0.Add(10 * time.Second), Pods: pods, PendingPods: pods, SchedulerName: tc.scheduler, Profiles: tc.profiles, NotServed: tc.notServed,
				Metrics: metrics(0, 0, float64(len(tc.placed)), 0)}
			if tc.notServed != "" {
				in.Metrics, in.MetricsMissing = nil, tc.notServed
			}
			var placed []string
			for _, e := range Infer(in) {
				if e.State == StateOtherScheduler {
					if e.Queue != "" {
						t.Errorf("%s: OtherScheduler in queue %q", e.Name, e.Queue)
					}
					if w, ok := tc.wantOther[e.Name]; ok && !strings.Contains(e.Summary, w) {
						t.Errorf("%s: summary %q, want %q", e.Name, e.Summary, w)
					}
					continue
				}
				if e.Queue != queue.LocationUnschedulable {
					t.Errorf("%s: state %s queue %q, want unschedulablePods", e.Name, e.State, e.Queue)
				}
				placed = append(placed, e.Name)
			}
			if strings.Join(placed, ",") != strings.Join(tc.placed, ",") {
				t.Errorf("placed %v, want %v", placed, tc.placed)
			}
		})
	}
}
