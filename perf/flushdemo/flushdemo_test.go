package flushdemo

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"k8s.io/kubernetes/pkg/scheduler/framework"
)

func TestPlugin_Filter(t *testing.T) {
	held := map[string]string{PodLabel: "yes"}
	ready := map[string]string{NodeLabel: "true"}
	tests := []struct {
		name      string
		podLabels map[string]string
		nodeLabel map[string]string
		want      fwk.Code
	}{
		{"unlabelled pod, plain node", nil, nil, fwk.Success},
		{"held pod, plain node", held, nil, fwk.UnschedulableAndUnresolvable},
		{"held pod, node label false", held, map[string]string{NodeLabel: "false"}, fwk.UnschedulableAndUnresolvable},
		{"held pod, ready node", held, ready, fwk.Success},
		{"unlabelled pod, ready node", nil, ready, fwk.Success},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: tc.podLabels}}
			ni := framework.NewNodeInfo()
			ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: tc.nodeLabel}})
			got := (&Plugin{}).Filter(context.Background(), nil, pod, ni)
			if got.Code() != tc.want {
				t.Fatalf("Filter = %v, want %v", got, tc.want)
			}
			if tc.want != fwk.Success && got.Message() != ErrReason {
				t.Errorf("reason = %q, want %q", got.Message(), ErrReason)
			}
		})
	}
}

// The plugin's point: a node label update must not be among its events.
func TestPlugin_EventsToRegister(t *testing.T) {
	events, err := (&Plugin{}).EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	labelUpdate := fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeLabel}
	nodeAdd := fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}
	var hearsAdd bool
	for _, e := range events {
		if framework.MatchClusterEvents(e.Event, labelUpdate) {
			t.Errorf("registers %s, which moves the pods it rejected when a node gains %s", e.Event.Label(), NodeLabel)
		}
		hearsAdd = hearsAdd || framework.MatchClusterEvents(e.Event, nodeAdd)
	}
	if !hearsAdd {
		t.Errorf("events %v: want node additions", events)
	}
}
