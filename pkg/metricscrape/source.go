package metricscrape

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/common/expfmt"
	"k8s.io/client-go/rest"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
)

// Source is somewhere kube-scheduler's metrics can be read from.
type Source interface {
	// Scrape reads the metrics once. The context's deadline bounds the
	// whole read, discovery and port-forward included.
	Scrape(ctx context.Context) (*Snapshot, error)
	// String names the source for messages.
	String() string
}

// Historian is a Source that can also answer for a past instant (a
// Prometheus server can), so rates need no waiting.
type Historian interface {
	Source
	ScrapeAt(ctx context.Context, t time.Time) (*Snapshot, error)
}

// OriginKind says which kind of source a Snapshot came from.
type OriginKind string

const (
	OriginURL         OriginKind = "url"
	OriginPrometheus  OriginKind = "prometheus"
	OriginKubeconfig  OriginKind = "kubeconfig-extension"
	OriginPortForward OriginKind = "port-forward"
	// OriginAPIServer is a path of the API server that serves the
	// scheduler's metrics (EKS's metrics API).
	OriginAPIServer OriginKind = "apiserver"
	OriginFile      OriginKind = "file"
)

// Origin says where a Snapshot came from: the scheduler's identity as far as
// the source knows it.
type Origin struct {
	Kind OriginKind `json:"kind"`
	// Address is the URL, file or Prometheus server read.
	Address string `json:"address"`
	// Pod is namespace/name of the scheduler pod (port-forward).
	Pod string `json:"pod,omitempty"`
	// Node is the node the scheduler pod runs on (port-forward).
	Node string `json:"node,omitempty"`
	// Platform is the platform discovery found the scheduler on (kubeadm,
	// EKS, OpenShift, …); empty when a flag named the source.
	Platform string `json:"platform,omitempty"`
	// Lease is namespace/name of the Lease the schedulers elect their
	// leader with (port-forward).
	Lease string `json:"lease,omitempty"`
	// LeaseHolder is the Lease's holderIdentity, when it was read.
	LeaseHolder string `json:"leaseHolder,omitempty"`
	// Standby are the other running scheduler pods (namespace/name) of
	// the same Lease: replicas waiting to lead, whose queues are not live.
	Standby []string `json:"standby,omitempty"`
	// Profiles are the scheduler names the profiles of the scheduler read
	// serve, from its /configz, when it was read (ProfileSource).
	Profiles []string `json:"profiles,omitempty"`
	// Others are the other kube-schedulers looked at to find the one that
	// serves the scheduler name asked for, with their profiles.
	Others []SchedulerSeen `json:"others,omitempty"`
	// Candidates is how many scheduler pods or Prometheus targets there were
	// to choose from.
	Candidates int `json:"candidates,omitempty"`
	// Target is the label set of the Prometheus target that was chosen.
	Target string `json:"target,omitempty"`
}

// maxExpositionBytes bounds a metrics body; kube-scheduler's is a few hundred KiB.
const maxExpositionBytes = 64 << 20

// acceptHeader asks for the text format, the one kube-scheduler always speaks.
const acceptHeader = `text/plain;version=0.0.4`

// scrapeHTTP GETs url with client and parses the exposition. target names
// the endpoint in errors.
func scrapeHTTP(ctx context.Context, client *http.Client, url, target string) (*Snapshot, error) {
	data, err := fetch(ctx, client, url, target)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	snap, err := ParseText(target, data)
	if err != nil {
		return nil, err
	}
	snap.Time = now
	return snap, nil
}

// fetch GETs url and returns the body of a 200 text exposition.
func fetch(ctx context.Context, client *http.Client, url, target string) ([]byte, error) {
	return fetchAccept(ctx, client, url, target, acceptHeader, false)
}

// fetchAccept is fetch with another Accept header, for a path in front of
// the scheduler that wants its own (EKS's); with anyType the answer's
// Content-Type is not checked and the body is parsed as text whatever it
// says.
func fetchAccept(ctx context.Context, client *http.Client, url, target, accept string, anyType bool) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	resp, err := client.Do(req)
	if err != nil {
		return nil, classifyTransportError(target, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := bound.ReadAll(resp.Body, 4<<10, target)
		return nil, statusError(target, resp, body)
	}
	if f := expfmt.ResponseFormat(resp.Header); !anyType && f.FormatType() != expfmt.TypeTextPlain {
		return nil, fmt.Errorf("%s: not a Prometheus text exposition (Content-Type %q): this is not a kube-scheduler's /metrics",
			target, resp.Header.Get("Content-Type"))
	}
	data, err := readAllLimited(resp.Body, maxExpositionBytes, target)
	if err != nil {
		if bound.IsTooLarge(err) {
			return nil, err
		}
		return nil, classifyTransportError(target, err)
	}
	return data, nil
}

// CredentialConfig keeps the authentication of cfg (client certificate,
// token, exec or auth-provider plugin, basic auth) and sets the TLS trust for
// an endpoint that is not the API server. Impersonation is dropped: the
// scheduler does not honour it (see CanGetMetrics). A nil cfg gives none.
func CredentialConfig(cfg *rest.Config, insecure bool, serverName string) *rest.Config {
	if cfg == nil {
		cfg = &rest.Config{}
	}
	out := &rest.Config{
		Username:            cfg.Username,
		Password:            cfg.Password,
		BearerToken:         cfg.BearerToken,
		BearerTokenFile:     cfg.BearerTokenFile,
		AuthProvider:        cfg.AuthProvider,
		AuthConfigPersister: cfg.AuthConfigPersister,
		ExecProvider:        cfg.ExecProvider,
		Proxy:               cfg.Proxy,
		TLSClientConfig: rest.TLSClientConfig{
			CertFile:   cfg.CertFile,
			KeyFile:    cfg.KeyFile,
			CertData:   cfg.CertData,
			KeyData:    cfg.KeyData,
			ServerName: serverName,
			Insecure:   insecure || cfg.Insecure,
		},
	}
	if !out.Insecure {
		out.CAFile, out.CAData = cfg.CAFile, cfg.CAData
	}
	return out
}

// credentialTransport authenticates with cfg's credentials. It is meant
// for one origin: give it to bound.Client with the origin it may reach.
func credentialTransport(cfg *rest.Config, insecure bool, serverName string) (http.RoundTripper, error) {
	rt, err := rest.TransportFor(CredentialConfig(cfg, insecure, serverName))
	if err != nil {
		return nil, fmt.Errorf("kubeconfig credentials: %w", err)
	}
	return rt, nil
}

// maxExtraBytes bounds an answer of another path than /metrics (/configz,
// /flagz: a few KiB).
const maxExtraBytes = 4 << 20

// Extra is the answer of one path read beside /metrics.
type Extra struct {
	Body        []byte `json:"-"`
	ContentType string `json:"contentType,omitempty"`
	// Status is the HTTP status; Err says why there is no body (a 403, a
	// 404 where the scheduler does not serve the path, a timeout).
	Status int   `json:"status,omitempty"`
	Err    error `json:"-"`
}

// readExtra GETs each path at base with client, within ctx, with the
// Accept header paths gives it.
func readExtra(ctx context.Context, client *http.Client, base string, paths map[string]string) map[string]*Extra {
	out := make(map[string]*Extra, len(paths))
	for p, accept := range paths {
		out[p] = getExtra(ctx, client, base+p, p, accept)
	}
	return out
}

func getExtra(ctx context.Context, client *http.Client, url, target, accept string) *Extra {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return &Extra{Err: err}
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := client.Do(req)
	if err != nil {
		return &Extra{Err: classifyTransportError(target, err)}
	}
	defer resp.Body.Close()
	e := &Extra{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type")}
	if resp.StatusCode != http.StatusOK {
		body, _ := bound.ReadAll(resp.Body, 4<<10, target)
		e.Err = statusError(target, resp, body)
		return e
	}
	if e.Body, err = bound.ReadAll(resp.Body, maxExtraBytes, target); err != nil {
		e.Body, e.Err = nil, err
		if !bound.IsTooLarge(err) {
			e.Err = classifyTransportError(target, err)
		}
	}
	return e
}
