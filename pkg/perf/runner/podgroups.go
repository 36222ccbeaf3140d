package runner

import (
	"context"
	"fmt"
	"time"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// Upstream's createPodGroups timings.
const (
	// podGroupCreateTimeout bounds the retries of one PodGroup's create.
	podGroupCreateTimeout = 20 * time.Second
	// podGroupVisibleTimeout bounds the wait until the PodGroups are listed.
	podGroupVisibleTimeout = 10 * time.Second
	podGroupVisiblePoll    = 100 * time.Millisecond
)

var podGroupsResource = schedulingv1beta1.SchemeGroupVersion.WithResource("podgroups")

// createPodGroups is upstream's runCreatePodGroupsOp: Count PodGroups in the
// op's namespace (created if missing), each created with
// fieldValidation=Strict and retried for 20 s unless the API server calls
// it invalid, bad or forbidden; then it waits up to 10 s until all of them
// are listed, so that the pods that name them find them. Upstream waits on
// the scheduler's informer; the runner, which may not share it, lists.
func (e *executor) createPodGroups(ctx context.Context, op *workload.CreatePodGroups, stat *OpStat) (string, error) {
	if err := e.ensureNamespace(ctx, op.Namespace); err != nil {
		return "", err
	}
	client := e.client.SchedulingV1beta1().PodGroups(op.Namespace)
	for i := 0; i < op.Count; i++ {
		pg, err := op.PodGroup(i)
		if err != nil {
			return "", err
		}
		pg.Labels = e.withRunLabels(pg.Labels)
		live, err := createPodGroup(ctx, client, pg, op.TemplatePath)
		if err != nil {
			return "", err
		}
		e.opts.Ledger.Add(ObjectRef{Resource: podGroupsResource, Namespace: op.Namespace, Name: live.Name})
		stat.Created++
	}
	listed := 0
	err := wait.PollUntilContextTimeout(ctx, podGroupVisiblePoll, podGroupVisibleTimeout, true, func(ctx context.Context) (bool, error) {
		list, err := client.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		listed = len(list.Items)
		return listed >= op.Count, nil
	})
	if err != nil {
		return "", fmt.Errorf("waiting for %d PodGroups in namespace %q to be listed, %d are: %w", op.Count, op.Namespace, listed, err)
	}
	return fmt.Sprintf("%d pod groups", op.Count), nil
}

type podGroupCreator interface {
	Create(ctx context.Context, pg *schedulingv1beta1.PodGroup, opts metav1.CreateOptions) (*schedulingv1beta1.PodGroup, error)
}

func createPodGroup(ctx context.Context, client podGroupCreator, pg *schedulingv1beta1.PodGroup, templatePath string) (*schedulingv1beta1.PodGroup, error) {
	ctx, cancel := context.WithTimeout(ctx, podGroupCreateTimeout)
	defer cancel()
	for {
		live, err := client.Create(ctx, pg, metav1.CreateOptions{FieldValidation: "Strict"})
		if err == nil {
			return live, nil
		}
		if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsForbidden(err) {
			return nil, fmt.Errorf("%s: create PodGroup %s: %w", templatePath, pg.Name, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: timed out while creating PodGroup %s, last error was: %w", templatePath, pg.Name, err)
		case <-time.After(time.Second):
		}
	}
}
