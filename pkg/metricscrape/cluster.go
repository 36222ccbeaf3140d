package metricscrape

import (
	"context"
	"errors"
	"net/http"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Cluster is what the locators read about one cluster. Each question is
// asked of the API server once: what does not change while a command runs
// (the server's version, an API group, a node's labels) once for the
// command, pod lists and leases once per scrape (a new leader, a restarted
// pod), so that locators that ask the same question share one call.
type Cluster struct {
	// Config is the kubeconfig's client configuration, Client its
	// clientset; Forward opens port-forwards (NewSPDYForwarder(Config)
	// outside tests).
	Config  *rest.Config
	Client  kubernetes.Interface
	Forward Forwarder
	// Kubeconfig is the raw kubeconfig, for the scheduler extension; nil
	// when there is none.
	Kubeconfig *clientcmdapi.Config

	auth *kubeAuth

	mu      sync.Mutex
	version map[struct{}]*answer[string]
	groups  map[string]*answer[*metav1.APIResourceList]
	node    map[struct{}]*answer[*corev1.Node]
	// Per scrape.
	pods   map[[2]string]*answer[[]corev1.Pod]
	leases map[[2]string]*answer[string]
}

type answer[T any] struct {
	v   T
	err error
}

// NewCluster returns the cluster of cfg, read with client.
func NewCluster(cfg *rest.Config, client kubernetes.Interface, forward Forwarder) *Cluster {
	return &Cluster{Config: cfg, Client: client, Forward: forward, auth: newKubeAuth(cfg, client)}
}

// refresh forgets what a new scrape must read again.
func (c *Cluster) refresh() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pods, c.leases = nil, nil
}

// cached returns the kept answer of key in m, or asks with f and keeps it.
func cached[K comparable, T any](c *Cluster, m *map[K]*answer[T], key K, f func() (T, error)) (T, error) {
	c.mu.Lock()
	if a, ok := (*m)[key]; ok {
		c.mu.Unlock()
		return a.v, a.err
	}
	c.mu.Unlock()
	v, err := f()
	c.mu.Lock()
	defer c.mu.Unlock()
	if *m == nil {
		*m = map[K]*answer[T]{}
	}
	// A call cut short by its context is not an answer.
	if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		(*m)[key] = &answer[T]{v, err}
	}
	return v, err
}

// ServerVersion is the API server's gitVersion (GET /version).
func (c *Cluster) ServerVersion(ctx context.Context) (string, error) {
	return cached(c, &c.version, struct{}{}, func() (string, error) {
		info, err := discovery.ToDiscoveryInterfaceWithContext(c.Client.Discovery()).ServerVersionWithContext(ctx)
		if err != nil {
			return "", err
		}
		return info.GitVersion, nil
	})
}

// GroupVersion is the API server's resource list of groupVersion
// ("metrics.eks.amazonaws.com/v1"), or nil when the group is not served:
// one GET of /apis/<group>/<version>, not the whole discovery.
func (c *Cluster) GroupVersion(ctx context.Context, groupVersion string) (*metav1.APIResourceList, error) {
	return cached(c, &c.groups, groupVersion, func() (*metav1.APIResourceList, error) {
		l, err := discovery.ToDiscoveryInterfaceWithContext(c.Client.Discovery()).ServerResourcesForGroupVersionWithContext(ctx, groupVersion)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return l, err
	})
}

// Node is one node of the cluster, for the labels a platform puts on
// every node; nil when there is none. One list call with limit 1.
func (c *Cluster) Node(ctx context.Context) (*corev1.Node, error) {
	return cached(c, &c.node, struct{}{}, func() (*corev1.Node, error) {
		l, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil || len(l.Items) == 0 {
			return nil, err
		}
		return &l.Items[0], nil
	})
}

// Pods lists the pods of namespace that selector selects (every pod when
// it is empty), once per scrape.
func (c *Cluster) Pods(ctx context.Context, namespace, selector string) ([]corev1.Pod, error) {
	return cached(c, &c.pods, [2]string{namespace, selector}, func() ([]corev1.Pod, error) {
		l, err := c.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return nil, err
		}
		return l.Items, nil
	})
}

// LeaseHolder is the holderIdentity of Lease namespace/name, or "" when it
// has none, once per scrape.
func (c *Cluster) LeaseHolder(ctx context.Context, namespace, name string) (string, error) {
	return cached(c, &c.leases, [2]string{namespace, name}, func() (string, error) {
		lease, err := c.Client.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		if lease.Spec.HolderIdentity == nil {
			return "", nil
		}
		return *lease.Spec.HolderIdentity, nil
	})
}

// APIClient is an HTTP client for the API server itself, with the
// kubeconfig's credentials and impersonation.
func (c *Cluster) APIClient() (*http.Client, error) {
	return rest.HTTPClientFor(c.Config)
}

// withIdentity names the identity in a PortForwardForbiddenError.
func (c *Cluster) withIdentity(ctx context.Context, err error) error {
	var pf *PortForwardForbiddenError
	if c.auth != nil && errors.As(err, &pf) && pf.Identity == nil {
		pf.Identity = c.auth.identity(ctx)
	}
	return err
}
