package metricscrape

import (
	"errors"
	"fmt"
	"io"
	"maps"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
)

// Options chooses a Source. At most one of MetricsURL, PrometheusURL and
// MetricsFile may be set; with none, the kubeconfig decides: its scheduler
// extension if the cluster has one, else discovery and port-forward.
type Options struct {
	// MetricsURL is a scheduler's /metrics (http, or https with the
	// kubeconfig's credentials).
	MetricsURL string
	// PrometheusURL is a Prometheus server that scrapes the scheduler;
	// PrometheusSelector narrows it to one scheduler (label matchers).
	PrometheusURL      string
	PrometheusSelector string
	// PrometheusBearerTokenFile, PrometheusHeaders and
	// PrometheusCertificateAuthority are the Prometheus server's own
	// credentials and CA (PrometheusAccess).
	PrometheusBearerTokenFile      string
	PrometheusHeaders              []bound.Header
	PrometheusCertificateAuthority string
	// MetricsFile is a saved text exposition, or "-" for Stdin.
	MetricsFile string
	// Stdin is read for MetricsFile "-".
	Stdin io.Reader

	// InsecureSkipTLSVerify and CertificateAuthority are kubectl's TLS
	// flags, for a URL read without a kubeconfig (with one, KubeConfig
	// carries them); InsecureSkipTLSVerify applies to PrometheusURL too.
	InsecureSkipTLSVerify bool
	CertificateAuthority  string

	// KubeConfig is the user's kubeconfig with kubectl's flags applied. It
	// may be nil, or fail to load, when a URL or a file is named.
	KubeConfig clientcmd.ClientConfig
	// NewClient builds the API client (kubernetes.NewForConfig when nil).
	NewClient func(*rest.Config) (kubernetes.Interface, error)
	// NewForwarder builds the port-forwarder (NewSPDYForwarder when nil).
	NewForwarder func(*rest.Config) Forwarder

	// ExtraPaths are other paths of the scheduler's endpoint to read at each
	// scrape, beside /metrics (explain reads /configz and /flagz), each with
	// the Accept header to send: their answers are in Snapshot.Extra.
	// Sources that reach no scheduler endpoint (a file, Prometheus) ignore
	// them.
	ExtraPaths map[string]string

	// SchedulerName is the scheduler name (a profile's) whose scheduler
	// discovery reads: the cluster's own when one of its profiles has it,
	// else another kube-scheduler whose profiles do (ProfileSource).
	// Empty: the cluster's own. A source named by a flag is read as named.
	SchedulerName string
	// SchedulerNamespace is one more namespace to look for that other
	// kube-scheduler in, beside kube-system and the cluster's own
	// scheduler's (--scheduler-namespace): the user's to trust, since the
	// search sends the kubeconfig's credentials to the pods it finds.
	SchedulerNamespace string
}

// Validate checks that at most one source is named.
func (o *Options) Validate() error {
	var named []string
	for flag, v := range map[string]string{"--metrics-url": o.MetricsURL, "--prometheus-url": o.PrometheusURL, "--metrics-file": o.MetricsFile} {
		if v != "" {
			named = append(named, flag)
		}
	}
	if len(named) > 1 {
		return fmt.Errorf("--metrics-url, --prometheus-url and --metrics-file name different sources: give one of them")
	}
	if o.PrometheusURL == "" {
		for _, f := range []struct {
			flag string
			set  bool
		}{
			{"--prometheus-selector", o.PrometheusSelector != ""},
			{"--prometheus-bearer-token-file", o.PrometheusBearerTokenFile != ""},
			{"--prometheus-header", len(o.PrometheusHeaders) > 0},
			{"--prometheus-certificate-authority", o.PrometheusCertificateAuthority != ""},
		} {
			if f.set {
				return fmt.Errorf("%s needs --prometheus-url", f.flag)
			}
		}
	}
	if ns := o.SchedulerNamespace; ns != "" {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fmt.Errorf("--scheduler-namespace=%s: not a namespace name: %s", ns, errs[0])
		}
		if len(named) > 0 {
			return fmt.Errorf("--scheduler-namespace says where discovery looks; %s names the source already", named[0])
		}
	}
	return nil
}

// Resolve returns the Source the options name, in the documented order:
// --metrics-url, --prometheus-url, --metrics-file, else discovery through
// the platforms' locators (DefaultLocators), the kubeconfig's scheduler
// extension first.
func Resolve(o Options) (Source, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.MetricsFile != "" {
		return &FileSource{Path: o.MetricsFile, Stdin: o.Stdin}, nil
	}
	cfg, cfgErr := o.restConfig()
	switch {
	case o.MetricsURL != "" && cfg == nil:
		s, err := NewURLSourceTLS(o.MetricsURL, o.InsecureSkipTLSVerify, o.CertificateAuthority)
		if err != nil {
			return nil, err
		}
		s.extra = o.ExtraPaths
		return s, nil
	case o.MetricsURL != "":
		s, err := NewURLSource(o.MetricsURL, cfg, cfg != nil && cfg.Insecure)
		if err != nil {
			return nil, err
		}
		s.extra = o.ExtraPaths
		return s.withAuth(o.auth(cfg)), nil
	case o.PrometheusURL != "":
		return NewPrometheusSource(PrometheusAccess{
			URL: o.PrometheusURL, Selector: o.PrometheusSelector,
			BearerTokenFile: o.PrometheusBearerTokenFile, Headers: o.PrometheusHeaders,
			CertificateAuthority: o.PrometheusCertificateAuthority, InsecureSkipTLSVerify: o.InsecureSkipTLSVerify,
		}, cfg)
	}
	if cfgErr != nil {
		return nil, cfgErr
	}

	raw, err := o.KubeConfig.RawConfig()
	if err != nil {
		return nil, err
	}
	// A broken extension is the user's to fix, before any API call.
	if _, err := EndpointFromKubeconfig(raw, cfg.Host); err != nil {
		return nil, err
	}
	client, err := o.client(cfg)
	if err != nil {
		return nil, err
	}
	newForwarder := o.NewForwarder
	if newForwarder == nil {
		newForwarder = NewSPDYForwarder
	}
	c := NewCluster(cfg, client, newForwarder(cfg))
	c.Kubeconfig = &raw
	d := NewDiscovery(c)
	d.extra = maps.Clone(o.ExtraPaths)
	return NewProfileSource(d, o.SchedulerName, o.SchedulerNamespace), nil
}

// ErrNoKubeconfig is returned when no source is named and there is no
// kubeconfig to find the scheduler with.
var ErrNoKubeconfig = errors.New("no kubeconfig to find the scheduler with")

func (o *Options) restConfig() (*rest.Config, error) {
	if o.KubeConfig == nil {
		return nil, ErrNoKubeconfig
	}
	cfg, err := o.KubeConfig.ClientConfig()
	if err != nil {
		return nil, err
	}
	bound.APIConfig(cfg)
	// kubectl's flags default the server to localhost:8080, so an empty
	// kubeconfig loads, without the TLS flags: it is no kubeconfig.
	if cfg.Host == clientcmd.ClusterDefaults.Server {
		if raw, err := o.KubeConfig.RawConfig(); err == nil && clientcmdapi.IsConfigEmpty(&raw) {
			return nil, ErrNoKubeconfig
		}
	}
	return cfg, nil
}

func (o *Options) client(cfg *rest.Config) (kubernetes.Interface, error) {
	if o.NewClient != nil {
		return o.NewClient(cfg)
	}
	return kubernetes.NewForConfig(cfg)
}

// auth is the API-server side of a scrape with credentials, or nil.
func (o *Options) auth(cfg *rest.Config) *kubeAuth {
	if cfg == nil {
		return nil
	}
	client, err := o.client(cfg)
	if err != nil {
		return nil
	}
	return newKubeAuth(cfg, client)
}
