package bound

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
)

type source string

func (s source) String() string { return string(s) }

func TestCall(t *testing.T) {
	deadline := fmt.Errorf("Get \"https://x\": %w", context.DeadlineExceeded)
	already := &TimeoutError{Call: "first", Bound: time.Second, Err: deadline}
	for _, tc := range []struct {
		name        string
		err         error
		wantTimeout bool
		want        string
	}{
		{"nil", nil, false, ""},
		{"deadline", deadline, true, "listing pods: no answer within 2s (wait longer with --request-timeout, e.g. --request-timeout=4s)"},
		{"server timeout", apierrors.NewServerTimeout(schema.GroupResource{Resource: "pods"}, "list", 1), true, "listing pods: no answer within 2s"},
		{"flattened by client-go", errors.New("rate: Wait(n=1) would exceed context deadline exceeded"), true, "listing pods: no answer within 2s"},
		{"other", errors.New("forbidden"), false, "listing pods: forbidden"},
		{"already named", already, true, "first: no answer within 1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Call("listing pods", 2*time.Second, tc.err)
			if tc.err == nil {
				if got != nil {
					t.Fatalf("Call(nil) = %v", got)
				}
				return
			}
			var te *TimeoutError
			if errors.As(got, &te) != tc.wantTimeout {
				t.Errorf("Call() = %v: a TimeoutError is %v, want %v", got, !tc.wantTimeout, tc.wantTimeout)
			}
			if !strings.HasPrefix(got.Error(), tc.want) {
				t.Errorf("Call() = %q, want it to start %q", got, tc.want)
			}
			if !errors.Is(got, tc.err) {
				t.Errorf("Call() = %v does not wrap %v", got, tc.err)
			}
		})
	}
}

func TestScrape(t *testing.T) {
	if err := Scrape(source("https://s:10259/metrics"), time.Second, errors.New("403 Forbidden")); err.Error() != "403 Forbidden" {
		t.Errorf("a refusal is not a timeout, yet Scrape() = %q", err)
	}
	err := Scrape(source("https://s:10259/metrics"), time.Second, context.DeadlineExceeded)
	if !strings.HasPrefix(err.Error(), "reading the scheduler's metrics from https://s:10259/metrics: no answer within 1s") {
		t.Errorf("Scrape() = %q", err)
	}
}

// handshakeTimeout is the error net/http gives for a server that takes the
// connection and never completes TLS, after a short handshake bound.
func handshakeTimeout(t *testing.T) error {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{TLSHandshakeTimeout: 100 * time.Millisecond}}
	_, err := client.Get(testsupport.SilentPort(t))
	if err == nil {
		t.Fatal("a silent port answered")
	}
	return err
}

// A TLS handshake that does not complete is named as such, with the bound
// that applied (the HTTP client's, 10s), not as --request-timeout's.
func TestCall_tlsHandshakeTimeout(t *testing.T) {
	err := Call("reading the scheduler's metrics from https://s:10259/metrics", 30*time.Second, handshakeTimeout(t))
	var he *HandshakeTimeoutError
	if !errors.As(err, &he) {
		t.Fatalf("Call() = %v, want a HandshakeTimeoutError", err)
	}
	for _, want := range []string{"reading the scheduler's metrics from https://s:10259/metrics: the TLS handshake did not complete within 10s", "which --request-timeout does not change"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Call() = %q, want %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "30s") || strings.Contains(err.Error(), "wait longer") {
		t.Errorf("Call() = %q blames --request-timeout's bound", err)
	}
}
