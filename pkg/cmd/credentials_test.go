package cmd

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
)

// TestCommands_redirectCarriesNoToken is the case as it was met: an https
// --metrics-url, or the API server itself, that answers with a redirect to
// a plain-HTTP listener on the same host. status and explain -A fail,
// naming the redirect and its target, and the listener gets no request,
// so the kubeconfig's token never leaves for it.
func TestCommands_redirectCarriesNoToken(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	for _, r := range testsupport.Redirects(t, true) {
		kubeconfig := kubeconfigWithToken(t, r.Server.URL, "kube-token-0d9e21")
		for _, tc := range []struct {
			name string
			args []string
			want string
		}{
			{"status --metrics-url", []string{"status", "--metrics-url", r.Server.URL + "/metrics", "--kubeconfig", kubeconfigFor(t, "https://127.0.0.1:1")}, "answered 302 Found, a redirect to "},
			{"status, API server redirects", []string{"status", "--kubeconfig", kubeconfig}, "refused to send a request to "},
			{"explain -A, API server redirects", []string{"explain", "-A", "--kubeconfig", kubeconfig}, "refused to send a request to "},
		} {
			t.Run(r.Name+"/"+tc.name, func(t *testing.T) {
				_, _, err := runSchedq(nil, tc.args...)
				target, _ := url.Parse(r.Sink.URL)
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), ":"+target.Port()+"/") {
					t.Errorf("err = %v, want %q and the target's port", err, tc.want)
				}
				if got := r.Sink.Requests(); len(got) > 0 {
					t.Errorf("the redirect's target got %q", got)
				}
			})
		}
	}
}
