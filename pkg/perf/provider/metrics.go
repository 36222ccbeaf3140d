package provider

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/collect"
)

// maxExposition bounds a metrics body.
const maxExposition = 64 << 20

// HTTPReader reads a scheduler's /metrics over HTTP(S): all families, for
// the runner (metricscrape's sources keep only the queue's).
type HTTPReader struct {
	URL    string
	Client *http.Client
}

// NewHTTPReader returns a reader of url that authenticates with cfg's
// credentials (nil: none), sent to url's origin only; insecure skips
// verification of the scheduler's serving certificate, whose name rarely
// matches (upstream's metrics grabber does the same).
func NewHTTPReader(url string, cfg *rest.Config, insecure bool, serverName string) (*HTTPReader, error) {
	origin, err := bound.ParseOrigin(url)
	if err != nil {
		return nil, fmt.Errorf("metrics URL: %w", err)
	}
	rt, err := rest.TransportFor(metricscrape.CredentialConfig(cfg, insecure, serverName))
	if err != nil {
		return nil, fmt.Errorf("metrics credentials: %w", err)
	}
	return &HTTPReader{URL: url, Client: metricsClient(origin, rt)}, nil
}

// metricsClient is the client of one scheduler endpoint: credentials to
// its origin only, each read bounded.
func metricsClient(origin bound.Origin, rt http.RoundTripper) *http.Client {
	c := bound.Client(origin, rt)
	c.Timeout = 30 * time.Second
	return c
}

// ReadMetrics implements runner.MetricsReader.
func (r *HTTPReader) ReadMetrics(ctx context.Context) (collect.Families, error) {
	return fetchFamilies(ctx, r.Client, r.URL)
}

func (r *HTTPReader) String() string { return r.URL }

func fetchFamilies(ctx context.Context, client *http.Client, url string) (collect.Families, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := bound.ReadAll(resp.Body, 512, url)
		return nil, fmt.Errorf("GET %s: %s: %q", url, resp.Status, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bound.NewReader(resp.Body, maxExposition, "GET "+url))
	if bound.IsTooLarge(err) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	return collect.Families(fams), nil
}

// PortForwardReader reads the live kube-scheduler's /metrics through a
// port-forward to its pod's port 10259 (kubeadm binds it to 127.0.0.1),
// with the kubeconfig's credentials. The tunnel is opened at the first read
// and reopened after a failure.
type PortForwardReader struct {
	client  kubernetes.Interface
	forward metricscrape.Forwarder
	// rt carries the credentials; http reaches it for the open tunnel's
	// local origin only.
	rt   http.RoundTripper
	http *http.Client

	mu     sync.Mutex
	local  int
	target string
	stop   func()
}

// NewPortForwardReader returns a reader for the cluster of cfg.
func NewPortForwardReader(cfg *rest.Config, client kubernetes.Interface) (*PortForwardReader, error) {
	rt, err := rest.TransportFor(metricscrape.CredentialConfig(cfg, true, "localhost"))
	if err != nil {
		return nil, fmt.Errorf("metrics credentials: %w", err)
	}
	return &PortForwardReader{
		client:  client,
		forward: metricscrape.NewSPDYForwarder(cfg),
		rt:      rt,
	}, nil
}

// ReadMetrics implements runner.MetricsReader.
func (r *PortForwardReader) ReadMetrics(ctx context.Context) (collect.Families, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.local == 0 {
		t, err := metricscrape.DiscoverScheduler(ctx, r.client)
		if err != nil {
			return nil, err
		}
		local, stop, err := r.forward(context.Background(), t.Pod.Namespace, t.Pod.Name, metricscrape.SchedulerSecurePort)
		if err != nil {
			return nil, fmt.Errorf("port-forward to %s/%s:%d: %w", t.Pod.Namespace, t.Pod.Name, metricscrape.SchedulerSecurePort, err)
		}
		r.local, r.stop, r.target = local, stop, t.Pod.Namespace+"/"+t.Pod.Name
		r.http = metricsClient(bound.Origin{Scheme: "https", Host: "127.0.0.1", Port: strconv.Itoa(local)}, r.rt)
	}
	f, err := fetchFamilies(ctx, r.http, fmt.Sprintf("https://127.0.0.1:%d%s", r.local, metricscrape.MetricsPath))
	if err != nil {
		r.closeLocked()
		return nil, fmt.Errorf("kube-scheduler %s (port-forward): %w", r.target, err)
	}
	return f, nil
}

func (r *PortForwardReader) String() string {
	return fmt.Sprintf("kube-scheduler in %s (port-forward to %d)", metricscrape.SchedulerNamespace, metricscrape.SchedulerSecurePort)
}

// Close closes the tunnel.
func (r *PortForwardReader) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closeLocked()
}

func (r *PortForwardReader) closeLocked() {
	if r.stop != nil {
		r.stop()
	}
	r.stop, r.local = nil, 0
}
