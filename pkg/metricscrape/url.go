package metricscrape

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
)

// URLSource reads a scheduler's /metrics at a URL. Over https it
// authenticates with the kubeconfig's credentials; over http it sends none.
type URLSource struct {
	url    string
	client *http.Client
	origin Origin
	auth   *kubeAuth
	// credentials is set when the client sends the kubeconfig's credentials.
	credentials bool
	// extra are the paths read beside /metrics (Options.ExtraPaths).
	extra map[string]string
}

// NewURLSource returns a source for rawURL ("/metrics" is added when the URL
// has no path). cfg supplies the credentials and the CA for https and may be
// nil; insecure skips verification of the scheduler's serving certificate.
func NewURLSource(rawURL string, cfg *rest.Config, insecure bool) (*URLSource, error) {
	u, err := normalizeURL(rawURL)
	if err != nil {
		return nil, err
	}
	s := &URLSource{url: u.String(), origin: Origin{Kind: OriginURL, Address: u.String()}}
	switch {
	case u.Scheme == "http":
		s.client = &http.Client{Transport: http.DefaultTransport}
	case cfg != nil:
		if s.client, err = credentialClient(cfg, insecure, ""); err != nil {
			return nil, err
		}
		s.credentials = true
	default:
		if s.client, err = credentialClient(&rest.Config{}, insecure, ""); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// NewURLSourceTLS returns a source for rawURL without a kubeconfig: no
// credentials, the serving certificate checked against caFile (the system's
// roots when empty) unless insecure.
func NewURLSourceTLS(rawURL string, insecure bool, caFile string) (*URLSource, error) {
	u, err := normalizeURL(rawURL)
	if err != nil {
		return nil, err
	}
	s := &URLSource{url: u.String(), origin: Origin{Kind: OriginURL, Address: u.String()}}
	if u.Scheme == "http" {
		s.client = &http.Client{Transport: http.DefaultTransport}
		return s, nil
	}
	rt, err := rest.TransportFor(CredentialConfig(&rest.Config{TLSClientConfig: rest.TLSClientConfig{CAFile: caFile}}, insecure, ""))
	if err != nil {
		return nil, fmt.Errorf("--certificate-authority %s: %w", caFile, err)
	}
	s.client = &http.Client{Transport: rt}
	return s, nil
}

// normalizeURL checks that rawURL is an absolute http(s) URL and adds /metrics.
func normalizeURL(rawURL string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("metrics URL %q: %w", rawURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("metrics URL %q: want http:// or https://", rawURL)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("metrics URL %q has no host", rawURL)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = MetricsPath
	}
	return u, nil
}

// withAuth makes the source check access for an impersonated identity
// before each scrape and name the identity on a 403.
func (s *URLSource) withAuth(a *kubeAuth) *URLSource {
	if s.credentials {
		s.auth = a
	}
	return s
}

// Scrape implements Source.
func (s *URLSource) Scrape(ctx context.Context) (*Snapshot, error) {
	if err := s.auth.precheck(ctx, s.url); err != nil {
		return nil, err
	}
	snap, err := scrapeHTTP(ctx, s.client, s.url, s.url)
	if err != nil {
		return nil, s.auth.annotate(ctx, err)
	}
	snap.Origin = s.origin
	if len(s.extra) > 0 {
		u, _ := url.Parse(s.url)
		snap.Extra = readExtra(ctx, s.client, u.Scheme+"://"+u.Host, s.extra)
	}
	return snap, nil
}

func (s *URLSource) String() string {
	if s.origin.Kind == OriginKubeconfig {
		return s.url + " (from the kubeconfig)"
	}
	return s.url
}

// FileSource reads a saved text exposition.
type FileSource struct {
	// Path is the file, or "-" for Stdin.
	Path string
	// Stdin is read when Path is "-" (os.Stdin when nil).
	Stdin io.Reader
}

// Scrape implements Source. The snapshot's time is the file's modification
// time, or now for stdin.
func (s *FileSource) Scrape(ctx context.Context) (*Snapshot, error) {
	if s.Path == "-" {
		return s.scrapeStdin()
	}
	f, err := os.Open(s.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data, err := readAllLimited(f, maxExpositionBytes, s.Path)
	if err != nil {
		if bound.IsTooLarge(err) {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", s.Path, err)
	}
	snap, err := ParseText(s.Path, data)
	if err != nil {
		return nil, err
	}
	snap.Time = st.ModTime()
	snap.Origin = Origin{Kind: OriginFile, Address: s.Path}
	return snap, nil
}

func (s *FileSource) scrapeStdin() (*Snapshot, error) {
	in := s.Stdin
	if in == nil {
		in = os.Stdin
	}
	data, err := readAllLimited(in, maxExpositionBytes, s.String())
	if err != nil {
		if bound.IsTooLarge(err) {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", s, err)
	}
	snap, err := ParseText(s.String(), data)
	if err != nil {
		return nil, err
	}
	snap.Time = time.Now()
	snap.Origin = Origin{Kind: OriginFile, Address: s.String()}
	return snap, nil
}

func (s *FileSource) String() string {
	if s.Path == "-" {
		return "stdin"
	}
	return s.Path
}

// kubeAuth ties a scrape to the API server: it finds out who the
// credentials belong to, and answers for an impersonated identity. A nil
// *kubeAuth does nothing.
type kubeAuth struct {
	client        kubernetes.Interface
	impersonating bool
}

func newKubeAuth(cfg *rest.Config, client kubernetes.Interface) *kubeAuth {
	if cfg == nil || client == nil {
		return nil
	}
	imp := cfg.Impersonate
	return &kubeAuth{client: client, impersonating: imp.UserName != "" || imp.UID != "" || len(imp.Groups) > 0}
}

// precheck refuses early when an impersonated identity may not get /metrics.
func (a *kubeAuth) precheck(ctx context.Context, target string) error {
	if a == nil || !a.impersonating {
		return nil
	}
	ok, err := CanGetMetrics(ctx, a.client)
	if err != nil {
		return fmt.Errorf("checking whether the impersonated identity may get %s: %w", MetricsPath, err)
	}
	if ok {
		return nil
	}
	fe := &ForbiddenError{Target: target, Impersonated: true}
	fe.Identity = a.identity(ctx)
	return fe
}

// annotate names the identity in a ForbiddenError.
func (a *kubeAuth) annotate(ctx context.Context, err error) error {
	var fe *ForbiddenError
	if a == nil || !errors.As(err, &fe) || fe.Identity != nil {
		return err
	}
	fe.Identity = a.identity(ctx)
	return err
}

func (a *kubeAuth) identity(ctx context.Context) *Identity {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	id, err := WhoAmI(ctx, a.client)
	if err != nil {
		return nil
	}
	return id
}
