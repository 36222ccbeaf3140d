package embedded

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/resourceclaim"
	"k8s.io/kubernetes/pkg/features"
)

// controllers are the kube-controller-manager controllers upstream's
// scheduler_perf harness runs beside the scheduler (mustSetupCluster,
// util.go v1.37.2) that a workload depends on: the ResourceClaim
// controller, which creates a pod's claims from its ResourceClaimTemplates,
// when the workload turns DynamicResourceAllocation on. Without it a pod
// with a claim template waits for its claim for ever.
type controllers struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startControllers starts the controllers gates call for; nil when none.
func startControllers(client kubernetes.Interface, gates map[string]bool) (*controllers, error) {
	if !gates[string(features.DynamicResourceAllocation)] {
		return nil, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	factory := informers.NewSharedInformerFactory(client, 0)
	claimController, err := resourceclaim.NewController(klog.FromContext(ctx), client,
		factory.Core().V1().Pods(), factory.Scheduling().V1beta1().PodGroups(),
		factory.Resource().V1().ResourceClaims(), factory.Resource().V1().ResourceClaimTemplates())
	if err != nil {
		cancel()
		return nil, fmt.Errorf("ResourceClaim controller: %w", err)
	}
	c := &controllers{cancel: cancel}
	factory.Start(ctx.Done())
	c.wg.Go(func() { claimController.Run(ctx, 5 /* upstream's workers */) })
	c.wg.Go(func() { <-ctx.Done(); factory.Shutdown() })
	return c, nil
}

func (c *controllers) stop() {
	if c == nil {
		return
	}
	c.cancel()
	c.wg.Wait()
}
