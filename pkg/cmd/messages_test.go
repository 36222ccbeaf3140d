package cmd

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
)

// TestMessages runs the commands the way a newcomer first meets them and
// checks that each error says what is wrong and what to do.
func TestMessages(t *testing.T) {
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	kubeconfig := kubeconfigFor(t, "https://127.0.0.1:1")
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	const unknownContext = `context "nope" is not in the kubeconfig: see 'kubectl config get-contexts'`
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"status without a kubeconfig", []string{"status", "--kubeconfig", empty}, "no kubeconfig: set KUBECONFIG or --kubeconfig, or give --server, or name the metrics with"},
		{"explain without a kubeconfig", []string{"explain", "-A", "--kubeconfig", empty}, "no kubeconfig: set KUBECONFIG or --kubeconfig, or give --server"},
		{"status, unknown context", []string{"status", "--kubeconfig", kubeconfig, "--context", "nope"}, unknownContext},
		{"explain, unknown context", []string{"explain", "-A", "--kubeconfig", kubeconfig, "--context", "nope"}, unknownContext},
		{"https against plain HTTP", []string{"status", "--metrics-url", strings.Replace(plain.URL, "http://", "https://", 1) + "/metrics", "--kubeconfig", kubeconfig}, "answers in plain HTTP, not HTTPS: use an http:// URL"},
		{"explain with nothing named, no kubeconfig", []string{"explain", "--kubeconfig", empty}, "name pods, select them with -l or --field-selector, or take every pending pod of a namespace (-n NAMESPACE) or of all (-A)\nSee 'kubectl schedq explain -h'"},
		{"explain -n without a kubeconfig", []string{"explain", "-n", "shop", "--kubeconfig", empty}, "no kubeconfig: set KUBECONFIG or --kubeconfig, or give --server"},
		{"explain a deployment", []string{"explain", "deploy/web", "--kubeconfig", kubeconfig}, `"deploy/web": explain takes pods, as NAME or pod/NAME`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", empty)
			root := NewCmdSchedq(genericiooptions.NewTestIOStreamsDiscard())
			root.SetArgs(tc.args)
			err := root.Execute()
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if strings.Contains(tc.name, "without a kubeconfig") && !errors.Is(err, clientcmd.ErrEmptyConfig) {
				t.Errorf("errors.Is(%v, clientcmd.ErrEmptyConfig) = false", err)
			}
			if strings.Contains(tc.name, "plain HTTP") && strings.Contains(err.Error(), "certificate") {
				t.Errorf("err %q blames a certificate", err)
			}
		})
	}
}

func TestExplain_podSlashName(t *testing.T) {
	o, _, out, _ := newTestExplain(t, parkedCluster(0), "pod/big-1", "pods/big-2")
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"default/big-1: unschedulablePods", "default/big-2: unschedulablePods"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestExplain_unknownPodHint(t *testing.T) {
	o, _, _, _ := newTestExplain(t, parkedCluster(0), "missing")
	err := o.Run(context.Background())
	if err == nil || strings.Contains(err.Error(), "-A") && !strings.Contains(err.Error(), "get pods -A") {
		t.Fatalf("err = %v: must not suggest -A, which explain refuses with names", err)
	}
	for _, want := range []string{`"missing" not found in namespace "default"`, "-n NAMESPACE", "--field-selector metadata.name=missing"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err %q lacks %q", err, want)
		}
	}
	// The hint's own advice works: a name with -A is refused, so it is not given.
	v := NewExplainOptions(testConfigFlags(), genericiooptions.NewTestIOStreamsDiscard())
	v.podNames, v.AllNamespaces = []string{"missing"}, true
	if v.Validate() == nil {
		t.Fatal("names with -A accepted")
	}
}

func TestExplain_forbiddenClusterWideHintsNamespace(t *testing.T) {
	o, client, _, _ := newTestExplain(t, parkedCluster(0), "-A")
	client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", nil)
	})
	err := o.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "name one with -n NAMESPACE instead of -A") {
		t.Fatalf("err = %v, want a hint to use -n", err)
	}
}
