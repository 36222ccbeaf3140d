package bound_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
)

func TestOriginOf(t *testing.T) {
	for raw, want := range map[string]string{
		"https://Example.COM/metrics":    "https://example.com:443",
		"http://example.com":             "http://example.com:80",
		"https://127.0.0.1:10259/x?y=1":  "https://127.0.0.1:10259",
		"https://[::1]:6443":             "https://[::1]:6443",
		"wss://api.example:6443/portfwd": "https://api.example:6443",
	} {
		u, _ := url.Parse(raw)
		if got := bound.OriginOf(u).String(); got != want {
			t.Errorf("OriginOf(%s) = %s, want %s", raw, got, want)
		}
	}
}

// redirector answers every path with a redirect to where[path], and
// serves /ok.
func redirector(t *testing.T, where map[string]string) *httptest.Server {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ok" || strings.HasPrefix(r.URL.Path, "/api") && where[r.URL.Path] == "" {
			_, _ = w.Write([]byte("ok " + r.Header.Get("Authorization")))
			return
		}
		http.Redirect(w, r, where[r.URL.Path], http.StatusFound)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// bearer adds a token as client-go's round tripper does: on every request
// that goes through it, redirects included.
type bearer struct{ rt http.RoundTripper }

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer s3cr3t")
	return b.rt.RoundTrip(req)
}

// TestClient_redirects: a redirect within the origin is followed, with
// the credentials; one to another scheme, port or host is not, the error
// names it, and the other server gets nothing.
func TestClient_redirects(t *testing.T) {
	plain, otherTLS := testsupport.NewSink(t, false), testsupport.NewSink(t, true)
	where := map[string]string{"/same": "/ok", "/loop": "/loop"}
	srv := redirector(t, where)
	port := srv.Listener.Addr().(interface{ String() string }).String()[len("127.0.0.1:"):]
	where["/to-plain"] = plain.URL + "/x"
	where["/to-other-port"] = otherTLS.URL + "/x"
	where["/to-other-host"] = "https://localhost:" + port + "/ok"
	where["/to-http-same-port"] = "http://127.0.0.1:" + port + "/ok"

	insecure := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	origin, _ := bound.ParseOrigin(srv.URL)
	client := bound.Client(origin, bearer{insecure})
	for _, tc := range []struct {
		path    string
		wantErr string
	}{
		{"/same", ""},
		{"/to-plain", "a redirect to " + plain.URL + "/x: not followed"},
		{"/to-other-port", "a redirect to " + otherTLS.URL + "/x: not followed"},
		{"/to-other-host", "a redirect to https://localhost:" + port + "/ok: not followed"},
		{"/to-http-same-port", "a redirect to http://127.0.0.1:" + port + "/ok: not followed"},
		{"/loop", "stopped after 10 redirects"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp, err := client.Get(srv.URL + tc.path + "?query=secret_query")
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				body, _ := bound.ReadAll(resp.Body, 1<<10, "answer")
				if string(body) != "ok Bearer s3cr3t" {
					t.Fatalf("same-origin redirect: body %q, want the credentials to arrive", body)
				}
				return
			}
			if err == nil {
				resp.Body.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
			if strings.Contains(tc.wantErr, "not followed") {
				var re *bound.RedirectError
				if !errors.As(err, &re) || re.Status != "302 Found" || !bound.IsRefused(err) {
					t.Errorf("err = %#v, want a RedirectError with its status", err)
				}
				if strings.Contains(re.Error(), "secret_query") {
					t.Errorf("the error quotes the query of the request: %v", re)
				}
			}
		})
	}
	for _, s := range []*testsupport.Sink{plain, otherTLS} {
		if got := s.Requests(); len(got) > 0 {
			t.Errorf("%s got requests it must not: %q", s.URL, got)
		}
	}
}

// TestAPIConfig: client-go's own clients follow redirects and add the
// kubeconfig's token to each hop; with APIConfig the hop to another
// origin is refused before it leaves.
func TestAPIConfig(t *testing.T) {
	plain := testsupport.NewSink(t, false)
	srv := redirector(t, map[string]string{"/api/v1/namespaces/ns/pods": plain.URL + "/api/v1/namespaces/ns/pods"})
	cfg := bound.APIConfig(&rest.Config{Host: srv.URL, BearerToken: "s3cr3t", TLSClientConfig: rest.TLSClientConfig{Insecure: true}})
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	var oe *bound.OriginError
	if !errors.As(err, &oe) {
		t.Errorf("list = %v, want an OriginError", err)
	}
	if got := plain.Requests(); len(got) > 0 {
		t.Errorf("the plain-HTTP server got %q", got)
	}
	// The API server itself is reached as before.
	if _, err := client.Discovery().RESTClient().Get().AbsPath("/api").DoRaw(context.Background()); err != nil {
		t.Errorf("a request to the API server: %v", err)
	}
}
