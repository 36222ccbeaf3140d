package metricscrape

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
)

// The credentials of the test, each unique, so that a sink that sees one
// says which path leaked it.
const (
	kubeToken     = "kube-token-5e2b"
	kubePassword  = "kube-password-7a1c"
	promToken     = "prom-token-9d4f"
	promTenant    = "tenant-3c8e"
	clientCertCN  = "schedq-test-client"
	apiServerPath = "/api/v1/namespaces/monitoring/services/prometheus:9090/proxy"
)

// credentialKubeconfig is a kubeconfig for the API server at server whose
// user authenticates as auth says ("token", "basic" or "cert"), with the
// scheduler endpoint extension when extensionURL is set.
func credentialKubeconfig(t *testing.T, server, auth, extensionURL string) clientcmd.ClientConfig {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cluster := &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	if extensionURL != "" {
		cluster.Extensions = map[string]runtime.Object{KubeconfigExtensionName: &SchedulerEndpoint{
			APIVersion: SchedulerEndpointAPIVersion, Kind: SchedulerEndpointKind, MetricsURL: extensionURL, InsecureSkipTLSVerify: true,
		}}
	}
	user := &clientcmdapi.AuthInfo{}
	switch auth {
	case "token":
		user.Token = kubeToken
	case "basic":
		user.Username, user.Password = "kube-user", kubePassword
	case "cert":
		user.ClientCertificateData, user.ClientKeyData = testsupport.ClientCertificate(t, clientCertCN)
	}
	cfg.Clusters["c"], cfg.AuthInfos["u"] = cluster, user
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u", Namespace: "default"}
	cfg.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: path}, &clientcmd.ConfigOverrides{})
}

// credentialPaths are every way a scrape sends credentials: each builds a
// source that reaches the server at base with them.
func credentialPaths(t *testing.T) []struct {
	name string
	tls  bool // whether the path needs an https server
	// leaks is what a sink would see if the credentials leaked.
	leaks  string
	source func(t *testing.T, base string) Source
} {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(promToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tenant, err := bound.ParseHeader("X-Scope-OrgID: " + promTenant)
	if err != nil {
		t.Fatal(err)
	}
	resolve := func(t *testing.T, o Options) Source {
		t.Helper()
		s, err := Resolve(o)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	metricsURL := func(auth string) func(*testing.T, string) Source {
		return func(t *testing.T, base string) Source {
			return resolve(t, Options{MetricsURL: base + MetricsPath, KubeConfig: credentialKubeconfig(t, "https://127.0.0.1:1", auth, "")})
		}
	}
	prometheus := func(t *testing.T, base string) Source {
		return resolve(t, Options{PrometheusURL: base, PrometheusBearerTokenFile: tokenFile, PrometheusHeaders: []bound.Header{tenant},
			InsecureSkipTLSVerify: true, KubeConfig: credentialKubeconfig(t, "https://127.0.0.1:1", "token", "")})
	}
	return []struct {
		name   string
		tls    bool
		leaks  string
		source func(t *testing.T, base string) Source
	}{
		{"--metrics-url, kubeconfig token", true, kubeToken, metricsURL("token")},
		{"--metrics-url, kubeconfig basic auth", true, "Basic ", metricsURL("basic")},
		{"--metrics-url, kubeconfig client certificate", true, clientCertCN, metricsURL("cert")},
		{"kubeconfig extension", true, kubeToken, func(t *testing.T, base string) Source {
			return resolve(t, Options{KubeConfig: credentialKubeconfig(t, "https://127.0.0.1:1", "token", base+MetricsPath)})
		}},
		{"--prometheus-url over https, token file and header", true, promToken, prometheus},
		{"--prometheus-url over http, token file and header", false, promToken, prometheus},
		{"--prometheus-url on the API server, kubeconfig token", true, kubeToken, func(t *testing.T, base string) Source {
			return resolve(t, Options{PrometheusURL: base + apiServerPath, KubeConfig: credentialKubeconfig(t, base, "token", "")})
		}},
		{"port-forward", true, kubeToken, func(t *testing.T, base string) Source {
			u, _ := url.Parse(base)
			port, _ := strconv.Atoi(u.Port())
			forward := func(context.Context, string, string, int) (int, func(), error) { return port, func() {}, nil }
			client := fake.NewClientset(schedulerPod("cp-1", corev1.PodRunning, true))
			return NewDiscovery(NewCluster(&rest.Config{BearerToken: kubeToken}, client, forward))
		}},
		{"EKS's metrics API on the API server, kubeconfig token", true, kubeToken, func(t *testing.T, base string) Source {
			client := fake.NewClientset()
			client.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{
				{GroupVersion: EKSMetricsGroupVersion, APIResources: []metav1.APIResource{{Name: "ksh/metrics", Verbs: metav1.Verbs{"get"}}}}}
			cfg := bound.APIConfig(&rest.Config{Host: base, BearerToken: kubeToken, TLSClientConfig: rest.TLSClientConfig{Insecure: true}})
			return NewDiscovery(NewCluster(cfg, client, nil))
		}},
		{"discovery's API calls, kubeconfig token", true, kubeToken, func(t *testing.T, base string) Source {
			return resolve(t, Options{KubeConfig: credentialKubeconfig(t, base, "token", ""),
				NewForwarder: func(*rest.Config) Forwarder {
					return func(context.Context, string, string, int) (int, func(), error) {
						return 0, nil, errors.New("no port-forward in this test")
					}
				}})
		}},
	}
}

// TestCredentials_stayWithTheirOrigin: on no path does a credential (a
// token, basic auth, a client certificate, a Prometheus token or header)
// reach a scheme, host or port the user did not name. Each path first
// shows that it does send its credentials to the server named, then meets
// servers that redirect every request elsewhere: the scrape fails with an
// error that names the redirect, and the other server gets nothing.
func TestCredentials_stayWithTheirOrigin(t *testing.T) {
	for _, path := range credentialPaths(t) {
		t.Run(path.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			// The server named gets the credentials (so that a leak below
			// would show).
			named := testsupport.NewSink(t, path.tls)
			_, _ = path.source(t, named.URL).Scrape(ctx)
			if got := strings.Join(named.Requests(), "\n"); !strings.Contains(got, path.leaks) {
				t.Fatalf("the server named got no %q:\n%s", path.leaks, got)
			}
			for _, r := range testsupport.Redirects(t, path.tls) {
				t.Run(r.Name, func(t *testing.T) {
					_, err := path.source(t, r.Server.URL).Scrape(ctx)
					if !bound.IsRefused(err) {
						t.Errorf("scrape = %v, want the redirect refused", err)
					} else if u, _ := url.Parse(r.Sink.URL); !strings.Contains(err.Error(), ":"+u.Port()+"/") {
						t.Errorf("error %q does not name the redirect's target %s", err, r.Sink.URL)
					}
					if got := r.Sink.Requests(); len(got) > 0 {
						t.Errorf("%s got %q", r.Sink.URL, got)
					}
				})
			}
		})
	}
}
