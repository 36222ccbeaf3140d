package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// testdata holds the files kind v0.33.0 wrote into its load balancer for a
// cluster with three control-plane nodes.
func TestParseConfig_kindFiles(t *testing.T) {
	raw, err := os.ReadFile("testdata/envoy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := parseBootstrap(raw)
	if err != nil {
		t.Fatal(err)
	}
	if b.LDS != "/home/envoy/lds.yaml" || b.CDS != "/home/envoy/cds.yaml" {
		t.Errorf("bootstrap %+v", b)
	}
	lds, _ := os.ReadFile("testdata/lds.yaml")
	cds, _ := os.ReadFile("testdata/cds.yaml")
	cfg, err := parseConfig(lds, cds)
	if err != nil {
		t.Fatal(err)
	}
	want := config{Listen: "0.0.0.0:6443",
		Backends:  []string{"sqha1-control-plane2:6443", "sqha1-control-plane3:6443", "sqha1-control-plane:6443"},
		CheckPath: "/healthz", Interval: 2 * time.Second, Timeout: 3 * time.Second, Connect: 250 * time.Millisecond, Unhealthy: 2, Healthy: 1}
	if fmt.Sprint(*cfg) != fmt.Sprint(want) {
		t.Errorf("config\n%+v, want\n%+v", *cfg, want)
	}
}

func TestParseConfig_refuses(t *testing.T) {
	lds, _ := os.ReadFile("testdata/lds.yaml")
	cds, _ := os.ReadFile("testdata/cds.yaml")
	for _, tc := range []struct {
		name     string
		lds, cds string
		want     string
	}{
		{"before kind writes them", "resources: []", "resources: []", "no listener or no cluster yet"},
		{"another cluster", string(lds), strings.Replace(string(cds), "name: kube_apiservers", "name: other", 1), `forwards to cluster "kube_apiservers"`},
		{"no endpoints", string(lds), strings.Split(string(cds), "    endpoints:")[0], "no endpoints"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig([]byte(tc.lds), []byte(tc.cds))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

// backend is a kube-apiserver stand-in: TLS, /healthz answering as told,
// and every other path naming the backend.
func backend(t *testing.T, name string, healthy *atomic.Bool) string {
	t.Helper()
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" && !healthy.Load() {
			http.Error(w, "not ready", http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, name)
	}))
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "https://")
}

// TestRun forwards through the files as kind writes them: after start, a
// listener and a cluster of two apiservers, one healthy. Connections go to
// the healthy one; when it fails its checks too, to any that answers.
func TestRun(t *testing.T) {
	var aOK, bOK atomic.Bool
	aOK.Store(true)
	a, b := backend(t, "a", &aOK), backend(t, "b", &bOK)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := ln.Addr().String()
	ln.Close()

	dir := t.TempDir()
	lds, cds := filepath.Join(dir, "lds.yaml"), filepath.Join(dir, "cds.yaml")
	bootstrap := filepath.Join(dir, "envoy.yaml")
	write := func(path, content string) {
		t.Helper()
		if err := os.WriteFile(path+".tmp", []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			t.Fatal(err)
		}
	}
	write(bootstrap, fmt.Sprintf("dynamic_resources:\n  cds_config:\n    path_config_source:\n      path: %s\n  lds_config:\n    path_config_source:\n      path: %s\n", cds, lds))
	write(lds, "resources: []")
	write(cds, "resources: []")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, bootstrap) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})

	host, port, _ := net.SplitHostPort(listen)
	write(lds, fmt.Sprintf(`resources:
- address: {socket_address: {address: %q, port_value: %s}}
  filter_chains: [{filters: [{typed_config: {cluster: apis}}]}]
`, host, port))
	endpoint := func(hp string) string {
		h, p, _ := net.SplitHostPort(hp)
		return fmt.Sprintf("      - endpoint: {address: {socket_address: {address: %q, port_value: %s}}}\n", h, p)
	}
	write(cds, `resources:
- name: apis
  connect_timeout: 0.25s
  health_checks:
  - {timeout: 1s, interval: 0.1s, unhealthy_threshold: 2, healthy_threshold: 1, http_health_check: {path: /healthz}}
  load_assignment:
    endpoints:
    - lb_endpoints:
`+endpoint(a)+endpoint(b))

	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true}}
	get := func() string {
		resp, err := client.Get("https://" + listen + "/")
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	// The health checks run every 100ms: within a second only a answers.
	eventually(t, "connections to go to the healthy backend only", func() bool {
		for range 6 {
			if get() != "a" {
				return false
			}
		}
		return true
	})
	// Both unhealthy: every backend is tried, as Envoy's panic mode does.
	aOK.Store(false)
	seen := map[string]bool{}
	eventually(t, "connections to both backends once none is healthy", func() bool {
		seen[get()] = true
		return seen["a"] && seen["b"]
	})
}

func eventually(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
