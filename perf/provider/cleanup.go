package provider

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"

	"github.com/kubectl-schedq/kubectl-schedq/perf/runner"
)

// nodeLeaseNamespace holds the nodes' heartbeat leases.
const nodeLeaseNamespace = "kube-node-lease"

// Cleanup deletes what a run created on a shared cluster: every pod, node,
// node lease, persistent volume (claim) and namespace that carries
// runLabels, and every object the ledger recorded (churn and createAny
// objects, and objects an updateAny stripped of the labels). Pods go first
// and without grace (no kubelet runs them), namespaces last. NotFound is
// not an error. It returns the errors it met, all of them.
func Cleanup(ctx context.Context, client kubernetes.Interface, dyn dynamic.Interface, runLabels map[string]string, ledger *runner.Ledger) error {
	if len(runLabels) == 0 {
		return errors.New("cleanup: no run labels: refusing to select everything")
	}
	sel := metav1.ListOptions{LabelSelector: labels.SelectorFromSet(runLabels).String()}
	var (
		mu   sync.Mutex
		errs []error
	)
	fail := func(err error) {
		if err == nil || apierrors.IsNotFound(err) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
	}
	parallel := func(n int, fn func(i int)) { workqueue.ParallelizeUntil(ctx, 20, n, fn) }
	now := metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}

	pods, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, sel)
	fail(err)
	if pods != nil {
		parallel(len(pods.Items), func(i int) {
			p := &pods.Items[i]
			fail(client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, now))
		})
	}
	pvcs, err := client.CoreV1().PersistentVolumeClaims(metav1.NamespaceAll).List(ctx, sel)
	fail(err)
	if pvcs != nil {
		parallel(len(pvcs.Items), func(i int) {
			p := &pvcs.Items[i]
			fail(client.CoreV1().PersistentVolumeClaims(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{}))
		})
	}
	if ledger != nil {
		refs := ledger.Objects()
		// Everything but namespaces, which go last.
		var rest []runner.ObjectRef
		for _, r := range refs {
			if r.Resource != namespacesGVR {
				rest = append(rest, r)
			}
		}
		parallel(len(rest), func(i int) {
			r := rest[i]
			res := dyn.Resource(r.Resource)
			if r.Namespace != "" {
				fail(res.Namespace(r.Namespace).Delete(ctx, r.Name, metav1.DeleteOptions{}))
				return
			}
			fail(res.Delete(ctx, r.Name, metav1.DeleteOptions{}))
		})
	}
	pvs, err := client.CoreV1().PersistentVolumes().List(ctx, sel)
	fail(err)
	if pvs != nil {
		parallel(len(pvs.Items), func(i int) {
			fail(client.CoreV1().PersistentVolumes().Delete(ctx, pvs.Items[i].Name, metav1.DeleteOptions{}))
		})
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, sel)
	fail(err)
	if nodes != nil {
		parallel(len(nodes.Items), func(i int) {
			fail(client.CoreV1().Nodes().Delete(ctx, nodes.Items[i].Name, metav1.DeleteOptions{}))
		})
	}
	leases, err := client.CoordinationV1().Leases(nodeLeaseNamespace).List(ctx, sel)
	fail(err)
	if leases != nil {
		parallel(len(leases.Items), func(i int) {
			fail(client.CoordinationV1().Leases(nodeLeaseNamespace).Delete(ctx, leases.Items[i].Name, metav1.DeleteOptions{}))
		})
	}
	nsNames := map[string]bool{}
	if nss, err := client.CoreV1().Namespaces().List(ctx, sel); err != nil {
		fail(err)
	} else {
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
	names := make([]string, 0, len(nsNames))
	for n := range nsNames {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fail(client.CoreV1().Namespaces().Delete(ctx, n, metav1.DeleteOptions{}))
	}
	if len(errs) > 0 {
		return fmt.Errorf("some objects labelled %s may be left: %w", sel.LabelSelector, errors.Join(errs...))
	}
	return nil
}

var namespacesGVR = v1.SchemeGroupVersion.WithResource("namespaces")

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
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = sel
	}))
	nodes := factory.Core().V1().Nodes()
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
	if _, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    untaint,
		UpdateFunc: func(_, obj any) { untaint(obj) },
	}); err != nil {
		cancel()
		return nil, err
	}
	factory.Start(ctx.Done())
	go func() {
		defer close(k.done)
		defer factory.Shutdown()
		t := time.NewTicker(leaseRenewInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			list, err := nodes.Lister().List(labels.Everything())
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
