// Package ekstest is Amazon EKS's metrics API (API group
// metrics.eks.amazonaws.com) as far as it is documented, for tests: an
// aggregated API server's handler that serves a scheduler's metrics at
// /apis/metrics.eks.amazonaws.com/v1/ksh/container/metrics.
package ekstest

import (
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
)

// Accepts reports whether EKS's metrics API answers a request with this
// Accept header rather than 406 Not Acceptable: it answers when there is no
// Accept header, or when it allows one of the API server's own media types
// (application/json, application/yaml, application/vnd.kubernetes.protobuf)
// or any type; an Accept header of Prometheus's formats alone (text/plain,
// application/openmetrics-text) gets 406 (aws/containers-roadmap#2501;
// Datadog's integration sends "*/*" for this reason).
func Accepts(accept string) bool {
	if strings.TrimSpace(accept) == "" {
		return true
	}
	for _, r := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(r))
		if err != nil || params["q"] == "0" {
			continue
		}
		switch mt {
		case "*/*", "application/*", "application/json", "application/yaml", "application/vnd.kubernetes.protobuf":
			return true
		}
	}
	return false
}

// Resources is the resource list the group version serves: the scheduler
// (ksh) and the controller manager (kcm), each read through its metrics
// subresource.
var Resources = metav1.APIResourceList{
	TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
	GroupVersion: metricscrape.EKSMetricsGroupVersion,
	APIResources: []metav1.APIResource{
		{Name: "ksh", Kind: "KubeSchedulerMetrics", Verbs: metav1.Verbs{}},
		{Name: "ksh/metrics", Kind: "KubeSchedulerMetrics", Verbs: metav1.Verbs{"get"}},
		{Name: "kcm", Kind: "KubeControllerManagerMetrics", Verbs: metav1.Verbs{}},
		{Name: "kcm/metrics", Kind: "KubeControllerManagerMetrics", Verbs: metav1.Verbs{"get"}},
	},
}

// Handler serves the group version's resource list and, at the ksh path,
// the text exposition metrics returns for each request. It answers 406 to
// an Accept header EKS refuses.
func Handler(metrics func(ctx context.Context) ([]byte, error)) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /apis/"+metricscrape.EKSMetricsGroupVersion, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(Resources)
	})
	mux.HandleFunc("GET "+metricscrape.EKSSchedulerMetricsPath, func(w http.ResponseWriter, r *http.Request) {
		if !Accepts(r.Header.Get("Accept")) {
			http.Error(w, "406: Not Acceptable", http.StatusNotAcceptable)
			return
		}
		body, err := metrics(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write(body)
	})
	return mux
}
