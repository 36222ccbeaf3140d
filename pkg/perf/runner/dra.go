package runner

import (
	"context"
	"fmt"
	"sync"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

var resourceClaimsResource = resourcev1.SchemeGroupVersion.WithResource("resourceclaims")

// createResourceClaims is upstream's createResourceClaimsOp: Count copies of
// the claim in the op's namespace (created if missing), 30 at a time.
func (e *executor) createResourceClaims(ctx context.Context, op *workload.CreateResourceClaims, stat *OpStat) (string, error) {
	if err := e.ensureNamespace(ctx, op.Namespace); err != nil {
		return "", err
	}
	client := e.client.ResourceV1().ResourceClaims(op.Namespace)
	var mu sync.Mutex
	var firstErr error
	workqueue.ParallelizeUntil(ctx, min(op.Count, 30), op.Count, func(int) {
		claim := op.Claim.DeepCopy()
		claim.Labels = e.withRunLabels(claim.Labels)
		live, err := client.Create(ctx, claim, metav1.CreateOptions{})
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("%s: create ResourceClaim: %w", op.TemplatePath, err)
			}
			return
		}
		e.opts.Ledger.Add(ObjectRef{Resource: resourceClaimsResource, Namespace: op.Namespace, Name: live.Name})
		stat.Created++
	})
	if firstErr != nil {
		return "", firstErr
	}
	return fmt.Sprintf("%d claims", op.Count), ctx.Err()
}
