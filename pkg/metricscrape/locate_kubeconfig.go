package metricscrape

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// KubeconfigExtension reads the scheduler a control plane wrote into the
// kubeconfig (KubeconfigExtensionName: schedq-perf's embedded control
// plane): no API call.
var KubeconfigExtension Locator = kubeconfigLocator{}

type kubeconfigLocator struct{}

func (kubeconfigLocator) Platform() string { return "embedded" }

func (kubeconfigLocator) endpoint(c *Cluster) (*SchedulerEndpoint, error) {
	if c.Kubeconfig == nil || c.Config == nil {
		return nil, nil
	}
	return EndpointFromKubeconfig(*c.Kubeconfig, c.Config.Host)
}

func (l kubeconfigLocator) Detect(_ context.Context, c *Cluster) (Detection, error) {
	ep, err := l.endpoint(c)
	switch {
	case err != nil:
		return Detection{}, fmt.Errorf("kubeconfig extension %s: %w", KubeconfigExtensionName, err)
	case ep == nil:
		return Detection{Evidence: "no " + KubeconfigExtensionName + " extension in the kubeconfig"}, nil
	}
	return Detection{Looks: true, Evidence: "the kubeconfig's cluster carries the " + KubeconfigExtensionName + " extension"}, nil
}

func (l kubeconfigLocator) Locate(_ context.Context, c *Cluster) (*Endpoint, error) {
	sep, err := l.endpoint(c)
	if err != nil || sep == nil {
		return nil, fmt.Errorf("kubeconfig extension %s: %v: %w", KubeconfigExtensionName, err, ErrNotHere)
	}
	s, err := NewURLSource(sep.MetricsURL, c.Config, sep.InsecureSkipTLSVerify || c.Config.Insecure)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig extension %s: %w", KubeconfigExtensionName, err)
	}
	u, _ := url.Parse(s.url)
	ep := &Endpoint{
		Origin:      Origin{Kind: OriginKubeconfig, Address: s.url},
		Target:      s.url,
		MetricsPath: u.Path,
		Open: func(context.Context) (string, *http.Client, func(), error) {
			return u.Scheme + "://" + u.Host, s.client, nil, nil
		},
	}
	if s.credentials {
		ep.auth = c.auth
	}
	return ep, nil
}
