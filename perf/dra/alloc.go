// Package dra registers with the runner the DRA op that needs the
// scheduler's own code: allocResourceClaims, upstream's
// allocResourceClaimsOp (test/integration/scheduler_perf/dra.go,
// k8s.io/kubernetes v1.37.2). Linking this package (schedq-perf does) is
// what lets a workload use the op.
package dra

import (
	"context"
	"fmt"
	"math/rand/v2"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/dynamic-resource-allocation/cel"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

func init() {
	runner.RegisterOp(workload.OpcodeAllocResourceClaims, func(ctx context.Context, env runner.OpEnv, op workload.Op) (string, error) {
		return AllocResourceClaims(ctx, env, op.(*workload.AllocResourceClaims).Namespace)
	})
}

// AllocResourceClaims is upstream's allocResourceClaimsOp.run: it
// allocates the unallocated ResourceClaims in namespace (all namespaces
// when empty) one at a time, each on a node picked at random among those
// where the scheduler's structured allocator finds devices, and writes the
// allocation to the claim's status. The allocator's features follow this
// process's feature gates, as in upstream's harness, where the scheduler
// shares them. Unlike upstream it takes only the claims carrying the run's
// labels, so that a run on a shared cluster touches its own claims only.
func AllocResourceClaims(ctx context.Context, env runner.OpEnv, namespace string) (string, error) {
	client := env.Client
	claimList, err := client.ResourceV1().ResourceClaims(namespace).List(ctx, metav1.ListOptions{LabelSelector: env.RunLabels.String()})
	if err != nil {
		return "", fmt.Errorf("list claims: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Track cluster state.
	informerFactory := informers.NewSharedInformerFactory(client, 0)
	claimInformer := informerFactory.Resource().V1().ResourceClaims().Informer()
	nodeLister := informerFactory.Core().V1().Nodes().Lister()
	trackerOpts := resourceslicetracker.Options{
		EnableDeviceTaintRules:   utilfeature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules),
		EnableConsumableCapacity: utilfeature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity),
		SliceInformer:            informerFactory.Resource().V1().ResourceSlices(),
		KubeClient:               client,
	}
	if trackerOpts.EnableDeviceTaintRules {
		trackerOpts.TaintInformer = informerFactory.Resource().V1().DeviceTaintRules()
	}
	sliceTracker, err := resourceslicetracker.StartTracker(ctx, trackerOpts)
	if err != nil {
		return "", fmt.Errorf("start the resource slice tracker: %w", err)
	}
	assumeCache := assumecache.NewAssumeCache(klog.FromContext(ctx), claimInformer, "ResourceClaim", "", nil)
	draManager := dynamicresources.NewDRAManager(ctx, assumeCache, sliceTracker, informerFactory)
	informerFactory.Start(ctx.Done())
	defer func() {
		cancel()
		informerFactory.Shutdown()
	}()
	for typ, ok := range informerFactory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return "", fmt.Errorf("the %v informer did not sync: %w", typ, context.Cause(ctx))
		}
	}
	// The tracker lags behind the informers when DeviceTaintRules are on.
	if !cache.WaitForCacheSync(ctx.Done(), sliceTracker.HasSynced) {
		return "", fmt.Errorf("the resource slice tracker did not sync: %w", context.Cause(ctx))
	}
	celCache := cel.NewCache(10, cel.Features{
		EnableConsumableCapacity: utilfeature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity),
		EnableListTypeAttributes: utilfeature.DefaultFeatureGate.Enabled(features.DRAListTypeAttributes),
	})
	// The assume cache must have caught up before the status updates below
	// can be stored in it; it has no HasSynced of its own.
	handle := assumeCache.AddEventHandler(cache.ResourceEventHandlerFuncs{})
	if !cache.WaitForCacheSync(ctx.Done(), handle.HasSynced) {
		return "", fmt.Errorf("the ResourceClaim assume cache did not sync: %w", context.Cause(ctx))
	}

	// The set of nodes is fixed from here on.
	nodes, err := nodeLister.List(labels.Everything())
	if err != nil {
		return "", fmt.Errorf("list nodes: %w", err)
	}
	slices, err := draManager.ResourceSlices().ListWithDeviceTaintRules()
	if err != nil {
		return "", fmt.Errorf("list slices: %w", err)
	}
	allocatorFeatures := structured.Features{
		PrioritizedList:      utilfeature.DefaultFeatureGate.Enabled(features.DRAPrioritizedList),
		AdminAccess:          utilfeature.DefaultFeatureGate.Enabled(features.DRAAdminAccess),
		DeviceTaints:         utilfeature.DefaultFeatureGate.Enabled(features.DRADeviceTaints),
		PartitionableDevices: utilfeature.DefaultFeatureGate.Enabled(features.DRAPartitionableDevices),
		ConsumableCapacity:   utilfeature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity),
		CompatibilityGroups:  utilfeature.DefaultFeatureGate.Enabled(features.DRADeviceCompatibilityGroups),
	}

	// One claim at a time, nodes picked at random. Each allocation is
	// stored at once, through the assume cache, so that the next claim sees
	// it without waiting for the informer.
	allocated := 0
claims:
	for i := range claimList.Items {
		claim := &claimList.Items[i]
		if claim.Status.Allocation != nil {
			continue
		}
		state, err := allocatedState(draManager)
		if err != nil {
			return "", err
		}
		allocator, err := structured.NewAllocator(ctx, allocatorFeatures, state, draManager.DeviceClasses(), slices, celCache)
		if err != nil {
			return "", fmt.Errorf("create the allocator: %w", err)
		}
		rand.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
		for _, node := range nodes {
			result, err := allocator.Allocate(ctx, node, []*resourceapi.ResourceClaim{claim})
			if err != nil {
				return "", fmt.Errorf("allocate claim %s/%s: %w", claim.Namespace, claim.Name, err)
			}
			if result == nil {
				continue
			}
			claim = claim.DeepCopy()
			claim.Status.Allocation = &result[0]
			updated, err := client.ResourceV1().ResourceClaims(claim.Namespace).UpdateStatus(ctx, claim, metav1.UpdateOptions{})
			if err != nil {
				return "", fmt.Errorf("update claim %s/%s's status with its allocation: %w", claim.Namespace, claim.Name, err)
			}
			if err := draManager.ResourceClaims().AssumeClaimAfterAPICall(updated); err != nil {
				return "", fmt.Errorf("assume claim %s/%s: %w", claim.Namespace, claim.Name, err)
			}
			allocated++
			continue claims
		}
		return "", fmt.Errorf("could not allocate claim %d out of %d (%s/%s) on any of %d nodes", i, len(claimList.Items), claim.Namespace, claim.Name, len(nodes))
	}
	return fmt.Sprintf("%d claims allocated", allocated), nil
}

// allocatedState is what the claims the manager knows have allocated, as
// upstream's op builds it before each claim.
func allocatedState(draManager *dynamicresources.DefaultDRAManager) (structured.AllocatedState, error) {
	devices := sets.New[structured.DeviceID]()
	shared := sets.New[structured.SharedDeviceID]()
	capacity := structured.NewConsumedCapacityCollection()
	claims, err := draManager.ResourceClaims().List()
	if err != nil {
		return structured.AllocatedState{}, fmt.Errorf("list claims: %w", err)
	}
	for _, claim := range claims {
		if claim.Status.Allocation == nil {
			continue
		}
		for _, result := range claim.Status.Allocation.Devices.Results {
			deviceID := structured.MakeDeviceID(result.Driver, result.Pool, result.Device)
			devices.Insert(deviceID)
			if result.ShareID == nil {
				continue
			}
			shared.Insert(structured.MakeSharedDeviceID(deviceID, result.ShareID))
			if result.ConsumedCapacity != nil {
				capacity.Insert(structured.NewDeviceConsumedCapacity(deviceID, result.ConsumedCapacity))
			}
		}
	}
	return structured.AllocatedState{AllocatedDevices: devices, AllocatedSharedDeviceIDs: shared, AggregatedCapacity: capacity}, nil
}
