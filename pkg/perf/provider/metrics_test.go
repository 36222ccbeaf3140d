package provider

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
)

const perfToken = "perf-token-2f6a"

// TestMetricsReaders_credentialsStayWithTheirOrigin: the perf runner's
// metrics readers (the kubeconfig provider's URL reader, and the
// port-forward reader of kind and of the kubeconfig provider) send the
// kubeconfig's token to the server named and never follow a redirect
// elsewhere with it.
func TestMetricsReaders_credentialsStayWithTheirOrigin(t *testing.T) {
	cfg := &rest.Config{BearerToken: perfToken}
	readers := []struct {
		name string
		read func(t *testing.T, base string) error
	}{
		{"URL reader (kubeconfig provider, --metrics-url or the extension)", func(t *testing.T, base string) error {
			r, err := NewHTTPReader(base+metricscrape.MetricsPath, cfg, true, "")
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.ReadMetrics(context.Background())
			return err
		}},
		{"port-forward reader (kind, kubeconfig provider)", func(t *testing.T, base string) error {
			u, _ := url.Parse(base)
			port, _ := strconv.Atoi(u.Port())
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler-cp", Namespace: metricscrape.SchedulerNamespace, Labels: map[string]string{"component": "kube-scheduler"}},
				Spec:       corev1.PodSpec{NodeName: "cp"},
				Status:     corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
			}
			r, err := NewPortForwardReader(cfg, fake.NewClientset(pod))
			if err != nil {
				t.Fatal(err)
			}
			r.forward = func(context.Context, string, string, int) (int, func(), error) { return port, func() {}, nil }
			defer r.Close()
			_, err = r.ReadMetrics(context.Background())
			return err
		}},
	}
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			named := testsupport.NewSink(t, true)
			_ = rd.read(t, named.URL)
			if got := strings.Join(named.Requests(), "\n"); !strings.Contains(got, perfToken) {
				t.Fatalf("the server named got no token:\n%s", got)
			}
			for _, r := range testsupport.Redirects(t, true) {
				t.Run(r.Name, func(t *testing.T) {
					if err := rd.read(t, r.Server.URL); !bound.IsRefused(err) {
						t.Errorf("read = %v, want the redirect refused", err)
					}
					if got := r.Sink.Requests(); len(got) > 0 {
						t.Errorf("%s got %q", r.Sink.URL, got)
					}
				})
			}
		})
	}
}
