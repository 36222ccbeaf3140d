package bound_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
)

// A client whose config carries Transport ends a call to a server that
// never answers within the bound, with an error bound.IsTimeout knows.
func TestTransport_boundsACall(t *testing.T) {
	cfg := &rest.Config{Host: testsupport.StalledURL(t), TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	cfg.Wrap(bound.Transport(300 * time.Millisecond))
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err = client.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	if took := time.Since(began); err == nil || !bound.IsTimeout(err) || took > 5*time.Second {
		t.Fatalf("list took %s and returned %v, want a timeout within about 300ms", took, err)
	}
}

// A watch and an upgrade pass unbounded: a watch that answers after the
// bound still answers; a plain call that answers within it is untouched.
func TestTransport_leavesWatchesAndUpgrades(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "true" || r.Header.Get("Upgrade") != "" {
			time.Sleep(400 * time.Millisecond)
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	client := &http.Client{Transport: bound.Transport(100 * time.Millisecond)(http.DefaultTransport)}
	for _, tc := range []struct {
		name    string
		path    string
		upgrade bool
	}{{"watch", "/api/v1/pods?watch=true", false}, {"upgrade", "/api/v1/namespaces/ns/pods/p/portforward", true}, {"quick call", "/api/v1/pods", false}} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+tc.path, nil)
		if tc.upgrade {
			req.Header.Set("Upgrade", "SPDY/3.1")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		resp.Body.Close()
	}
}
