package metricscrape

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
)

// schedulerHandler serves body as kube-scheduler does, and records the
// Authorization header it got.
func schedulerHandler(body string, gotAuth *string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if gotAuth != nil {
			*gotAuth = r.Header.Get("Authorization")
		}
		if r.URL.Path != MetricsPath {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8; escaping=underscores")
		_, _ = w.Write([]byte(body))
	}
}

func TestURLSource_Scrape(t *testing.T) {
	var gotAuth string
	srv := httptest.NewTLSServer(schedulerHandler(smallExposition, &gotAuth))
	defer srv.Close()

	cfg := &rest.Config{BearerToken: "secret-token", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	// No path: /metrics is added.
	s, err := NewURLSource(srv.URL, cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := s.Scrape(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if gotAuth != "Bearer secret-token" {
		t.Errorf("Authorization = %q, want the kubeconfig's token over https", gotAuth)
	}
	if snap.Pending[QueueUnschedulable] != 7 || snap.Origin.Kind != OriginURL || snap.Origin.Address != srv.URL+"/metrics" {
		t.Errorf("snapshot = %+v", snap)
	}
	if snap.Time.IsZero() {
		t.Error("Time not set")
	}
}

func TestURLSource_httpSendsNoCredentials(t *testing.T) {
	var gotAuth string
	srv := httptest.NewServer(schedulerHandler(smallExposition, &gotAuth))
	defer srv.Close()
	s, err := NewURLSource(srv.URL+"/metrics", &rest.Config{BearerToken: "secret-token"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Scrape(context.Background()); err != nil {
		t.Fatal(err)
	}
	if gotAuth != "" {
		t.Errorf("Authorization = %q over plain http, want none", gotAuth)
	}
}

func TestURLSource_errors(t *testing.T) {
	closed := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return "http://" + addr + "/metrics"
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		tls     bool
		url     func(srvURL string) string
		cfg     *rest.Config
		timeout time.Duration
		check   func(t *testing.T, err error)
	}{
		{
			name: "403",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, `forbidden: User "alice" cannot get path "/metrics"`, http.StatusForbidden)
			},
			check: func(t *testing.T, err error) {
				var fe *ForbiddenError
				if !errors.As(err, &fe) {
					t.Fatalf("err = %v, want *ForbiddenError", err)
				}
				if !strings.Contains(fe.Remedy(), `nonResourceURLs: ["/metrics"]`) {
					t.Errorf("Remedy() = %q", fe.Remedy())
				}
			},
		},
		{
			name:    "401",
			handler: func(w http.ResponseWriter, r *http.Request) { http.Error(w, "Unauthorized", http.StatusUnauthorized) },
			check: func(t *testing.T, err error) {
				var ue *UnauthorizedError
				if !errors.As(err, &ue) {
					t.Fatalf("err = %v, want *UnauthorizedError", err)
				}
			},
		},
		{
			name: "500 shows the body",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "boom\nmore", http.StatusInternalServerError)
			},
			check: func(t *testing.T, err error) {
				var he *HTTPStatusError
				if !errors.As(err, &he) || he.StatusCode != 500 || he.Body != "boom" {
					t.Fatalf("err = %v, want *HTTPStatusError 500 with body boom", err)
				}
			},
		},
		{
			name: "html is not an exposition",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				_, _ = w.Write([]byte("<html></html>"))
			},
			check: func(t *testing.T, err error) {
				if err == nil || !strings.Contains(err.Error(), "not a Prometheus text exposition") {
					t.Fatalf("err = %v", err)
				}
			},
		},
		{
			name:    "not a scheduler",
			handler: schedulerHandler("# TYPE etcd_server_has_leader gauge\netcd_server_has_leader 1\n", nil),
			check: func(t *testing.T, err error) {
				var ns *NotSchedulerError
				if !errors.As(err, &ns) || ns.Looks != "etcd" {
					t.Fatalf("err = %v, want *NotSchedulerError that looks like etcd", err)
				}
			},
		},
		{
			name:    "malformed names the line",
			handler: schedulerHandler("# TYPE scheduler_pending_pods gauge\nscheduler_pending_pods{queue=\"active\"} one\n", nil),
			check: func(t *testing.T, err error) {
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Line != 2 {
					t.Fatalf("err = %v, want *ParseError on line 2", err)
				}
			},
		},
		{
			name:    "untrusted certificate",
			handler: schedulerHandler(smallExposition, nil),
			tls:     true,
			cfg:     &rest.Config{},
			check: func(t *testing.T, err error) {
				var te *TransportError
				if !errors.As(err, &te) || te.Kind != TLSFailure {
					t.Fatalf("err = %v, want a TLS TransportError", err)
				}
			},
		},
		{
			name:    "https to a plain http server",
			handler: schedulerHandler(smallExposition, nil),
			url:     func(u string) string { return strings.Replace(u, "http://", "https://", 1) },
			check: func(t *testing.T, err error) {
				var te *TransportError
				if !errors.As(err, &te) || te.Kind != PlainHTTP {
					t.Fatalf("err = %v, want a PlainHTTP TransportError", err)
				}
				if !strings.Contains(err.Error(), "plain HTTP, not HTTPS: use an http:// URL") || strings.Contains(err.Error(), "certificate") {
					t.Errorf("Error() = %q, want the plain-HTTP remedy and no word of certificates", err)
				}
			},
		},
		{
			name: "timeout",
			handler: func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
			},
			timeout: 100 * time.Millisecond,
			check: func(t *testing.T, err error) {
				var te *TransportError
				if !errors.As(err, &te) || te.Kind != Timeout {
					t.Fatalf("err = %v, want a Timeout TransportError", err)
				}
			},
		},
		{
			name:    "unreachable",
			handler: schedulerHandler(smallExposition, nil),
			url:     func(string) string { return closed() },
			check: func(t *testing.T, err error) {
				var te *TransportError
				if !errors.As(err, &te) || te.Kind != Unreachable {
					t.Fatalf("err = %v, want an Unreachable TransportError", err)
				}
				if !strings.Contains(err.Error(), "connection refused") {
					t.Errorf("Error() = %q, want the cause", err)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var srv *httptest.Server
			if tc.tls {
				srv = httptest.NewTLSServer(tc.handler)
			} else {
				srv = httptest.NewServer(tc.handler)
			}
			defer srv.Close()
			u := srv.URL + "/metrics"
			if tc.url != nil {
				u = tc.url(u)
			}
			s, err := NewURLSource(u, tc.cfg, false)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			_, err = s.Scrape(ctx)
			tc.check(t, err)
		})
	}
}

func TestNewURLSource_badURL(t *testing.T) {
	for _, u := range []string{"ftp://x/metrics", "localhost:10259", "https://", "::"} {
		if _, err := NewURLSource(u, nil, false); err == nil {
			t.Errorf("NewURLSource(%q) succeeded, want an error", u)
		}
	}
}

// fakeAuthClient answers SelfSubjectReview with user and SelfSubjectAccessReview
// with allowed.
func fakeAuthClient(user string, allowed bool) *fake.Clientset {
	c := fake.NewClientset()
	c.PrependReactor("create", "selfsubjectreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, &authenticationv1.SelfSubjectReview{Status: authenticationv1.SelfSubjectReviewStatus{
			UserInfo: authenticationv1.UserInfo{Username: user, Groups: []string{"system:authenticated"}},
		}}, nil
	})
	c.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		review := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
		if review.Spec.NonResourceAttributes == nil || review.Spec.NonResourceAttributes.Path != MetricsPath {
			return true, nil, errors.New("unexpected review")
		}
		review.Status.Allowed = allowed
		return true, review, nil
	})
	return c
}

func TestURLSource_forbiddenNamesTheIdentity(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Forbidden", http.StatusForbidden)
	}))
	defer srv.Close()
	s, err := NewURLSource(srv.URL, &rest.Config{}, true)
	if err != nil {
		t.Fatal(err)
	}
	s.withAuth(&kubeAuth{client: fakeAuthClient("alice", true)})
	_, err = s.Scrape(context.Background())
	var fe *ForbiddenError
	if !errors.As(err, &fe) || fe.Identity == nil || fe.Identity.Username != "alice" {
		t.Fatalf("err = %v, want a ForbiddenError naming alice", err)
	}
	if !strings.Contains(err.Error(), `user "alice" may not get /metrics`) {
		t.Errorf("Error() = %q", err)
	}
	if !strings.Contains(fe.Remedy(), `name: "alice"`) {
		t.Errorf("Remedy() does not bind alice:\n%s", fe.Remedy())
	}
}

func TestURLSource_impersonationIsCheckedFirst(t *testing.T) {
	var hits int
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		schedulerHandler(smallExposition, nil)(w, r)
	}))
	defer srv.Close()
	for _, allowed := range []bool{true, false} {
		s, err := NewURLSource(srv.URL, &rest.Config{}, true)
		if err != nil {
			t.Fatal(err)
		}
		s.withAuth(&kubeAuth{client: fakeAuthClient("reader", allowed), impersonating: true})
		hits = 0
		_, err = s.Scrape(context.Background())
		if allowed {
			if err != nil || hits != 1 {
				t.Errorf("allowed: err = %v, hits = %d; want a scrape", err, hits)
			}
			continue
		}
		var fe *ForbiddenError
		if !errors.As(err, &fe) || !fe.Impersonated || fe.Identity.Username != "reader" {
			t.Errorf("denied: err = %v, want an impersonated ForbiddenError for reader", err)
		}
		if hits != 0 {
			t.Errorf("denied: the scheduler was asked %d times, want 0", hits)
		}
	}
}

func TestFileSource(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.prom")
	if err := os.WriteFile(good, []byte(smallExposition), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err := (&FileSource{Path: good}).Scrape(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if snap.Origin.Kind != OriginFile || snap.Pending[QueueBackoff] != 3 || snap.Time.IsZero() {
		t.Errorf("snapshot = %+v", snap)
	}

	bad := filepath.Join(dir, "bad.prom")
	if err := os.WriteFile(bad, []byte("scheduler_pending_pods{queue=\"active\"} 1\nbroken{\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = (&FileSource{Path: bad}).Scrape(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), bad+":2: ") {
		t.Errorf("err = %v, want it to start with %s:2:", err, bad)
	}
	if _, err := (&FileSource{Path: filepath.Join(dir, "missing")}).Scrape(context.Background()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want not exist", err)
	}
}

// TestResolve_extraPaths: the paths asked for are read at each scrape from
// the scheduler's endpoint, with the same credentials, and a path the
// scheduler refuses or does not serve is an error of its own, not of the
// scrape.
func TestResolve_extraPaths(t *testing.T) {
	var auths []string
	accepts := map[string]string{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auths = append(auths, r.Header.Get("Authorization"))
		accepts[r.URL.Path] = r.Header.Get("Accept")
		switch r.URL.Path {
		case MetricsPath:
			schedulerHandler(smallExposition, nil)(w, r)
		case "/configz":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"componentconfig":{"podInitialBackoffSeconds":2}}`))
		case "/flagz":
			http.Error(w, "forbidden", http.StatusForbidden)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"without a kubeconfig", Options{MetricsURL: srv.URL, InsecureSkipTLSVerify: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.ExtraPaths = map[string]string{"/configz": "application/json", "/flagz": "text/plain", "/statusz": ""}
			src, err := Resolve(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			snap, err := src.Scrape(context.Background())
			if err != nil {
				t.Fatalf("a refused extra path failed the scrape: %v", err)
			}
			cz := snap.Extra["/configz"]
			if cz == nil || cz.Err != nil || string(cz.Body) != `{"componentconfig":{"podInitialBackoffSeconds":2}}` || cz.ContentType != "application/json" {
				t.Errorf("/configz = %+v", cz)
			}
			if fz := snap.Extra["/flagz"]; fz == nil || fz.Status != http.StatusForbidden || fz.Err == nil || fz.Body != nil {
				t.Errorf("/flagz = %+v, want a 403 without a body", fz)
			}
			if sz := snap.Extra["/statusz"]; sz == nil || sz.Status != http.StatusNotFound || sz.Err == nil {
				t.Errorf("/statusz = %+v, want a 404", sz)
			}
			if accepts["/flagz"] != "text/plain" || accepts["/configz"] != "application/json" {
				t.Errorf("Accept headers sent = %v, want each path's own", accepts)
			}
		})
	}
	// A scrape asked for nothing more reads nothing more.
	src, err := Resolve(Options{MetricsURL: srv.URL, InsecureSkipTLSVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	auths = nil
	snap, err := src.Scrape(context.Background())
	if err != nil || snap.Extra != nil || len(auths) != 1 {
		t.Errorf("plain scrape: extra %v, %d requests, err %v", snap.Extra, len(auths), err)
	}
}
