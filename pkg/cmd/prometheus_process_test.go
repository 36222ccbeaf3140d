//go:build unix

package cmd

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
)

// runPlugin runs the test binary as the plugin with args and returns its
// output; the process must end within limit.
func runPlugin(t *testing.T, limit time.Duration, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	c := exec.Command(os.Args[0], args...)
	c.Env = append(os.Environ(), actAsPluginEnv+"=1", "KUBECONFIG="+filepath.Join(t.TempDir(), "none"))
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err = <-done:
	case <-time.After(limit):
		_ = c.Process.Kill()
		<-done
		t.Fatalf("still running after %s:\n%s", limit, errOut.String())
	}
	return out.String(), errOut.String(), err
}

// TestStatus_prometheusCredentialsNotLogged: with -v=10, client-go logs
// every request and its headers; neither the token nor a header value of
// --prometheus-* appears in anything the plugin prints, for a Prometheus
// server of its own and for one behind the API server (where client-go's
// round trippers carry the kubeconfig's token).
func TestStatus_prometheusCredentialsNotLogged(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the plugin as a process")
	}
	const apiPath = "/api/v1/namespaces/monitoring/services/prometheus:9090/proxy"
	direct := schedulerPrometheus(t, false, testsupport.TenantGate(promTestToken, promTestTenant, nil))
	kubeToken := "kube-token-6b0f93"
	viaAPI := schedulerPrometheus(t, true, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get("Authorization") != "Bearer "+kubeToken || r.Header.Get("X-Scope-OrgID") != promTestTenant || !strings.HasPrefix(r.URL.Path, apiPath) {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return false
		}
		return true
	})
	kubeconfig := kubeconfigWithToken(t, viaAPI.URL, kubeToken)
	token := writeFile(t, "token", promTestToken)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"a Prometheus server of its own", []string{"--prometheus-url", direct.URL, "--prometheus-bearer-token-file", token}},
		{"Prometheus behind the API server", []string{"--prometheus-url", viaAPI.URL + apiPath, "--kubeconfig", kubeconfig}},
	} {
		for _, command := range []string{"status", "status-json"} {
			t.Run(tc.name+"/"+command, func(t *testing.T) {
				args := append([]string{"status", "-v=10", "--prometheus-header", "X-Scope-OrgID: " + promTestTenant}, tc.args...)
				if command == "status-json" {
					args = append(args, "-o", "json")
				}
				out, errOut, err := runPlugin(t, 30*time.Second, args...)
				if err != nil {
					t.Fatalf("%v\n%s", err, errOut)
				}
				if !strings.Contains(errOut, "/api/v1/query") {
					t.Fatalf("-v=10 logged no request, so the test shows nothing:\n%s", errOut)
				}
				for _, secret := range []string{promTestToken, promTestTenant, kubeToken} {
					if strings.Contains(out+errOut, secret) {
						t.Errorf("%q was printed:\n%s\n%s", secret, out, errOut)
					}
				}
			})
		}
	}
}

// kubeconfigWithToken is kubeconfigFor with the user's token.
func kubeconfigWithToken(t *testing.T, server, token string) string {
	t.Helper()
	path := kubeconfigFor(t, server)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte("token: t\n"), []byte("token: "+token+"\n"), 1)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStatus_interruptEndsARead: SIGINT ends status and explain within 2 s
// while they read a Prometheus answer that trickles in or stalls, even
// when the process started with SIGINT ignored (a shell's background job,
// which is how a Go program that catches nothing stays deaf to it).
func TestStatus_interruptEndsARead(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the plugin as a process")
	}
	stall := make(chan struct{})
	t.Cleanup(func() { close(stall) })
	servers := map[string]http.HandlerFunc{
		"an answer that trickles in": streamMatrix(20 * time.Millisecond),
		"an answer that stalls": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[`))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-stall:
			}
		},
	}
	for name, h := range servers {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		for _, args := range [][]string{
			{"status", "--prometheus-url", srv.URL, "--request-timeout", "60s"},
			{"explain", "-A", "--prometheus-url", srv.URL, "--request-timeout", "60s", "--kubeconfig", kubeconfigFor(t, testsupport.StalledURL(t))},
		} {
			t.Run(name+"/"+args[0], func(t *testing.T) {
				c := exec.Command(os.Args[0], args...)
				c.Env = append(os.Environ(), actAsPluginEnv+"=1", "KUBECONFIG="+filepath.Join(t.TempDir(), "none"))
				var errOut bytes.Buffer
				c.Stderr = &errOut
				// Started with SIGINT ignored, as a shell starts `cmd &`.
				signal.Ignore(syscall.SIGINT)
				err := c.Start()
				signal.Reset(syscall.SIGINT)
				if err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- c.Wait() }()
				time.Sleep(700 * time.Millisecond) // reading by now
				if err := c.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
				began := time.Now()
				select {
				case err = <-done:
				case <-time.After(5 * time.Second):
					_ = c.Process.Kill()
					<-done
					t.Fatalf("still running 5s after SIGINT:\n%s", errOut.String())
				}
				if took := time.Since(began); took > 2*time.Second {
					t.Errorf("ended %s after SIGINT, want within 2s", took)
				}
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() == 0 || !strings.Contains(errOut.String(), "error: interrupted") {
					t.Errorf("exit %v, stderr:\n%s\nwant \"error: interrupted\"", err, errOut.String())
				}
			})
		}
	}
}
