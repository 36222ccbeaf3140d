package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	callbound "github.com/kubectl-schedq/kubectl-schedq/pkg/bound"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
)

// nodeLeaseNamespace holds the nodes' heartbeat leases.
const nodeLeaseNamespace = "kube-node-lease"

// Removed counts what Cleanup deleted, as the API server confirmed it: a
// delete that failed, or was never sent, counts for nothing.
type Removed struct {
	Pods, Nodes, Namespaces, Others int
	// Left names the kinds of objects that may be left ("pods", "nodes",
	// …): a list or a delete of theirs failed or was not sent.
	Left []string
}

func (r Removed) String() string {
	return fmt.Sprintf("%d pods, %d nodes, %d namespaces and %d other objects", r.Pods, r.Nodes, r.Namespaces, r.Others)
}

// Cleanup deletes what a run created on a shared cluster: every pod, node,
// node lease, persistent volume (claim) and namespace that carries
// runLabels, and every object the ledger recorded (churn and createAny
// objects, and objects an updateAny stripped of the labels). Pods go first,
// a delete collection per namespace, all namespaces at once and without
// grace (no kubelet runs them), so that thousands of pods go in seconds,
// not one request each; namespaces go last. NotFound is not an error. It
// returns what it deleted and the errors it met, all of them. Every call
// is bounded by bound (DefaultRequestTimeout when 0); the first call that
// times out ends the cleanup, since a server that did not answer one call
// would make every later one wait as long.
func Cleanup(ctx context.Context, client kubernetes.Interface, dyn dynamic.Interface, runLabels map[string]string, ledger *runner.Ledger, bound time.Duration) (Removed, error) {
	if len(runLabels) == 0 {
		return Removed{}, errors.New("cleanup: no run labels: refusing to select everything")
	}
	return cleanup(ctx, client, dyn, labels.SelectorFromSet(runLabels).String(), ledger, bound)
}

// CleanupRuns removes what runs left behind (a run killed before its own
// cleanup): run runID's objects, or with runID empty every object that
// carries the run label. Every call is bounded as in Cleanup.
func CleanupRuns(ctx context.Context, client kubernetes.Interface, runID string, bound time.Duration) (Removed, error) {
	sel := runner.RunLabelKey
	if runID != "" {
		sel = labels.SelectorFromSet(map[string]string{runner.RunLabelKey: runID}).String()
	}
	return cleanup(ctx, client, nil, sel, nil, bound)
}

func cleanup(ctx context.Context, client kubernetes.Interface, dyn dynamic.Interface, selector string, ledger *runner.Ledger, bound time.Duration) (Removed, error) {
	var removed Removed
	if bound <= 0 {
		bound = callbound.DefaultRequestTimeout
	}
	sel := metav1.ListOptions{LabelSelector: selector}
	// stalled ends every call once one has timed out.
	ctx, stall := context.WithCancelCause(ctx)
	defer stall(nil)
	var (
		mu       sync.Mutex
		errs     []error
		timedOut error
	)
	fail := func(err error) {
		if err == nil || apierrors.IsNotFound(err) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if timedOut != nil {
			return // the calls the stall cut short say nothing more
		}
		if callbound.IsTimeout(err) {
			timedOut = &callbound.TimeoutError{Call: "a call to the API server", Bound: bound, Err: err}
			stall(timedOut)
			return
		}
		errs = append(errs, err)
	}
	stalled := func() bool { return context.Cause(ctx) != nil }
	// Every kind may be left until all its calls have succeeded.
	const (
		kindPods   = "pods"
		kindPVCs   = "persistent volume claims"
		kindOthers = "objects the run recorded"
		kindNodes  = "nodes"
		kindLeases = "node leases"
		kindPVs    = "persistent volumes"
		kindNS     = "namespaces"
	)
	// call bounds one call.
	call := func(fn func(ctx context.Context) error) error {
		if stalled() {
			return context.Cause(ctx)
		}
		cctx, cancel := context.WithTimeout(ctx, bound)
		defer cancel()
		return fn(cctx)
	}
	failedKinds := map[string]bool{}
	// do makes one bounded call for kind and says whether the server
	// confirmed it; NotFound is gone already (not counted, not left).
	do := func(kind string, fn func(ctx context.Context) error) bool {
		err := call(fn)
		if err == nil {
			return true
		}
		if !apierrors.IsNotFound(err) {
			mu.Lock()
			failedKinds[kind] = true
			mu.Unlock()
			fail(err)
		}
		return false
	}
	var confirmed struct {
		sync.Mutex
		pods, others, namespaces int
	}
	count := func(n *int) {
		confirmed.Lock()
		*n++
		confirmed.Unlock()
	}
	parallel := func(n int, fn func(i int)) { workqueue.ParallelizeUntil(ctx, 20, n, fn) }
	wide := func(n int, fn func(i int)) { workqueue.ParallelizeUntil(ctx, cleanupParallelism, n, fn) }
	now := metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}

	// The pods' namespaces: those listed, and those the ledger knows the
	// run created pods in (a list may miss pods created meanwhile).
	podNS := map[string]bool{}
	if ledger != nil {
		for _, ns := range ledger.PodNamespaces() {
			podNS[ns] = true
		}
	}
	var pods *v1.PodList
	do(kindPods, func(ctx context.Context) (err error) {
		pods, err = client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, sel)
		return err
	})
	if pods != nil {
		for _, p := range pods.Items {
			podNS[p.Namespace] = true
		}
	}
	var pvcs *v1.PersistentVolumeClaimList
	do(kindPVCs, func(ctx context.Context) (err error) {
		pvcs, err = client.CoreV1().PersistentVolumeClaims(metav1.NamespaceAll).List(ctx, sel)
		return err
	})
	pvcsIn := map[string]int{}
	if pvcs != nil {
		for _, p := range pvcs.Items {
			pvcsIn[p.Namespace]++
			podNS[p.Namespace] = true
		}
	}
	// One delete per pod, many at once and unthrottled: kube-apiserver
	// carries out a delete collection one object at a time
	// (--delete-collection-workers is 1 by default), so a collection of
	// thousands takes tens of seconds; a collection per namespace still
	// follows, for pods created after the list.
	if pods != nil {
		wide(len(pods.Items), func(i int) {
			p := &pods.Items[i]
			if do(kindPods, func(ctx context.Context) error { return client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, now) }) {
				count(&confirmed.pods)
			}
		})
	}
	nsList := slices.Sorted(maps.Keys(podNS))
	parallel(len(nsList), func(i int) {
		do(kindPods, func(ctx context.Context) error {
			return client.CoreV1().Pods(nsList[i]).DeleteCollection(ctx, now, sel)
		})
		if do(kindPVCs, func(ctx context.Context) error {
			return client.CoreV1().PersistentVolumeClaims(nsList[i]).DeleteCollection(ctx, metav1.DeleteOptions{}, sel)
		}) {
			confirmed.Lock()
			confirmed.others += pvcsIn[nsList[i]]
			confirmed.Unlock()
		}
	})
	if ledger != nil {
		// Everything but namespaces, which go last.
		var rest []runner.ObjectRef
		for _, r := range ledger.Objects() {
			if r.Resource != namespacesGVR && r.Resource != nodesGVR {
				rest = append(rest, r)
			}
		}
		parallel(len(rest), func(i int) {
			r := rest[i]
			res := dyn.Resource(r.Resource)
			if do(kindOthers, func(ctx context.Context) error {
				if r.Namespace != "" {
					return res.Namespace(r.Namespace).Delete(ctx, r.Name, metav1.DeleteOptions{})
				}
				return res.Delete(ctx, r.Name, metav1.DeleteOptions{})
			}) {
				count(&confirmed.others)
			}
		})
	}
	var nodes *v1.NodeList
	nodesListed := do(kindNodes, func(ctx context.Context) (err error) {
		nodes, err = client.CoreV1().Nodes().List(ctx, sel)
		return err
	})
	var pvs *v1.PersistentVolumeList
	pvsListed := do(kindPVs, func(ctx context.Context) (err error) {
		pvs, err = client.CoreV1().PersistentVolumes().List(ctx, sel)
		return err
	})
	parallel(3, func(i int) {
		switch i {
		case 0:
			// A delete collection that succeeded removed what the list saw.
			if do(kindNodes, func(ctx context.Context) error {
				return client.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, sel)
			}) && nodesListed {
				removed.Nodes = len(nodes.Items)
			}
		case 1:
			do(kindLeases, func(ctx context.Context) error {
				return client.CoordinationV1().Leases(nodeLeaseNamespace).DeleteCollection(ctx, metav1.DeleteOptions{}, sel)
			})
		default:
			if do(kindPVs, func(ctx context.Context) error {
				return client.CoreV1().PersistentVolumes().DeleteCollection(ctx, metav1.DeleteOptions{}, sel)
			}) && pvsListed {
				confirmed.Lock()
				confirmed.others += len(pvs.Items)
				confirmed.Unlock()
			}
		}
	})
	nsNames := map[string]bool{}
	var nss *v1.NamespaceList
	if do(kindNS, func(ctx context.Context) (err error) {
		nss, err = client.CoreV1().Namespaces().List(ctx, sel)
		return err
	}) {
		for _, ns := range nss.Items {
			nsNames[ns.Name] = true
		}
	}
	if ledger != nil {
		for _, r := range ledger.Objects() {
			if r.Resource == namespacesGVR {
				nsNames[r.Name] = true
			}
		}
	}
	names := slices.Sorted(maps.Keys(nsNames))
	parallel(len(names), func(i int) {
		if do(kindNS, func(ctx context.Context) error {
			return client.CoreV1().Namespaces().Delete(ctx, names[i], metav1.DeleteOptions{})
		}) {
			count(&confirmed.namespaces)
		}
	})
	removed.Pods, removed.Others, removed.Namespaces = confirmed.pods, confirmed.others, confirmed.namespaces
	for _, kind := range []string{kindPods, kindPVCs, kindOthers, kindNodes, kindLeases, kindPVs, kindNS} {
		// After a stall, the calls never sent leave every kind in doubt
		// (but the run's own recorded objects only if it recorded some).
		if failedKinds[kind] || stalled() && (kind != kindOthers || ledger != nil && len(ledger.Objects()) > 0) {
			removed.Left = append(removed.Left, kind)
		}
	}
	if timedOut != nil {
		errs = append([]error{timedOut}, errs...)
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("%s labelled %s may be left: %w", strings.Join(removed.Left, ", "), sel.LabelSelector, errors.Join(errs...))
	}
	return removed, nil
}

// isCallTimeout reports whether err means a call ran out of time: its
// deadline, a network timeout, or the API server's own timeout.
// cleanupParallelism is how many deletes Cleanup keeps in flight.
const cleanupParallelism = 100

var (
	namespacesGVR = v1.SchemeGroupVersion.WithResource("namespaces")
	nodesGVR      = v1.SchemeGroupVersion.WithResource("nodes")
)

// nodeKeeper keeps a run's fake nodes schedulable on a cluster whose node
// lifecycle controller and TaintNodesByCondition admission run: it renews
// each node's lease every leaseRenewInterval, as a kubelet would, and
// removes the not-ready and unreachable taints from a node whose Ready
// condition is true (the admission plugin puts one on every new node).
type nodeKeeper struct {
	cancel context.CancelFunc
	done   chan struct{}
}

const (
	leaseRenewInterval = 10 * time.Second
	leaseDuration      = 40
)

var keeperTaints = map[string]bool{v1.TaintNodeNotReady: true, v1.TaintNodeUnreachable: true}

func startNodeKeeper(client kubernetes.Interface, runLabels map[string]string) (*nodeKeeper, error) {
	sel := labels.SelectorFromSet(runLabels).String()
	informer := runner.NewNodeInformer(client, sel)
	ctx, cancel := context.WithCancel(context.Background())
	k := &nodeKeeper{cancel: cancel, done: make(chan struct{})}
	untaint := func(obj any) {
		n, ok := obj.(*v1.Node)
		if !ok || !isReady(n) || !hasKeeperTaint(n) {
			return
		}
		n = n.DeepCopy()
		var keep []v1.Taint
		for _, t := range n.Spec.Taints {
			if !keeperTaints[t.Key] {
				keep = append(keep, t)
			}
		}
		n.Spec.Taints = keep
		_, _ = client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    untaint,
		UpdateFunc: func(_, obj any) { untaint(obj) },
	}); err != nil {
		cancel()
		return nil, err
	}
	informerDone := make(chan struct{})
	go func() {
		defer close(informerDone)
		informer.RunWithContext(ctx)
	}()
	lister := corelisters.NewNodeLister(informer.GetIndexer())
	go func() {
		defer close(k.done)
		defer func() { <-informerDone }()
		t := time.NewTicker(leaseRenewInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			list, err := lister.List(labels.Everything())
			if err != nil {
				continue
			}
			workqueue.ParallelizeUntil(ctx, 10, len(list), func(i int) {
				renewLease(ctx, client, list[i], runLabels)
			})
		}
	}()
	return k, nil
}

func (k *nodeKeeper) stop() {
	k.cancel()
	<-k.done
}

func isReady(n *v1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

func hasKeeperTaint(n *v1.Node) bool {
	for _, t := range n.Spec.Taints {
		if keeperTaints[t.Key] {
			return true
		}
	}
	return false
}

// renewLease renews (or creates) node's lease, as its kubelet would.
func renewLease(ctx context.Context, client kubernetes.Interface, n *v1.Node, runLabels map[string]string) {
	leases := client.CoordinationV1().Leases(nodeLeaseNamespace)
	now := metav1.NewMicroTime(time.Now())
	l, err := leases.Get(ctx, n.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		lb := map[string]string{}
		for k, v := range runLabels {
			lb[k] = v
		}
		_, _ = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{
				Name:            n.Name,
				Labels:          lb,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: n.Name, UID: n.UID}},
			},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity:       ptr.To(n.Name),
				LeaseDurationSeconds: ptr.To(int32(leaseDuration)),
				RenewTime:            &now,
			},
		}, metav1.CreateOptions{})
		return
	}
	if err != nil {
		return
	}
	l.Spec.RenewTime = &now
	_, _ = leases.Update(ctx, l, metav1.UpdateOptions{})
}
