package explain

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

func (b *podBuilder) group(g string) *podBuilder {
	b.p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &g}
	return b
}

func podGroupObj(name string, minCount int32) *schedulingv1beta1.PodGroup {
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	if minCount > 0 {
		pg.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount}
	}
	return pg
}

func groupMetrics(genericWorkload bool) *QueueMetrics {
	m := metrics(0, 4, 0, 0)
	m.GenericWorkload = &genericWorkload
	return m
}

// groupMetricsActive: GenericWorkload on, n pods in activeQ and none
// backing off.
func groupMetricsActive(n float64) *QueueMetrics {
	m := metrics(n, 0, 0, 0)
	on := true
	m.GenericWorkload = &on
	return m
}

func TestInfer_podGroups(t *testing.T) {
	now := t0.Add(time.Minute)
	members := func(n int, failedAt time.Time, count int32, gated ...string) ([]*corev1.Pod, []corev1.Event) {
		var pods []*corev1.Pod
		var evs []corev1.Event
		for i := 0; i < n; i++ {
			b := makePod(string(rune('a' + i))).group("g")
			for _, g := range gated {
				if g == b.p.Name {
					b.gates("quota")
				}
			}
			pods = append(pods, b.obj())
			if count > 0 {
				evs = append(evs, failedEvent(b.p, fitMsg, failedAt, count))
			}
		}
		return pods, evs
	}
	type want struct {
		queue      queue.Location
		summary    string
		gatedBy    string
		waitingFor int32
		maxBackoff string
		noGroup    bool
	}
	cases := []struct {
		name      string
		n         int
		failedAt  time.Time
		count     int32
		gated     []string
		groups    []*schedulingv1beta1.PodGroup
		metrics   *QueueMetrics
		version   queue.Version
		want      want
		nextRetry time.Time
	}{
		{name: "PodGroup not observed: incomplete", n: 3, groups: []*schedulingv1beta1.PodGroup{},
			metrics: groupMetrics(true), want: want{queue: queue.LocationIncomplete, summary: "incompletePodGroupPods", maxBackoff: "17.320508075s"}},
		{name: "one gated member gates the group", n: 2, gated: []string{"b"}, groups: []*schedulingv1beta1.PodGroup{podGroupObj("g", 0)},
			metrics: groupMetrics(true), want: want{queue: queue.LocationGated, summary: "holds the whole group", gatedBy: "b", maxBackoff: "14.142135623s"}},
		{name: "failed three times, backing off with √4 max in the error heap", n: 4, failedAt: now.Add(-2 * time.Second), count: 3,
			groups: []*schedulingv1beta1.PodGroup{podGroupObj("g", 4)}, metrics: groupMetrics(true),
			want: want{queue: queue.LocationErrorBackoff, summary: "never popped early", maxBackoff: "20s"},
			// Expires 4 s after the failure (1 s << 2, under 20 s), popped
			// by the flush of the next whole second.
			nextRetry: now.Add(3 * time.Second)},
		{name: "backoff over, the queue counts say activeQ: back in activeQ, never parked", n: 4, failedAt: now.Add(-30 * time.Second), count: 6,
			groups: []*schedulingv1beta1.PodGroup{podGroupObj("g", 0)}, metrics: groupMetricsActive(4),
			want: want{queue: queue.LocationActive, summary: "never parked in unschedulablePods", maxBackoff: "20s"}},
		// The 20 s backoff after failure 6 expired 10 s ago: popped by the
		// next second's flush, failed again out of sight moments later, and
		// backing off anew for 20 s (the counts agree), popped at the flush
		// after that.
		{name: "backoff over by the events, in backoff by the counts: a hidden cycle, back in the error heap", n: 4, failedAt: now.Add(-30 * time.Second), count: 6,
			groups: []*schedulingv1beta1.PodGroup{podGroupObj("g", 0)}, metrics: groupMetrics(true),
			want:      want{queue: queue.LocationErrorBackoff, summary: "never popped early", maxBackoff: "20s"},
			nextRetry: now.Add(12 * time.Second)},
		{name: "gang short of members", n: 2, groups: []*schedulingv1beta1.PodGroup{podGroupObj("g", 5)},
			metrics: groupMetrics(true), want: want{queue: queue.LocationActive, summary: "needs 3 more", waitingFor: 3, maxBackoff: "14.142135623s"}},
		{name: "GenericWorkload off: pods alone", n: 2, failedAt: now.Add(-2 * time.Second), count: 1,
			metrics: groupMetrics(false), want: want{noGroup: true}},
		{name: "v1.36: members queued one by one", n: 2, failedAt: now.Add(-2 * time.Second), count: 1,
			metrics: groupMetrics(true), version: queue.V1_36, want: want{noGroup: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pods, evs := members(c.n, c.failedAt, c.count, c.gated...)
			out := InferUncalibrated(Input{Now: now, Pods: pods, Events: evs, PodGroups: c.groups, Metrics: c.metrics, Version: c.version})
			e := out[0]
			if c.want.noGroup {
				if e.PodGroup != nil {
					t.Fatalf("podGroup %+v, want none", e.PodGroup)
				}
				return
			}
			if e.PodGroup == nil {
				t.Fatalf("no podGroup in %+v", e)
			}
			if e.Queue != c.want.queue || !strings.Contains(e.Summary, c.want.summary) {
				t.Errorf("queue %s summary %q, want %s and %q", e.Queue, e.Summary, c.want.queue, c.want.summary)
			}
			if got := strings.Join(e.PodGroup.GatedBy, ","); got != c.want.gatedBy {
				t.Errorf("gatedBy %q, want %q", got, c.want.gatedBy)
			}
			if e.PodGroup.WaitingFor != c.want.waitingFor || e.PodGroup.MaxBackoff != c.want.maxBackoff || e.PodGroup.PendingMembers != c.n {
				t.Errorf("podGroup %+v, want waitingFor %d maxBackoff %s pendingMembers %d", e.PodGroup, c.want.waitingFor, c.want.maxBackoff, c.n)
			}
			if !c.nextRetry.IsZero() && (e.NextRetry == nil || e.NextRetry.Earliest == nil || !e.NextRetry.Earliest.Equal(c.nextRetry)) {
				t.Errorf("next retry %+v, want earliest %s", e.NextRetry, c.nextRetry)
			}
			b, err := json.Marshal(e)
			if err != nil || !strings.Contains(string(b), `"podGroup":{"name":"g"`) {
				t.Errorf("json %s (%v), want a podGroup object", b, err)
			}
		})
	}
}
