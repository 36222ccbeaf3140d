package explain

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

func testNode(name, cpu string, created time.Time, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110")}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, CreationTimestamp: metav1.NewTime(created)},
		Spec:       corev1.NodeSpec{Taints: taints},
		Status:     corev1.NodeStatus{Allocatable: alloc, Capacity: alloc},
	}
}

func requesting(p *corev1.Pod, cpu string) *corev1.Pod {
	p.Spec.Containers = []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}
	return p
}

func TestNodeAddMoves(t *testing.T) {
	big := requesting(makePod("big").obj(), "6")
	pool := requesting(makePod("pool").obj(), "1")
	pool.Spec.NodeSelector = map[string]string{"pool": "gpu"}
	affinity := requesting(makePod("affinity").obj(), "1")
	affinity.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}}}},
	}}}
	tolerant := requesting(makePod("tolerant").obj(), "1")
	tolerant.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	taint := corev1.Taint{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}

	tests := []struct {
		name    string
		pod     *corev1.Pod
		plugins []string
		node    *corev1.Node
		want    bool
	}{
		{"NodeResourcesFit: a node that fits", big, []string{"NodeResourcesFit"}, testNode("n", "8", t0, nil), true},
		{"NodeResourcesFit: a node too small", big, []string{"NodeResourcesFit"}, testNode("n", "4", t0, nil), false},
		{"NodeAffinity: the selected pool", pool, []string{"NodeAffinity"}, testNode("n", "4", t0, map[string]string{"pool": "gpu"}), true},
		{"NodeAffinity: another pool", pool, []string{"NodeAffinity"}, testNode("n", "4", t0, map[string]string{"pool": "cpu"}), false},
		{"NodeAffinity: required terms match", affinity, []string{"NodeAffinity"}, testNode("n", "4", t0, map[string]string{"zone": "b"}), true},
		{"NodeAffinity: required terms do not", affinity, []string{"NodeAffinity"}, testNode("n", "4", t0, map[string]string{"zone": "c"}), false},
		{"either plugin may move it", pool, []string{"NodeAffinity", "NodeResourcesFit"}, testNode("n", "4", t0, nil), true},
		{"TaintToleration: tolerated", tolerant, []string{"TaintToleration"}, testNode("n", "4", t0, nil, taint), true},
		{"TaintToleration: not tolerated", big, []string{"TaintToleration"}, testNode("n", "16", t0, nil, taint), false},
		{"a plugin without NodeAdd", big, []string{"SchedulingGates"}, testNode("n", "16", t0, nil), false},
		{"a plugin without a modelled hint", big, []string{"InterPodAffinity"}, testNode("n", "1", t0, nil), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nodeAddMoves(tt.pod, tt.plugins, tt.node); got != tt.want {
				t.Errorf("nodeAddMoves = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNodesAddedAfter(t *testing.T) {
	failed := t0.Add(10*time.Second + 400*time.Millisecond)
	old := testNode("old", "4", t0, nil)
	sameSecond := testNode("same", "4", t0.Add(10*time.Second), nil)
	later := testNode("later", "4", t0.Add(11*time.Second), nil)
	nodes := []*corev1.Node{old, sameSecond, later}
	names := func(ns []*corev1.Node) (out []string) {
		for _, n := range ns {
			out = append(out, n.Name)
		}
		return out
	}
	// The failure counted 1 node: the one created in its second came after.
	if got := names(nodesAddedAfter(nodes, failed, 1)); len(got) != 2 || got[0] != "later" || got[1] != "same" {
		t.Errorf("message counted 1 node: added after %v, want [later same]", got)
	}
	// It counted 2: same was there.
	if got := names(nodesAddedAfter(nodes, failed, 2)); len(got) != 1 || got[0] != "later" {
		t.Errorf("message counted 2 nodes: added after %v, want [later]", got)
	}
}

// TestInfer_nodeAdded: of two pods parked for want of CPU, the one a new
// node fits was moved to backoffQ; the metrics say one pod is there.
func TestInfer_nodeAdded(t *testing.T) {
	msg := "0/4 nodes are available: 4 Insufficient cpu. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod."
	fits := requesting(makePod("fits").cond("Unschedulable", msg, t0.Add(time.Second)).obj(), "6")
	tooBig := requesting(makePod("toobig").cond("Unschedulable", msg, t0.Add(time.Second)).obj(), "12")
	nodes := []*corev1.Node{testNode("n0", "4", t0.Add(-time.Hour), nil), testNode("wide", "8", t0.Add(2*time.Second), nil)}
	off := false
	m := metrics(2, 1, 1, 0)
	m.PopFromBackoffQ = &off
	// Three failures: backoff 4 s from the last, at +1 s.
	events := []corev1.Event{failedEvent(fits, msg, t0.Add(time.Second), 3), failedEvent(tooBig, msg, t0.Add(time.Second), 3)}
	in := Input{Now: t0.Add(2500 * time.Millisecond), Pods: []*corev1.Pod{fits, tooBig}, Events: events, Nodes: nodes, Metrics: m}
	got := InferUncalibrated(in)
	if got[0].Queue != queue.LocationBackoff || got[1].Queue != queue.LocationUnschedulable {
		t.Fatalf("queues %s, %s; want backoff (moved by the NodeAdd), unschedulable", got[0].Queue, got[1].Queue)
	}
	if got[0].Confidence < 0.8 || got[1].Confidence < 0.8 {
		t.Errorf("confidence %.2f, %.2f: the node tells them apart", got[0].Confidence, got[1].Confidence)
	}
	nr := got[0].NextRetry
	// Failed at +1 s, backoff 4 s: done at +5 s, flushed within a second,
	// then popped (a scheduling cycle or two of slack).
	if nr == nil || nr.Earliest == nil || nr.Latest == nil || !nr.Earliest.Equal(t0.Add(5*time.Second)) ||
		nr.Latest.Before(t0.Add(6*time.Second)) || nr.Latest.After(t0.Add(6500*time.Millisecond)) {
		t.Errorf("next retry %+v, want from +5s to a little after +6s", nr)
	}
}
