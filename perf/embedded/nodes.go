package embedded

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The shape of every fake node, as in scheduler_perf's default node template
// (test/integration/scheduler_perf/templates/node-default.yaml).
const (
	FakeNodeCPU    = "4"
	FakeNodeMemory = "32Gi"
	FakeNodePods   = "110"
)

// FakeNodeName is the name of the i-th node Start creates.
func FakeNodeName(i int) string { return fmt.Sprintf("node-%d", i) }

// FakeNode returns a Ready node called name with 4 CPUs, 32 GiB and room for
// 110 pods. No kubelet backs it: pods are bound to it and never run, as in
// scheduler_perf. Nothing taints it or marks it not-ready, since the
// embedded control plane runs no node lifecycle controller and no
// TaintNodesByCondition admission.
func FakeNode(name string) *v1.Node {
	capacity := v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse(FakeNodeCPU),
		v1.ResourceMemory: resource.MustParse(FakeNodeMemory),
		v1.ResourcePods:   resource.MustParse(FakeNodePods),
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: map[string]string{v1.LabelHostname: name},
		},
		Status: v1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
			Phase:       v1.NodeRunning,
			Conditions: []v1.NodeCondition{{
				Type:               v1.NodeReady,
				Status:             v1.ConditionTrue,
				Reason:             "KubeletReady",
				Message:            "fake node of the embedded control plane",
				LastHeartbeatTime:  metav1.Now(),
				LastTransitionTime: metav1.Now(),
			}},
		},
	}
}

// CreateNodes creates nodes, and sets their status if the create dropped it.
func CreateNodes(ctx context.Context, client kubernetes.Interface, nodes ...*v1.Node) error {
	for _, n := range nodes {
		created, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create node %s: %w", n.Name, err)
		}
		if len(created.Status.Conditions) == 0 && len(n.Status.Conditions) > 0 {
			created.Status = n.Status
			if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("set status of node %s: %w", n.Name, err)
			}
		}
	}
	return nil
}
