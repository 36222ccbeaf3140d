package runner

import (
	"context"
	"fmt"
	"maps"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// withRunLabels returns m plus the run's labels.
func (e *executor) withRunLabels(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+len(e.opts.Labels))
	maps.Copy(out, m)
	maps.Copy(out, e.opts.Labels)
	return out
}

// ensureNamespace is upstream's createNamespaceIfNotPresent: a namespace
// the workload does not know yet is created and becomes known. One that
// exists already (created by a churn op, or on a shared cluster) is used.
func (e *executor) ensureNamespace(ctx context.Context, namespace string) error {
	if _, ok := e.podsPerNamespace[namespace]; ok {
		return nil
	}
	if err := e.createNamespace(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		return fmt.Errorf("failed to create namespace for Pod: %v: %w", namespace, err)
	}
	e.podsPerNamespace[namespace] = 0
	return nil
}

var namespacesResource = v1.SchemeGroupVersion.WithResource("namespaces")

// createNamespace creates ns with the run's labels; AlreadyExists is fine.
func (e *executor) createNamespace(ctx context.Context, ns *v1.Namespace) error {
	ns = ns.DeepCopy()
	ns.Labels = e.withRunLabels(ns.Labels)
	_, err := e.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err == nil {
		e.opts.Ledger.Add(ObjectRef{Resource: namespacesResource, Name: ns.Name})
	}
	return err
}

func (e *executor) createNamespaces(ctx context.Context, op *workload.CreateNamespaces, stat *OpStat) (string, error) {
	for _, name := range op.Names() {
		ns := op.Namespace.DeepCopy()
		ns.Name = name
		err := wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Duration: 100 * time.Millisecond, Factor: 3, Steps: 6}, func(ctx context.Context) (bool, error) {
			return e.createNamespace(ctx, ns) == nil, nil
		})
		if err != nil {
			return "", fmt.Errorf("create namespace %s: %w", name, err)
		}
		stat.Created++
	}
	for _, n := range op.Names() {
		if _, ok := e.podsPerNamespace[n]; !ok {
			e.podsPerNamespace[n] = 0
		}
	}
	return fmt.Sprintf("%d namespaces", op.Count), nil
}
