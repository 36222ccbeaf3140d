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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
)

// SchedulerPodSelector selects the kube-scheduler static pods kubeadm (and
// so kind) creates. Pods named kube-scheduler-* are taken when it selects none.
const SchedulerPodSelector = "component=kube-scheduler"

// schedulerPodPrefix is the name prefix of kubeadm's scheduler pods.
const schedulerPodPrefix = "kube-scheduler-"

// SchedulerTarget is the scheduler pod whose queue is live.
type SchedulerTarget struct {
	Pod *corev1.Pod
	// LeaseHolder is Lease kube-system/kube-scheduler's holderIdentity, or
	// empty when the lease could not be read.
	LeaseHolder string
	// Candidates is how many running scheduler pods there were.
	Candidates int
}

// NoLeaderError says several scheduler pods run and the leader among them
// could not be told.
type NoLeaderError struct {
	Pods        []string
	LeaseHolder string
	// LeaseErr is why the lease could not be read, if it could not.
	LeaseErr error
}

func (e *NoLeaderError) Error() string {
	msg := fmt.Sprintf("%d kube-scheduler pods (%s) and only the leader has a live queue, but ", len(e.Pods), strings.Join(e.Pods, ", "))
	switch {
	case e.LeaseErr != nil:
		msg += fmt.Sprintf("Lease %s/%s could not be read: %v", SchedulerNamespace, SchedulerLeaseName, e.LeaseErr)
	case e.LeaseHolder == "":
		msg += fmt.Sprintf("Lease %s/%s has no holder", SchedulerNamespace, SchedulerLeaseName)
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
}

func (e *PortForwardForbiddenError) Error() string {
	return fmt.Sprintf("%s: %v", e.Step, e.Err)
}

func (e *PortForwardForbiddenError) Unwrap() error { return e.Err }

// Remedy is the Role and RoleBinding that allow the steps.
func (e *PortForwardForbiddenError) Remedy() string { return PortForwardRBAC(e.Identity) }

// DiscoverScheduler finds the kube-scheduler pod whose queue is live: the
// only running one, or with several the holder of Lease
// kube-system/kube-scheduler. It makes two API calls (three when no pod
// carries kubeadm's label).
func DiscoverScheduler(ctx context.Context, client kubernetes.Interface) (*SchedulerTarget, error) {
	pods, err := client.CoreV1().Pods(SchedulerNamespace).List(ctx, metav1.ListOptions{LabelSelector: SchedulerPodSelector})
	if err != nil {
		return nil, apiStep("listing kube-scheduler pods in "+SchedulerNamespace, err)
	}
	items := pods.Items
	if len(items) == 0 {
		all, err := client.CoreV1().Pods(SchedulerNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, apiStep("listing pods in "+SchedulerNamespace, err)
		}
		for _, p := range all.Items {
			if strings.HasPrefix(p.Name, schedulerPodPrefix) {
				items = append(items, p)
			}
		}
	}
	if len(items) == 0 {
		return nil, ErrNoSchedulerPod
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
		return nil, fmt.Errorf("no kube-scheduler pod in %s is running: %s", SchedulerNamespace, strings.Join(others, ", "))
	}
	sort.Slice(running, func(i, j int) bool { return running[i].Name < running[j].Name })

	holder, leaseErr := leaseHolder(ctx, client)
	target := &SchedulerTarget{LeaseHolder: holder, Candidates: len(running)}
	if len(running) == 1 {
		target.Pod = running[0]
		return target, nil
	}
	names := make([]string, len(running))
	for i, p := range running {
		names[i] = p.Name
	}
	if leaseErr != nil {
		if apierrors.IsForbidden(leaseErr) {
			return nil, apiStep("reading Lease "+SchedulerNamespace+"/"+SchedulerLeaseName+" to find the leader among "+strings.Join(names, ", "), leaseErr)
		}
		return nil, &NoLeaderError{Pods: names, LeaseErr: leaseErr}
	}
	if target.Pod = selectLeader(running, holder); target.Pod == nil {
		return nil, &NoLeaderError{Pods: names, LeaseHolder: holder}
	}
	return target, nil
}

func leaseHolder(ctx context.Context, client kubernetes.Interface) (string, error) {
	lease, err := client.CoordinationV1().Leases(SchedulerNamespace).Get(ctx, SchedulerLeaseName, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	if lease.Spec.HolderIdentity == nil {
		return "", nil
	}
	return *lease.Spec.HolderIdentity, nil
}

// selectLeader picks the pod the lease holder runs in. kube-scheduler's
// holderIdentity is "<hostname>_<uuid>"; the hostname is the node name, or a
// longer form of it.
func selectLeader(pods []*corev1.Pod, holder string) *corev1.Pod {
	host, _, ok := strings.Cut(holder, "_")
	if !ok || host == "" {
		return nil
	}
	short, _, _ := strings.Cut(host, ".")
	for _, match := range []func(p *corev1.Pod) bool{
		func(p *corev1.Pod) bool {
			return strings.EqualFold(p.Spec.NodeName, host) || p.Name == schedulerPodPrefix+host
		},
		func(p *corev1.Pod) bool {
			node, _, _ := strings.Cut(p.Spec.NodeName, ".")
			return strings.EqualFold(node, short)
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

// apiStep names the step an API error happened in; a 403 becomes a
// PortForwardForbiddenError, which carries its remedy.
func apiStep(step string, err error) error {
	if apierrors.IsForbidden(err) {
		return &PortForwardForbiddenError{Step: step, Err: err}
	}
	return &APIStepError{Step: step, Err: err}
}

// Forwarder opens a tunnel to a pod's port and returns the local port it
// listens on and a function that closes it.
type Forwarder func(ctx context.Context, namespace, pod string, port int) (localPort int, stop func(), err error)

// PortForwardSource finds the live kube-scheduler pod and reads its /metrics
// through a port-forward to 10259, over HTTPS with the kubeconfig's
// credentials. This works with kubeadm's --bind-address=127.0.0.1. The
// scheduler's self-signed serving certificate is not verified (ServerName
// localhost), as upstream's e2e metrics grabber does.
type PortForwardSource struct {
	client  kubernetes.Interface
	forward Forwarder
	// rt carries the kubeconfig's credentials; each scrape reaches it
	// through bound.Client for the port-forward's own local origin.
	rt   http.RoundTripper
	auth *kubeAuth
	// extra are the paths read beside /metrics (Options.ExtraPaths).
	extra map[string]string
}

// NewPortForwardSource returns a source that discovers the scheduler with
// client and forwards with forward (NewSPDYForwarder(cfg) outside tests).
func NewPortForwardSource(cfg *rest.Config, client kubernetes.Interface, forward Forwarder) (*PortForwardSource, error) {
	rt, err := credentialTransport(cfg, true, "localhost")
	if err != nil {
		return nil, err
	}
	return &PortForwardSource{client: client, forward: forward, rt: rt, auth: newKubeAuth(cfg, client)}, nil
}

// Scrape implements Source: discovery, port-forward, GET, close.
func (s *PortForwardSource) Scrape(ctx context.Context) (*Snapshot, error) {
	target, err := DiscoverScheduler(ctx, s.client)
	if err != nil {
		return nil, s.withIdentity(ctx, err)
	}
	pod := target.Pod
	where := fmt.Sprintf("%s/%s:%d", pod.Namespace, pod.Name, SchedulerSecurePort)
	if err := s.auth.precheck(ctx, "kube-scheduler "+where); err != nil {
		return nil, err
	}
	local, stop, err := s.forward(ctx, pod.Namespace, pod.Name, SchedulerSecurePort)
	if err != nil {
		if strings.Contains(err.Error(), "is forbidden") {
			return nil, s.withIdentity(ctx, &PortForwardForbiddenError{Step: "port-forward to " + where, Err: err})
		}
		var te *TransportError
		if errors.As(err, &te) {
			return nil, err
		}
		return nil, classifyTransportError("kube-scheduler "+where+" through a port-forward", err)
	}
	defer stop()
	base := fmt.Sprintf("https://127.0.0.1:%d", local)
	hc := bound.Client(bound.Origin{Scheme: "https", Host: "127.0.0.1", Port: strconv.Itoa(local)}, s.rt)
	defer hc.CloseIdleConnections()
	snap, err := scrapeHTTP(ctx, hc, base+MetricsPath, "kube-scheduler "+where+" (port-forward)")
	if err != nil {
		return nil, s.auth.annotate(ctx, err)
	}
	snap.Origin = Origin{
		Kind:        OriginPortForward,
		Address:     where,
		Pod:         pod.Namespace + "/" + pod.Name,
		Node:        pod.Spec.NodeName,
		LeaseHolder: target.LeaseHolder,
		Candidates:  target.Candidates,
	}
	if len(s.extra) > 0 {
		snap.Extra = readExtra(ctx, hc, base, s.extra)
	}
	return snap, nil
}

func (s *PortForwardSource) withIdentity(ctx context.Context, err error) error {
	var pf *PortForwardForbiddenError
	if s.auth != nil && errors.As(err, &pf) && pf.Identity == nil {
		pf.Identity = s.auth.identity(ctx)
	}
	return err
}

func (s *PortForwardSource) String() string {
	return fmt.Sprintf("kube-scheduler in %s (port-forward to %d)", SchedulerNamespace, SchedulerSecurePort)
}
