package cmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
)

// The Prometheus credentials of these tests, unique so that a test can
// look for them in everything printed.
const (
	promTestToken  = "prom-token-51c7e0"
	promTestTenant = "tenant-8d21aa"
)

// schedulerPrometheus serves the recorded v1.36-settled scrape (14 pending
// pods) as a Prometheus server that scraped it every 15 s for the last 10
// minutes; check, when set, sees each request first (an auth proxy).
func schedulerPrometheus(t *testing.T, overTLS bool, check func(w http.ResponseWriter, r *http.Request) bool) *httptest.Server {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(recordedDir, "v1.36-settled.prom"))
	if err != nil {
		t.Fatal(err)
	}
	prom := &testsupport.Prometheus{Check: check}
	now := time.Now()
	prom.AddScraped(testsupport.SeriesOf(t, string(data), model.LabelSet{"job": "kube-scheduler", "instance": "10.0.0.1:10259"}),
		now.Add(-10*time.Minute), now, 15*time.Second)
	return testsupport.NewServer(t, prom, overTLS)
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStatus_prometheusCredentials: status and explain reach a Prometheus
// behind a token and a tenant with --prometheus-bearer-token-file and
// --prometheus-header; without them they fail with the status code and the
// flag that fixes it; no error prints the token or the tenant.
func TestStatus_prometheusCredentials(t *testing.T) {
	srv := schedulerPrometheus(t, false, testsupport.TenantGate(promTestToken, promTestTenant, nil))
	token := writeFile(t, "token", promTestToken+"\n")
	stale := writeFile(t, "stale", "expired-token-0000\n")
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	for _, tc := range []struct {
		name    string
		flags   []string
		wantErr []string
	}{
		{"no credentials", nil, []string{"answered 401 Unauthorized", `"invalid or missing bearer token"`, "none were sent", "--prometheus-bearer-token-file FILE"}},
		{"token, no tenant", []string{"--prometheus-bearer-token-file", token}, []string{"401 Unauthorized", `"no org id"`, "--prometheus-header 'X-Scope-OrgID: TENANT'"}},
		{"a stale token", []string{"--prometheus-bearer-token-file", stale, "--prometheus-header", "X-Scope-OrgID: " + promTestTenant}, []string{"401 Unauthorized", "did not accept the token in --prometheus-bearer-token-file " + stale + " and the header(s) X-Scope-OrgID", "fetch a new one"}},
		{"another tenant", []string{"--prometheus-bearer-token-file", token, "--prometheus-header", "X-Scope-OrgID: tenant-other"}, []string{"403 Forbidden", "does not let these credentials query it", "X-Scope-OrgID: TENANT"}},
		{"token and tenant", []string{"--prometheus-bearer-token-file", token, "--prometheus-header", "X-Scope-OrgID: " + promTestTenant}, nil},
		{"a token file that is not there", []string{"--prometheus-bearer-token-file", token + ".missing"}, []string{"--prometheus-bearer-token-file " + token + ".missing: no such file or directory"}},
		{"a header without a name", []string{"--prometheus-header", promTestToken}, []string{"--prometheus-header #1: want 'Name: value'"}},
	} {
		t.Run(tc.name+"/status", func(t *testing.T) {
			out, errOut, err := runSchedq(nil, append([]string{"status", "-o", "jsonpath={.pending.total}", "--prometheus-url", srv.URL}, tc.flags...)...)
			if printed := fmt.Sprint(err) + out.String() + errOut.String(); strings.Contains(printed, promTestToken) || strings.Contains(printed, promTestTenant) {
				t.Errorf("a credential was printed:\n%s", printed)
			}
			if wantErrAll(t, err, tc.wantErr) {
				return
			}
			if out.String() != "14" {
				t.Errorf("pending %q, want 14", out)
			}
		})
		t.Run(tc.name+"/explain", func(t *testing.T) {
			// explain answers without the metrics, and says why in a
			// warning; a flag it cannot take is a usage error.
			o, _, out, errOut := newTestExplainMetrics(t, append([]string{"--prometheus-url", srv.URL}, tc.flags...)...)
			err := o.Validate()
			if err == nil {
				err = o.Run(context.Background())
			}
			printed := fmt.Sprint(err) + out.String() + errOut.String()
			if strings.Contains(printed, promTestToken) || strings.Contains(printed, promTestTenant) {
				t.Errorf("a credential was printed:\n%s", printed)
			}
			if err != nil {
				wantErrAll(t, err, tc.wantErr)
				return
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(errOut.String(), want) {
					t.Errorf("explain's warnings lack %q:\n%s", want, errOut)
				}
			}
			if tc.wantErr == nil && strings.Contains(errOut.String(), "Prometheus") {
				t.Errorf("a warning about Prometheus with the credentials right:\n%s", errOut)
			}
		})
	}
}

// newTestExplainMetrics is explain -A over parkedCluster with the metrics
// source resolved from the metrics flags in args, as the command does.
func newTestExplainMetrics(t *testing.T, args ...string) (*ExplainOptions, *fake.Clientset, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	tf := testConfigFlags()
	client := fake.NewSimpleClientset(parkedCluster(0)...)
	o := NewExplainOptions(tf, streams)
	cmd := &cobra.Command{}
	o.metricsFlags.addFlags(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	o.AllNamespaces = true
	o.client = client
	o.clock = clocktesting.NewFakePassiveClock(explainNow)
	if err := o.Complete(cmd, nil); err != nil {
		t.Fatal(err)
	}
	return o, client, out, errOut
}

// wantErrAll checks that err contains every string of want (nil wants no
// error) and reports whether an error was wanted.
func wantErrAll(t *testing.T, err error, want []string) bool {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatal(err)
		}
		return false
	}
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
	return true
}

// A header's value is printed by no format of the options, whatever the
// verb: it is held as a secret from the flag on.
func TestStatusOptions_headersNeverPrinted(t *testing.T) {
	o := NewStatusOptions(genericclioptions.NewTestConfigFlags(), genericiooptions.NewTestIOStreamsDiscard())
	if err := o.PrometheusHeaders.Set("Authorization: Bearer " + promTestToken); err != nil {
		t.Fatal(err)
	}
	if err := o.PrometheusHeaders.Set("X-Scope-OrgID: " + promTestTenant); err != nil {
		t.Fatal(err)
	}
	opts := o.metricsFlags.options()
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		for _, v := range []any{o, *o, o.metricsFlags, opts, &opts} {
			if s := fmt.Sprintf(verb, v); strings.Contains(s, promTestToken) || strings.Contains(s, promTestTenant) {
				t.Errorf("%s of %T prints a header's value: %s", verb, v, s)
			}
		}
	}
	if got := o.PrometheusHeaders.String(); got != "[Authorization: <redacted>, X-Scope-OrgID: <redacted>]" {
		t.Errorf("String() = %q", got)
	}
}

// TestStatus_prometheusEmptyAnswer: a Prometheus answer without the
// scheduler's series is refused, as a metrics file with the same (empty)
// content is, rather than shown as an empty queue.
func TestStatus_prometheusEmptyAnswer(t *testing.T) {
	// The server has the scheduler's target, then answers the query for
	// its series with nothing (a target that went, a broken server).
	srv := schedulerPrometheus(t, false, func(w http.ResponseWriter, r *http.Request) bool {
		_ = r.ParseForm()
		if strings.HasPrefix(r.Form.Get("query"), "{__name__=~") {
			testsupport.PrometheusResult(w, model.ValVector, model.Vector{})
			return false
		}
		return true
	})
	empty := writeFile(t, "empty.prom", "")
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"Prometheus", []string{"--prometheus-url", srv.URL}, "answered no scheduler_pending_pods series for target"},
		{"file", []string{"--metrics-file", empty}, "no metrics at all"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := runSchedq(nil, append([]string{"status"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q (output %q)", err, tc.want, out)
			}
			if strings.Contains(out.String(), "total") {
				t.Errorf("printed a table for no queue:\n%s", out)
			}
		})
	}
}

// TestStatus_prometheusTLS: --insecure-skip-tls-verify and
// --prometheus-certificate-authority apply to --prometheus-url, and the
// error advises only flags that apply to it.
func TestStatus_prometheusTLS(t *testing.T) {
	srv := schedulerPrometheus(t, true, nil)
	srv.Config.ErrorLog = nil
	ca := writeFile(t, "ca.crt", string(pemCertificate(srv.Certificate().Raw)))
	other := writeFile(t, "other.crt", string(pemCertificate(selfSignedCA(t))))
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	for _, tc := range []struct {
		name    string
		flags   []string
		wantErr []string
	}{
		{"no flag: the system's roots refuse it", nil, []string{"x509", "--prometheus-certificate-authority FILE", "--insecure-skip-tls-verify"}},
		{"--insecure-skip-tls-verify", []string{"--insecure-skip-tls-verify"}, nil},
		{"--prometheus-certificate-authority", []string{"--prometheus-certificate-authority", ca}, nil},
		{"--prometheus-certificate-authority of another CA", []string{"--prometheus-certificate-authority", other}, []string{"not signed by the CA in --prometheus-certificate-authority " + other}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := runSchedq(nil, append([]string{"status", "--prometheus-url", srv.URL, "-o", "jsonpath={.pending.total}"}, tc.flags...)...)
			if wantErrAll(t, err, tc.wantErr) {
				if strings.Contains(err.Error(), "--certificate-authority FILE") && !strings.Contains(err.Error(), "--prometheus-certificate-authority") {
					t.Errorf("advises kubectl's --certificate-authority, which is for the API server:\n%v", err)
				}
				return
			}
			if out.String() != "14" {
				t.Errorf("pending %q, want 14", out)
			}
		})
	}
}

// TestStatus_prometheusAnswerCapped: an answer that streams without end
// ends at the cap, with an error that names the answer and the cap, not a
// timeout.
func TestStatus_prometheusAnswerCapped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(streamMatrix(0)))
	t.Cleanup(srv.Close)
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	began := time.Now()
	_, _, err := runSchedq(nil, "status", "--prometheus-url", srv.URL, "--request-timeout", "60s")
	if err == nil || !strings.Contains(err.Error(), "the answer of "+srv.URL+"/api/v1/query: more than 16 MiB, the most that is read from it") {
		t.Fatalf("err = %v, want the cap", err)
	}
	if strings.Contains(err.Error(), "--request-timeout") {
		t.Errorf("the cap is blamed on --request-timeout: %v", err)
	}
	t.Logf("capped after %s", time.Since(began))
}

// streamMatrix answers a query with a matrix that never ends, a sample
// every pause (0: as fast as the connection takes them).
func streamMatrix(pause time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"scheduler_pending_pods","queue":"active"},"values":[`)
		sample := []byte(`[1700000000,"1"],`)
		chunk := []byte(strings.Repeat(string(sample), 4096))
		if pause > 0 {
			chunk = sample
		}
		flusher, _ := w.(http.Flusher)
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
			if pause > 0 {
				time.Sleep(pause)
			}
		}
	}
}
