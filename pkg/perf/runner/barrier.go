package runner

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// podsIn lists the run's pods in namespace ("" for all) that match
// selector, from the informer's cache.
func (e *executor) podsIn(namespace string, selector map[string]string) ([]*v1.Pod, error) {
	return e.podLister.Pods(namespace).List(labels.SelectorFromSet(e.withRunLabels(selector)))
}

// isAttempted is upstream's: the pod has a PodScheduled condition.
func isAttempted(pod *v1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled {
			return true
		}
	}
	return false
}

// waitScheduled is upstream's waitUntilPodsScheduledInNamespace: poll once
// a second (at once first) until want pods in namespace are bound.
func (e *executor) waitScheduled(ctx context.Context, namespace string, selector map[string]string, want int, p *OpProgress) error {
	return e.waitPods(ctx, namespace, selector, want, p, false)
}

// waitAttempted is upstream's waitUntilPodsAttemptedInNamespace.
func (e *executor) waitAttempted(ctx context.Context, namespace string, selector map[string]string, want int, p *OpProgress) error {
	return e.waitPods(ctx, namespace, selector, want, p, true)
}

func (e *executor) waitPods(ctx context.Context, namespace string, selector map[string]string, want int, p *OpProgress, attempted bool) error {
	var pending *v1.Pod
	got := 0
	err := wait.PollUntilContextTimeout(ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		pods, err := e.podsIn(namespace, selector)
		if err != nil {
			return false, err
		}
		got, pending = 0, nil
		var tried *v1.Pod
		for _, pod := range pods {
			switch {
			case pod.Spec.NodeName != "":
				got++
			case isAttempted(pod):
				if attempted {
					got++
				} else if tried == nil {
					tried = pod
				}
			case pending == nil:
				pending = pod
			}
		}
		if tried != nil {
			pending = tried
		}
		return got >= want, nil
	})
	if err == nil {
		return nil
	}
	what := "scheduled"
	if attempted {
		what = "attempted"
	}
	err = fmt.Errorf("waiting for %d pods in namespace %q to be %s, %d are: %w", want, namespace, what, got, err)
	if pending != nil {
		err = fmt.Errorf("%w; at least pod %s/%s is not %s", err, pending.Namespace, pending.Name, what)
	}
	return err
}

// barrier is upstream's runBarrierOp.
func (e *executor) barrier(ctx context.Context, op *workload.Barrier, p *OpProgress) (string, error) {
	for _, ns := range op.Namespaces {
		if _, ok := e.podsPerNamespace[ns]; !ok {
			return "", fmt.Errorf("unknown namespace %s", ns)
		}
	}
	namespaces := op.Namespaces
	if len(namespaces) == 0 {
		for ns := range e.podsPerNamespace {
			namespaces = append(namespaces, ns)
		}
	}
	total := 0
	for _, ns := range namespaces {
		want := e.podsPerNamespace[ns]
		total += want
		var err error
		if op.StageRequirement == workload.Attempted {
			err = e.waitAttempted(ctx, ns, op.LabelSelector, want, p)
		} else {
			err = e.waitScheduled(ctx, ns, op.LabelSelector, want, p)
		}
		if err != nil {
			return "", fmt.Errorf("error waiting for pods in namespace %q: %w", ns, err)
		}
	}
	if op.StageRequirement != workload.Attempted {
		if len(op.Namespaces) == 0 {
			e.podsPerNamespace = map[string]int{}
		} else {
			for _, ns := range op.Namespaces {
				delete(e.podsPerNamespace, ns)
			}
		}
	}
	return fmt.Sprintf("%d pods %s", total, strings.ToLower(string(op.StageRequirement))), nil
}
