package metricscrape

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
)

// SchedulerPodSelector selects the kube-scheduler static pods kubeadm (and
// so kind) creates. Pods named kube-scheduler-* are taken when it selects none.
const SchedulerPodSelector = "component=kube-scheduler"

// schedulerPodPrefix is the name prefix of kubeadm's scheduler pods.
const schedulerPodPrefix = "kube-scheduler-"

// SchedulerPods is where a platform runs kube-scheduler as pods, reached
// by a port-forward to their secure port, the holder of their Lease chosen
// among several. kubeadm, RKE2, Talos and OpenShift are each one value of
// it (PodLocator makes it a Locator).
type SchedulerPods struct {
	// Namespace holds the pods.
	Namespace string
	// Selector selects them; when it selects none, the pods whose names
	// start with NamePrefix are taken, if NamePrefix is set.
	Selector   string
	NamePrefix string
	// LeaseNamespace and LeaseName are the Lease the schedulers elect
	// their leader with.
	LeaseNamespace, LeaseName string
	// Port is the scheduler's secure port.
	Port int
}

// KubeadmSchedulerPods is kubeadm's: static pods kube-scheduler-<node> in
// kube-system, Lease kube-system/kube-scheduler.
var KubeadmSchedulerPods = SchedulerPods{
	Namespace: SchedulerNamespace, Selector: SchedulerPodSelector, NamePrefix: schedulerPodPrefix,
	LeaseNamespace: SchedulerNamespace, LeaseName: SchedulerLeaseName, Port: SchedulerSecurePort,
}

// what names the pods looked for.
func (sp SchedulerPods) what() string {
	w := "pod " + sp.Selector
	if sp.NamePrefix != "" {
		w += " or named " + sp.NamePrefix + "*"
	}
	return w + " in " + sp.Namespace
}

// lease is namespace/name of the Lease.
func (sp SchedulerPods) lease() string { return sp.LeaseNamespace + "/" + sp.LeaseName }

// find lists the pods: by Selector, else by NamePrefix. A 403 is a
// PortForwardForbiddenError for sp's namespace.
func (sp SchedulerPods) find(ctx context.Context, c *Cluster) ([]corev1.Pod, error) {
	pods, err := c.Pods(ctx, sp.Namespace, sp.Selector)
	if err != nil {
		return nil, sp.apiStep("listing kube-scheduler pods ("+sp.Selector+") in "+sp.Namespace, err)
	}
	if len(pods) > 0 || sp.NamePrefix == "" {
		return pods, nil
	}
	all, err := c.Pods(ctx, sp.Namespace, "")
	if err != nil {
		return nil, sp.apiStep("listing pods in "+sp.Namespace, err)
	}
	var named []corev1.Pod
	for _, p := range all {
		if strings.HasPrefix(p.Name, sp.NamePrefix) {
			named = append(named, p)
		}
	}
	return named, nil
}

// SchedulerTarget is the scheduler pod whose queue is live.
type SchedulerTarget struct {
	Pod *corev1.Pod
	// LeaseHolder is the holderIdentity of the schedulers' Lease, or empty
	// when the lease could not be read.
	LeaseHolder string
	// Lease is namespace/name of that Lease.
	Lease string
	// Candidates is how many running scheduler pods there were.
	Candidates int
	// Standby are the other running pods: replicas waiting for the Lease,
	// whose queues are not live.
	Standby []*corev1.Pod
}

// NoLeaderError says several scheduler pods run and the leader among them
// could not be told.
type NoLeaderError struct {
	Pods        []string
	Lease       string
	LeaseHolder string
	// LeaseErr is why the lease could not be read, if it could not.
	LeaseErr error
}

func (e *NoLeaderError) Error() string {
	if e.Lease == "" {
		return fmt.Sprintf("%d kube-scheduler pods (%s) without leader election: each schedules from a queue of its own; read one with --metrics-url", len(e.Pods), strings.Join(e.Pods, ", "))
	}
	msg := fmt.Sprintf("%d kube-scheduler pods (%s) and only the leader has a live queue, but ", len(e.Pods), strings.Join(e.Pods, ", "))
	switch {
	case e.LeaseErr != nil:
		msg += fmt.Sprintf("Lease %s could not be read: %v", e.Lease, e.LeaseErr)
	case e.LeaseHolder == "":
		msg += fmt.Sprintf("Lease %s has no holder", e.Lease)
	default:
		msg += fmt.Sprintf("its holder %q matches none of them", e.LeaseHolder)
	}
	return msg
}

// PortForwardForbiddenError is an API server 403 on the way to the
// scheduler: listing its pods, reading its lease or port-forwarding.
type PortForwardForbiddenError struct {
	Step     string
	Err      error
	Identity *Identity
	// Namespace and Lease (namespace/name) are where the scheduler's pods
	// and Lease are; kube-system and kube-system/kube-scheduler when empty.
	Namespace string
	Lease     string
}

func (e *PortForwardForbiddenError) Error() string {
	return fmt.Sprintf("%s: %v", e.Step, e.Err)
}

func (e *PortForwardForbiddenError) Unwrap() error { return e.Err }

// Remedy is the Role and RoleBinding that allow the steps.
func (e *PortForwardForbiddenError) Remedy() string {
	ns, lease := e.Namespace, e.Lease
	if ns == "" {
		ns = SchedulerNamespace
	}
	leaseNS, leaseName, ok := strings.Cut(lease, "/")
	if !ok {
		leaseNS, leaseName = SchedulerNamespace, SchedulerLeaseName
	}
	return PortForwardRBAC(e.Identity, ns, leaseNS, leaseName)
}

// Where is the namespace the steps need access to.
func (e *PortForwardForbiddenError) Where() string {
	if e.Namespace == "" {
		return SchedulerNamespace
	}
	return e.Namespace
}

// apiStep names the step an API error happened in; a 403 becomes a
// PortForwardForbiddenError, which carries its remedy.
func (sp SchedulerPods) apiStep(step string, err error) error {
	if apierrors.IsForbidden(err) {
		return &PortForwardForbiddenError{Step: step, Err: err, Namespace: sp.Namespace, Lease: sp.lease()}
	}
	return &APIStepError{Step: step, Err: err}
}

// Target finds the scheduler pod whose queue is live: the only running
// one, or with several the holder of the Lease. It wraps ErrNotHere when
// there is no pod at all.
func (sp SchedulerPods) Target(ctx context.Context, c *Cluster) (*SchedulerTarget, error) {
	items, err := sp.find(ctx, c)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("no %s: %w", sp.what(), ErrNotHere)
	}
	var running []*corev1.Pod
	var others []string
	for i := range items {
		p := &items[i]
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			running = append(running, p)
		} else {
			others = append(others, fmt.Sprintf("%s (%s)", p.Name, p.Status.Phase))
		}
	}
	if len(running) == 0 {
		return nil, fmt.Errorf("no kube-scheduler pod in %s is running: %s", sp.Namespace, strings.Join(others, ", "))
	}
	sort.Slice(running, func(i, j int) bool { return running[i].Name < running[j].Name })

	if sp.LeaseName == "" {
		// No leader election: each replica schedules, from a queue of
		// its own.
		if len(running) == 1 {
			return &SchedulerTarget{Pod: running[0], Candidates: 1}, nil
		}
		return nil, &NoLeaderError{Pods: podNames(running)}
	}
	holder, leaseErr := c.LeaseHolder(ctx, sp.LeaseNamespace, sp.LeaseName)
	target := &SchedulerTarget{LeaseHolder: holder, Lease: sp.lease(), Candidates: len(running)}
	if len(running) == 1 {
		target.Pod = running[0]
		return target, nil
	}
	names := podNames(running)
	if leaseErr != nil {
		if apierrors.IsForbidden(leaseErr) {
			return nil, sp.apiStep("reading Lease "+sp.lease()+" to find the leader among "+strings.Join(names, ", "), leaseErr)
		}
		return nil, &NoLeaderError{Pods: names, Lease: sp.lease(), LeaseErr: leaseErr}
	}
	if target.Pod = selectLeader(running, holder, sp.NamePrefix); target.Pod == nil {
		return nil, &NoLeaderError{Pods: names, Lease: sp.lease(), LeaseHolder: holder}
	}
	for _, p := range running {
		if p != target.Pod {
			target.Standby = append(target.Standby, p)
		}
	}
	return target, nil
}

func podNames(pods []*corev1.Pod) []string {
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.Name
	}
	return names
}

// DiscoverScheduler finds the live kube-scheduler pod where the platforms
// that run it as pods put it (Talos's, kubeadm's and RKE2's in kube-system,
// OpenShift's), for a caller that port-forwards to it itself. On kubeadm it
// makes three API calls.
func DiscoverScheduler(ctx context.Context, client kubernetes.Interface) (*SchedulerTarget, error) {
	c := NewCluster(nil, client, nil)
	var looked []string
	for _, sp := range []SchedulerPods{TalosSchedulerPods, KubeadmSchedulerPods, OpenShiftSchedulerPods} {
		t, err := sp.Target(ctx, c)
		if !errors.Is(err, ErrNotHere) {
			return t, err
		}
		looked = append(looked, sp.what())
	}
	return nil, fmt.Errorf("%w: no %s", ErrNoSchedulerPod, strings.Join(looked, ", no "))
}

// selectLeader picks the pod the lease holder runs in. kube-scheduler's
// holderIdentity is "<hostname>_<uuid>"; the hostname is the node name, or a
// longer form of it, for a static pod on the host's network, and the pod's
// own name (or spec.hostname) for a pod of a Deployment.
func selectLeader(pods []*corev1.Pod, holder, prefix string) *corev1.Pod {
	host, _, ok := strings.Cut(holder, "_")
	if !ok || host == "" {
		return nil
	}
	short, _, _ := strings.Cut(host, ".")
	for _, match := range []func(p *corev1.Pod) bool{
		func(p *corev1.Pod) bool {
			if !p.Spec.HostNetwork {
				return p.Name == host || p.Spec.Hostname == host
			}
			return strings.EqualFold(p.Spec.NodeName, host) || (prefix != "" && p.Name == prefix+host)
		},
		func(p *corev1.Pod) bool {
			node, _, _ := strings.Cut(p.Spec.NodeName, ".")
			return p.Spec.HostNetwork && strings.EqualFold(node, short)
		},
	} {
		var found []*corev1.Pod
		for _, p := range pods {
			if match(p) {
				found = append(found, p)
			}
		}
		if len(found) == 1 {
			return found[0]
		}
	}
	return nil
}

// Forwarder opens a tunnel to a pod's port and returns the local port it
// listens on and a function that closes it.
type Forwarder func(ctx context.Context, namespace, pod string, port int) (localPort int, stop func(), err error)

// Endpoint returns how to reach the target: a port-forward to its pod's
// secure port, then HTTPS with the kubeconfig's credentials. This works
// with kubeadm's --bind-address=127.0.0.1. The scheduler's self-signed
// serving certificate is not verified (ServerName localhost), as
// upstream's e2e metrics grabber does.
func (sp SchedulerPods) Endpoint(c *Cluster, t *SchedulerTarget) (*Endpoint, error) {
	rt, err := credentialTransport(c.Config, true, "localhost")
	if err != nil {
		return nil, err
	}
	pod := t.Pod
	where := fmt.Sprintf("%s/%s:%d", pod.Namespace, pod.Name, sp.Port)
	ep := &Endpoint{
		Origin: Origin{
			Kind:        OriginPortForward,
			Address:     where,
			Pod:         pod.Namespace + "/" + pod.Name,
			Node:        pod.Spec.NodeName,
			LeaseHolder: t.LeaseHolder,
			Lease:       t.Lease,
			Candidates:  t.Candidates,
			Standby:     qualifiedNames(t.Standby),
		},
		Target:      "kube-scheduler " + where + " (port-forward)",
		MetricsPath: MetricsPath,
		auth:        c.auth,
	}
	ep.Open = func(ctx context.Context) (string, *http.Client, func(), error) {
		local, stop, err := c.Forward(ctx, pod.Namespace, pod.Name, sp.Port)
		if err != nil {
			if strings.Contains(err.Error(), "is forbidden") {
				return "", nil, nil, c.withIdentity(ctx, &PortForwardForbiddenError{Step: "port-forward to " + where, Err: err, Namespace: sp.Namespace, Lease: sp.lease()})
			}
			var te *TransportError
			if errors.As(err, &te) {
				return "", nil, nil, err
			}
			return "", nil, nil, classifyTransportError("kube-scheduler "+where+" through a port-forward", err)
		}
		// The credentials go to the port-forward's own local origin only.
		hc := bound.Client(bound.Origin{Scheme: "https", Host: "127.0.0.1", Port: strconv.Itoa(local)}, rt)
		return fmt.Sprintf("https://127.0.0.1:%d", local), hc, stop, nil
	}
	return ep, nil
}

// qualifiedNames are the pods' namespace/name.
func qualifiedNames(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	return out
}

// PodLocator is a Locator for a platform that runs kube-scheduler as pods.
type PodLocator struct {
	Name string
	Pods SchedulerPods
	// Marks, when set, must hold as well for the pods to be the
	// platform's (RKE2's pods are kubeadm's shape; its server version says
	// RKE2). It returns the evidence, or "" when the cluster is not it.
	Marks func(ctx context.Context, c *Cluster) (string, error)
}

// Platform implements Locator.
func (l *PodLocator) Platform() string { return l.Name }

// Detect implements Locator: the marks, then the pods.
func (l *PodLocator) Detect(ctx context.Context, c *Cluster) (Detection, error) {
	var marks string
	if l.Marks != nil {
		m, err := l.Marks(ctx, c)
		if err != nil || m == "" {
			return Detection{}, err
		}
		marks = m + ", "
	}
	pods, err := l.Pods.find(ctx, c)
	if err != nil {
		return Detection{Evidence: "could not look for " + l.Pods.what()}, err
	}
	if len(pods) == 0 {
		return Detection{Evidence: marks + "no " + l.Pods.what()}, nil
	}
	noun := "pod"
	if len(pods) > 1 {
		noun = "pods"
	}
	return Detection{Looks: true, Evidence: fmt.Sprintf("%s%d %s %s in %s", marks, len(pods), noun, l.Pods.Selector, l.Pods.Namespace)}, nil
}

// Locate implements Locator.
func (l *PodLocator) Locate(ctx context.Context, c *Cluster) (*Endpoint, error) {
	t, err := l.Pods.Target(ctx, c)
	if err != nil {
		return nil, err
	}
	return l.Pods.Endpoint(c, t)
}
