package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// The node preparers of upstream's createNodes op, rewritten from
// k8s.io/kubernetes v1.36.3 test/utils/runners.go (PrepareNodeStrategy
// and DoPrepareNode) so that the runner needs no k8s.io/kubernetes.
// They send the requests upstream sends, in the same order, with the same
// retries on conflicts.

// nodePreparer is upstream's PrepareNodeStrategy, less the cleanup half,
// which scheduler_perf never calls.
type nodePreparer interface {
	// patch is the merge patch for node; empty sends nothing.
	patch(node *v1.Node) ([]byte, error)
	// prepareDependents creates or updates the objects that go with node.
	prepareDependents(ctx context.Context, client kubernetes.Interface, node *v1.Node) error
}

// newNodePreparer returns the op's strategy, or nil when it has none.
func newNodePreparer(op *workload.CreateNodes) nodePreparer {
	switch {
	case op.NodeAllocatableStrategy != nil:
		return &nodeAllocatablePreparer{s: op.NodeAllocatableStrategy}
	case op.LabelNodePrepareStrategy != nil:
		return &labelNodePreparer{s: op.LabelNodePrepareStrategy}
	case op.UniqueNodeLabelStrategy != nil:
		return uniqueNodeLabelPreparer{key: op.UniqueNodeLabelStrategy.LabelKey}
	}
	return nil
}

func labelPatch(key, value string) ([]byte, error) {
	return json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{key: value}}})
}

// labelNodePreparer labels the nodes round robin over LabelValues, in the
// order they are prepared.
type labelNodePreparer struct {
	s    *workload.LabelNodePrepareStrategy
	next int
}

func (p *labelNodePreparer) patch(*v1.Node) ([]byte, error) {
	v := p.s.LabelValues[p.next]
	p.next = (p.next + 1) % len(p.s.LabelValues)
	return labelPatch(p.s.LabelKey, v)
}

func (*labelNodePreparer) prepareDependents(context.Context, kubernetes.Interface, *v1.Node) error {
	return nil
}

// uniqueNodeLabelPreparer gives every node a fresh UUID under key.
type uniqueNodeLabelPreparer struct{ key string }

func (p uniqueNodeLabelPreparer) patch(*v1.Node) ([]byte, error) {
	return labelPatch(p.key, string(uuid.NewUUID()))
}

func (uniqueNodeLabelPreparer) prepareDependents(context.Context, kubernetes.Interface, *v1.Node) error {
	return nil
}

// nodeAllocatablePreparer sets status.allocatable and creates (or updates)
// the node's CSINode with the drivers' allocatable counts. As upstream, the
// allocatable patch goes to the node itself, not its status subresource,
// where kube-apiserver keeps the old status: what takes effect is the
// CSINode, and the allocatable of the node's template.
type nodeAllocatablePreparer struct {
	s *workload.NodeAllocatableStrategy
}

func (p *nodeAllocatablePreparer) patch(node *v1.Node) ([]byte, error) {
	changed := node.DeepCopy()
	if changed.Status.Allocatable == nil {
		changed.Status.Allocatable = v1.ResourceList{}
	}
	for name, value := range p.s.NodeAllocatable {
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return nil, fmt.Errorf("nodeAllocatableStrategy: %s: %w", name, err)
		}
		changed.Status.Allocatable[v1.ResourceName(name)] = q
	}
	before, err := json.Marshal(node)
	if err != nil {
		return nil, err
	}
	after, err := json.Marshal(changed)
	if err != nil {
		return nil, err
	}
	return strategicpatch.CreateTwoWayMergePatch(before, after, v1.Node{})
}

func (p *nodeAllocatablePreparer) prepareDependents(ctx context.Context, client kubernetes.Interface, node *v1.Node) error {
	csiNode, err := client.StorageV1().CSINodes().Get(ctx, node.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return p.createCSINode(ctx, client, node.Name)
	}
	if err != nil {
		return err
	}
	return p.updateCSINode(ctx, client, csiNode)
}

func (p *nodeAllocatablePreparer) createCSINode(ctx context.Context, client kubernetes.Interface, nodeName string) error {
	csiNode := &storagev1.CSINode{
		ObjectMeta: metav1.ObjectMeta{
			Name:        nodeName,
			Annotations: map[string]string{v1.MigratedPluginsAnnotationKey: strings.Join(p.s.MigratedPlugins, ",")},
		},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{}},
	}
	for driver, allocatable := range p.s.CsiNodeAllocatable {
		csiNode.Spec.Drivers = append(csiNode.Spec.Drivers, storagev1.CSINodeDriver{Name: driver, Allocatable: allocatable, NodeID: nodeName})
	}
	_, err := client.StorageV1().CSINodes().Create(ctx, csiNode, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		// Made meanwhile by someone else: the caller retries, as on a conflict.
		err = apierrors.NewConflict(storagev1.Resource("csinodes"), nodeName, err)
	}
	return err
}

func (p *nodeAllocatablePreparer) updateCSINode(ctx context.Context, client kubernetes.Interface, csiNode *storagev1.CSINode) error {
	for driver, allocatable := range p.s.CsiNodeAllocatable {
		found := false
		for i := range csiNode.Spec.Drivers {
			if csiNode.Spec.Drivers[i].Name == driver {
				csiNode.Spec.Drivers[i].Allocatable = allocatable
				found = true
				break
			}
		}
		if !found {
			csiNode.Spec.Drivers = append(csiNode.Spec.Drivers, storagev1.CSINodeDriver{Name: driver, Allocatable: allocatable})
		}
	}
	if csiNode.Annotations == nil {
		csiNode.Annotations = map[string]string{}
	}
	csiNode.Annotations[v1.MigratedPluginsAnnotationKey] = strings.Join(p.s.MigratedPlugins, ",")
	_, err := client.StorageV1().CSINodes().Update(ctx, csiNode, metav1.UpdateOptions{})
	return err
}

// prepareRetries and prepareRetryDelay are upstream's: a conflict is
// retried up to 5 times, 100 ms apart.
const (
	prepareRetries    = 5
	prepareRetryDelay = 100 * time.Millisecond
)

// prepareNode is upstream's DoPrepareNode: the patch, then the dependent
// objects, each retried on conflicts.
func prepareNode(ctx context.Context, client kubernetes.Interface, node *v1.Node, p nodePreparer) error {
	patch, err := p.patch(node)
	if err != nil {
		return err
	}
	if len(patch) == 0 {
		return nil
	}
	err = retryOnConflict(ctx, func() error {
		_, err := client.CoreV1().Nodes().Patch(ctx, node.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("applying patch %s to node %s: %w", patch, node.Name, err)
	}
	if err := retryOnConflict(ctx, func() error { return p.prepareDependents(ctx, client, node) }); err != nil {
		return fmt.Errorf("preparing objects for node %s: %w", node.Name, err)
	}
	return nil
}

func retryOnConflict(ctx context.Context, f func() error) error {
	var err error
	for range prepareRetries {
		if err = f(); err == nil || !apierrors.IsConflict(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(prepareRetryDelay):
		}
	}
	return fmt.Errorf("too many conflicts: %w", err)
}
