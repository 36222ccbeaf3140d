package runner

import (
	"context"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// TestExecutor_createNodes_declaredFeatures checks upstream's
// nodedeclaredfeatures hook: after createNodes, every node of the run, from
// this op and earlier ones, declares the workload's features; a node of
// someone else is left alone.
func TestExecutor_createNodes_declaredFeatures(t *testing.T) {
	ops := selectOps(t, "  - {opcode: createNodes, count: 2}\n")
	client := fake.NewClientset(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "other"}},
		&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "earlier", Labels: map[string]string{RunLabelKey: "test"}}})
	e := newTestExecutor(client)
	e.runLabels = labels.SelectorFromSet(e.opts.Labels)
	feats := []string{"Feature1", "Feature2"}
	e.sel = &workload.Selected{NodeDeclaredFeatures: feats}
	if _, err := e.runOp(context.Background(), ops[0], &OpProgress{}, &OpStat{}); err != nil {
		t.Fatal(err)
	}
	nodes, err := client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	declared := 0
	for _, n := range nodes.Items {
		want := feats
		if n.Name == "other" {
			want = nil
		}
		if !slices.Equal(n.Status.DeclaredFeatures, want) {
			t.Errorf("node %s declares %v, want %v", n.Name, n.Status.DeclaredFeatures, want)
		}
		if n.Status.DeclaredFeatures != nil {
			declared++
		}
	}
	if len(nodes.Items) != 4 || declared != 3 {
		t.Errorf("%d nodes, %d declaring features; want 4, 3", len(nodes.Items), declared)
	}
}
