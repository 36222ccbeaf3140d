package metricscrape

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfigYAML has two clusters on two servers; "perf" carries the
// scheduler endpoint extension.
func kubeconfigYAML(metricsURL string) string {
	return `apiVersion: v1
kind: Config
clusters:
- name: perf
  cluster:
    server: https://127.0.0.1:6443
    insecure-skip-tls-verify: true
    extensions:
    - name: schedq.kubectl-schedq.io/scheduler
      extension:
        apiVersion: schedq.kubectl-schedq.io/v1alpha1
        kind: SchedulerEndpoint
        metricsURL: ` + metricsURL + `
        queueURL: http://127.0.0.1:41235/debug/schedq/queue
        insecureSkipTLSVerify: true
- name: prod
  cluster:
    server: https://prod.example:6443
users:
- name: admin
  user:
    token: admin-token
contexts:
- name: perf
  context: {cluster: perf, user: admin}
- name: prod
  context: {cluster: prod, user: admin}
current-context: perf
`
}

func loadKubeconfig(t *testing.T, yaml string, overrides *clientcmd.ConfigOverrides) clientcmd.ClientConfig {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	if overrides == nil {
		overrides = &clientcmd.ConfigOverrides{}
	}
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: path}, overrides)
}

func TestEndpointFromKubeconfig(t *testing.T) {
	cc := loadKubeconfig(t, kubeconfigYAML("https://127.0.0.1:41234/metrics"), nil)
	raw, err := cc.RawConfig()
	if err != nil {
		t.Fatal(err)
	}
	ep, err := EndpointFromKubeconfig(raw, "https://127.0.0.1:6443")
	if err != nil {
		t.Fatal(err)
	}
	want := &SchedulerEndpoint{APIVersion: SchedulerEndpointAPIVersion, Kind: SchedulerEndpointKind,
		MetricsURL: "https://127.0.0.1:41234/metrics", QueueURL: "http://127.0.0.1:41235/debug/schedq/queue", InsecureSkipTLSVerify: true}
	if *ep != *want {
		t.Errorf("endpoint = %+v, want %+v", ep, want)
	}
	if ep, err := EndpointFromKubeconfig(raw, "https://prod.example:6443"); ep != nil || err != nil {
		t.Errorf("prod: endpoint %+v, err %v; want none", ep, err)
	}

	// Written back by clientcmd and loaded again, from a typed object.
	raw.Clusters["perf"].Extensions[KubeconfigExtensionName] = want
	data, err := clientcmd.Write(raw)
	if err != nil {
		t.Fatal(err)
	}
	again, err := clientcmd.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	if ep, err := EndpointFromKubeconfig(*again, "https://127.0.0.1:6443"); err != nil || *ep != *want {
		t.Errorf("round trip: %+v, %v", ep, err)
	}

	bad := clientcmdapi.NewConfig()
	bad.Clusters["x"] = &clientcmdapi.Cluster{Server: "s", Extensions: map[string]runtime.Object{KubeconfigExtensionName: &SchedulerEndpoint{Kind: "Other"}}}
	if _, err := EndpointFromKubeconfig(*bad, "s"); err == nil || !strings.Contains(err.Error(), `kind "Other"`) {
		t.Errorf("wrong kind: err = %v", err)
	}
}

func TestResolve(t *testing.T) {
	srv := httptest.NewTLSServer(schedulerHandler(smallExposition, nil))
	defer srv.Close()
	fakeClient := func(*rest.Config) (kubernetes.Interface, error) { return fake.NewClientset(), nil }
	noForward := func(*rest.Config) Forwarder { return nil }

	tests := []struct {
		name     string
		opts     Options
		wantType string
		wantKind OriginKind
		wantErr  string
	}{
		{name: "file", opts: Options{MetricsFile: "x.prom"}, wantType: "*metricscrape.FileSource"},
		{name: "url", opts: Options{MetricsURL: "http://10.0.0.1:10251/metrics"}, wantType: "*metricscrape.URLSource"},
		{name: "prometheus", opts: Options{PrometheusURL: "http://prometheus:9090", PrometheusSelector: `job="s"`}, wantType: "*metricscrape.PrometheusSource"},
		{name: "two named", opts: Options{MetricsURL: "http://a", MetricsFile: "b"}, wantErr: "give one of them"},
		{name: "selector alone", opts: Options{PrometheusSelector: `job="s"`}, wantErr: "--prometheus-selector needs --prometheus-url"},
		{name: "nothing and no kubeconfig", opts: Options{}, wantErr: ErrNoKubeconfig.Error()},
		{
			name:     "kubeconfig extension",
			opts:     Options{KubeConfig: loadKubeconfig(t, kubeconfigYAML(srv.URL+"/metrics"), nil), NewClient: fakeClient, NewForwarder: noForward},
			wantType: "*metricscrape.ProfileSource",
			wantKind: OriginKubeconfig,
		},
		{
			name:     "--context without the extension: discovery",
			opts:     Options{KubeConfig: loadKubeconfig(t, kubeconfigYAML(srv.URL+"/metrics"), &clientcmd.ConfigOverrides{CurrentContext: "prod"}), NewClient: fakeClient, NewForwarder: noForward},
			wantType: "*metricscrape.ProfileSource",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Resolve(tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := typeName(s); got != tc.wantType {
				t.Fatalf("source %s, want %s", got, tc.wantType)
			}
			if tc.wantKind != "" {
				snap, err := s.Scrape(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if snap.Origin.Kind != tc.wantKind {
					t.Errorf("Origin.Kind = %s, want %s", snap.Origin.Kind, tc.wantKind)
				}
				if !strings.Contains(s.String(), "from the kubeconfig") {
					t.Errorf("String() = %q", s)
				}
			}
		})
	}
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }
