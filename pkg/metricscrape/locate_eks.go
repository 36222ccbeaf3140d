package metricscrape

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/client-go/rest"
)

// EKS reads the scheduler's metrics where Amazon EKS (Kubernetes 1.28 and
// later) serves them: through the API server, at
// /apis/metrics.eks.amazonaws.com/v1/ksh/container/metrics, an aggregated
// API (APIService v1.metrics.eks.amazonaws.com) whose RBAC is get on
// resource ksh/metrics in API group metrics.eks.amazonaws.com. The
// scheduler itself runs out of sight; the path serves its metrics only, not
// /configz or /flagz ("Fetch control plane raw metrics in Prometheus
// format", EKS user guide).
var EKS Locator = eksLocator{}

// The EKS metrics API.
const (
	EKSMetricsGroup        = "metrics.eks.amazonaws.com"
	EKSMetricsGroupVersion = EKSMetricsGroup + "/v1"
	// EKSSchedulerMetricsPath is kube-scheduler's metrics; "ksh" is the
	// resource, "container" its name, "metrics" the subresource.
	EKSSchedulerMetricsPath = "/apis/" + EKSMetricsGroupVersion + "/ksh/container/metrics"
	// EKSSchedulerMetricsResource is what RBAC names.
	EKSSchedulerMetricsResource = "ksh/metrics"
)

// eksAccept is what `kubectl get --raw` sends, the way EKS documents. The
// path answers 406 Not Acceptable to an Accept header that names only
// Prometheus's formats (text/plain, application/openmetrics-text;
// aws/containers-roadmap#2501); `*/*` is accepted and the answer is the
// text exposition.
const eksAccept = "application/json, */*"

type eksLocator struct{}

func (eksLocator) Platform() string { return "EKS" }

// Detect asks for the metrics API's group version (one GET); a server
// version of EKS's (v1.27.16-eks-a18cd3a) without it is EKS before 1.28.
func (eksLocator) Detect(ctx context.Context, c *Cluster) (Detection, error) {
	l, err := c.GroupVersion(ctx, EKSMetricsGroupVersion)
	if err != nil {
		return Detection{Evidence: "could not ask for API group " + EKSMetricsGroupVersion}, err
	}
	if l != nil {
		return Detection{Looks: true, Evidence: "API group " + EKSMetricsGroupVersion + " is served"}, nil
	}
	if v, err := c.ServerVersion(ctx); err == nil && strings.Contains(v, "-eks-") {
		return Detection{Looks: true, Evidence: "server version " + v + ", API group " + EKSMetricsGroupVersion + " not served"}, nil
	}
	return Detection{Evidence: "API group " + EKSMetricsGroupVersion + " not served"}, nil
}

func (eksLocator) Locate(ctx context.Context, c *Cluster) (*Endpoint, error) {
	l, err := c.GroupVersion(ctx, EKSMetricsGroupVersion)
	if err != nil {
		return nil, err
	}
	if l == nil {
		v, _ := c.ServerVersion(ctx)
		return nil, &UnreachableError{
			Platform: "EKS", Evidence: "server version " + v,
			Why:    "EKS serves the scheduler's metrics through the API server (API group " + EKSMetricsGroup + ") from Kubernetes 1.28 on, and this cluster does not serve it (an older version, or a webhook that blocked APIService v1." + EKSMetricsGroup + ")",
			Remedy: "use --prometheus-url with a Prometheus server that has the scheduler's series (EKS also sends scheduler_pending_pods to CloudWatch, namespace AWS/EKS)",
		}
	}
	hc, err := c.APIClient()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig credentials: %w", err)
	}
	u, _, err := rest.DefaultServerUrlFor(c.Config)
	if err != nil {
		return nil, err
	}
	// A server URL may carry a path (a proxy in front of the API server).
	base := strings.TrimSuffix(u.String(), "/")
	return &Endpoint{
		Origin:        Origin{Kind: OriginAPIServer, Address: EKSSchedulerMetricsPath},
		Target:        "the API server's " + EKSSchedulerMetricsPath,
		MetricsPath:   EKSSchedulerMetricsPath,
		MetricsAccept: eksAccept,
		// EKS documents the body (a text exposition), not its Content-Type.
		MetricsAnyType: true,
		NoConfig:       "EKS's metrics API serves the scheduler's metrics only, not its /configz or /flagz",
		Forbidden:      &Grant{Permission: "get " + EKSSchedulerMetricsResource + " in API group " + EKSMetricsGroup, RBAC: EKSMetricsReaderRBAC},
		auth:           c.auth,
		Open: func(context.Context) (string, *http.Client, func(), error) {
			return base, hc, nil, nil
		},
	}, nil
}
