package cmd

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfigFor writes a kubeconfig whose only cluster is server.
func kubeconfigFor(t *testing.T, server string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u", Namespace: "default"}
	cfg.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStalledServer runs the commands against an API server that never
// answers: each returns within its bound, with an error that names the call,
// the bound and the flag.
func TestStalledServer(t *testing.T) {
	srv := testsupport.StalledTLSServer(t)
	kubeconfig := kubeconfigFor(t, srv.URL)
	for _, tc := range []struct {
		name     string
		args     []string
		wantCall string
	}{
		{"status", []string{"status"}, "finding the scheduler: asking for API group metrics.eks.amazonaws.com/v1 (API server)"},
		{"status --metrics-url", []string{"status", "--metrics-url", srv.URL + "/metrics"}, "reading the scheduler's metrics from"},
		{"explain -A", []string{"explain", "-A"}, "listing pods in all namespaces"},
		{"explain -A --no-metrics", []string{"explain", "-A", "--no-metrics"}, "listing pods in all namespaces"},
		{"explain POD", []string{"explain", "web"}, `listing pods in namespace "default"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			streams := genericiooptions.NewTestIOStreamsDiscard()
			root := NewCmdSchedq(streams)
			root.SetArgs(append(tc.args, "--kubeconfig", kubeconfig, "--request-timeout", "500ms"))
			start := time.Now()
			err := root.Execute()
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("returned after %s, bound 500ms", took)
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range []string{tc.wantCall, "500ms", "--request-timeout"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
		})
	}
}

// TestExplain_defaultBound checks that explain's list calls are bounded
// when the REST config has no timeout of its own (no --request-timeout).
func TestExplain_defaultBound(t *testing.T) {
	srv := testsupport.StalledTLSServer(t)
	streams := genericiooptions.NewTestIOStreamsDiscard()
	getter := genericclioptions.NewConfigFlags(false)
	kubeconfig := kubeconfigFor(t, srv.URL)
	getter.KubeConfig = &kubeconfig
	o := NewExplainOptions(getter, streams)
	o.AllNamespaces, o.NoMetrics = true, true
	if err := o.Complete(nil, nil); err != nil {
		t.Fatal(err)
	}
	if o.timeout != DefaultRequestTimeout {
		t.Fatalf("timeout %s, want %s", o.timeout, DefaultRequestTimeout)
	}
	o.timeout = 300 * time.Millisecond // the default, shortened for the test
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := o.Run(ctx)
	if ctx.Err() != nil {
		t.Fatal("explain was still waiting after 10s")
	}
	if err == nil || !strings.Contains(err.Error(), "no answer within 300ms") {
		t.Fatalf("err = %v", err)
	}
}

func TestRequestTimeout(t *testing.T) {
	for _, tc := range []struct {
		flag    string
		want    time.Duration
		wantErr string
	}{
		{"", DefaultRequestTimeout, ""},
		{"0", DefaultRequestTimeout, ""},
		{"5", 5 * time.Second, ""},
		{"1m", time.Minute, ""},
		{"abc", 0, "--request-timeout=abc"},
		{"-1s", 0, "--request-timeout=-1s"},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			root := NewCmdSchedq(genericiooptions.NewTestIOStreamsDiscard())
			cmd, _, _ := root.Find([]string{"status"})
			if tc.flag != "" {
				if err := cmd.ParseFlags([]string{"--request-timeout", tc.flag}); err != nil {
					t.Fatal(err)
				}
			}
			got, err := requestTimeout(cmd, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("requestTimeout = %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

// TestPerfCleanup_bounded runs perf cleanup against API servers that never
// answer: it ends within its bound, says so in its error, and claims
// nothing removed on stdout.
func TestPerfCleanup_bounded(t *testing.T) {
	for _, tc := range testsupport.Unanswering {
		t.Run(tc.Name, func(t *testing.T) {
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			root := NewCmdSchedq(streams)
			root.SetArgs([]string{"perf", "cleanup", "--all", "--kubeconfig", kubeconfigFor(t, tc.Server(t)), "--request-timeout", "500ms"})
			start := time.Now()
			err := root.Execute()
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("returned after %s, bound 500ms", took)
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range []string{"cleaning up on", "no answer within 500ms", "--request-timeout"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q, want nothing", out)
			}
		})
	}
}

// The options text says what --request-timeout does here: 0 is the
// default bound, not "no timeout" as kubectl's text says.
func TestOptions_requestTimeout(t *testing.T) {
	out, _, err := runSchedq(nil, "options")
	if err != nil {
		t.Fatal(err)
	}
	line := ""
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, "--request-timeout") {
			line = l
		}
	}
	if !strings.Contains(line, "0 or unset means 30s") || strings.Contains(line, "zero means don't timeout") {
		t.Errorf("options says of --request-timeout:\n%s", line)
	}
}
