package provider

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
)

// stalledTLSServer completes the TLS handshake and then never answers.
func stalledTLSServer(t *testing.T) string {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(func() {
		close(done)
		srv.Close()
	})
	return srv.URL
}

// silentPort accepts connections and never writes a byte.
func silentPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return "https://" + l.Addr().String()
}

func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestKubeconfig_Start_bounded connects to API servers that never answer:
// Start returns within --request-timeout with an error that says so.
func TestKubeconfig_Start_bounded(t *testing.T) {
	for _, tc := range []struct {
		name    string
		server  func(*testing.T) string
		metrics bool
	}{
		{"a TLS server that stalls after the handshake", stalledTLSServer, false},
		{"a port that accepts and never answers", silentPort, false},
		{"--metrics-url on a stalled server", stalledTLSServer, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server := tc.server(t)
			k := &Kubeconfig{Path: writeKubeconfig(t, server), AllowExisting: true, RequestTimeout: 500 * time.Millisecond}
			if tc.metrics {
				k.MetricsURL = server + "/metrics"
			}
			began := time.Now()
			inst, err := k.Start(context.Background(), Spec{Workload: selectedWithGates(nil), RunLabels: map[string]string{runner.RunLabelKey: "r"}})
			took := time.Since(began)
			if err == nil {
				_ = inst.Stop(context.Background())
				t.Fatal("Start succeeded against a server that never answers")
			}
			if took > 5*time.Second {
				t.Errorf("Start took %s, bound 500ms", took)
			}
			for _, want := range []string{"did not answer within 500ms", "--request-timeout"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

// TestCleanup_bounded cleans up on API servers that never answer: the
// first call that times out ends the cleanup, within twice the bound, with
// an error that says so.
func TestCleanup_bounded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		server func(*testing.T) string
	}{
		{"a TLS server that stalls after the handshake", stalledTLSServer},
		{"a port that accepts and never answers", silentPort},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := clientcmd.BuildConfigFromFlags("", writeKubeconfig(t, tc.server(t)))
			if err != nil {
				t.Fatal(err)
			}
			client := cleanupClient(cfg, nil)
			began := time.Now()
			_, err = CleanupRuns(context.Background(), client, "r", 500*time.Millisecond)
			if took := time.Since(began); took > time.Second {
				t.Errorf("cleanup took %s, bound 500ms per call", took)
			}
			if err == nil || !strings.Contains(err.Error(), "did not answer within 500ms") {
				t.Errorf("err = %v, want the timeout named", err)
			}
		})
	}
}
