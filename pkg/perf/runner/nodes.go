package runner

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

var nodesResource = v1.SchemeGroupVersion.WithResource("nodes")

// createNodes is upstream's node preparer: node i from the template (or
// the default node named node-<opIndex>-<random>), labelled
// kubernetes.io/hostname=<name>, then the op's strategy applied to each
// node in order. Nodes are created in parallel, not one by one.
func (e *executor) createNodes(ctx context.Context, op *workload.CreateNodes, p *OpProgress, stat *OpStat) (string, error) {
	nodes := make([]*v1.Node, op.Count)
	began := time.Now()
	created, firstErr := createInParallel(ctx, e.opts.Parallelism, op.Count, func(ctx context.Context, i int) error {
		n, err := e.createNode(ctx, op, i)
		if err != nil {
			return err
		}
		nodes[i] = n
		p.Created.Add(1)
		p.Bound.Add(1)
		return nil
	})
	stat.Created = created
	stat.CreateSeconds = time.Since(began).Seconds()
	if stat.CreateSeconds > 0 {
		stat.CreateRate = float64(stat.Created) / stat.CreateSeconds
	}
	if firstErr != nil {
		return "", firstErr
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if prep := newNodePreparer(op); prep != nil {
		for _, n := range nodes {
			if err := prepareNode(ctx, e.client, n, prep); err != nil {
				return "", fmt.Errorf("aborting node preparation: %w", err)
			}
		}
	}
	if e.sel.NodeDeclaredFeatures != nil {
		if err := e.declareNodeFeatures(ctx, e.sel.NodeDeclaredFeatures); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("%d nodes created in %.2fs", stat.Created, stat.CreateSeconds), nil
}

// declareNodeFeatures is upstream's nodedeclaredfeatures harness hook
// (updateNodesWithDeclaredFeatures, run after every createNodes op): each
// of the run's nodes, not only the op's, gets feats as its
// status.declaredFeatures. Upstream then polls the scheduler's cache until
// every node shows them; the runner cannot see that cache, and the
// scheduler's informer has the updates before the next op's pods reach it.
func (e *executor) declareNodeFeatures(ctx context.Context, feats []string) error {
	nodes, err := e.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: e.runLabels.String()})
	if err != nil {
		return fmt.Errorf("list nodes to declare their features: %w", err)
	}
	for i := range nodes.Items {
		node := &nodes.Items[i]
		node.Status.DeclaredFeatures = feats
		if _, err := e.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("failed to update node %s status: %w", node.Name, err)
		}
	}
	return nil
}

func (e *executor) createNode(ctx context.Context, op *workload.CreateNodes, index int) (*v1.Node, error) {
	base, err := op.Node(index)
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", index, err)
	}
	for attempt := 0; ; attempt++ {
		node := base.DeepCopy()
		if node.Name == "" {
			node.Name = node.GenerateName + rand.String(5)
		}
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		node.Labels[v1.LabelHostname] = node.Name
		node.Labels = e.withRunLabels(node.Labels)
		got, err := e.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err == nil {
			e.opts.Ledger.Add(ObjectRef{Resource: nodesResource, Name: got.Name})
			return got, nil
		}
		if attempt == 4 || ctx.Err() != nil {
			return nil, fmt.Errorf("creating node %d: %w", index, err)
		}
	}
}
