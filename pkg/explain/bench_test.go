package explain

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkInfer: explain -A's inference over 5,000 pods parked by
// NodeResourcesFit, each with its FailedScheduling event, as
// TestExplainScale parks them (the lists themselves not included).
func BenchmarkInfer(b *testing.B) {
	const n = 5000
	pods := make([]*corev1.Pod, n)
	events := make([]corev1.Event, n)
	for i := range pods {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		pods[i] = makePod(fmt.Sprintf("parked-%d", i)).cond("Unschedulable", fitMsg, at).obj()
		events[i] = failedEvent(pods[i], fitMsg, at, 1)
	}
	in := Input{Now: t0.Add(time.Minute), Pods: pods, Events: events, Metrics: metrics(0, 0, n, 0)}
	b.ReportAllocs()
	for b.Loop() {
		if es := Infer(in); len(es) != n {
			b.Fatalf("%d explanations, want %d", len(es), n)
		}
	}
}
