package cmd

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-schedq/kubectl-schedq/workloads"
)

// TestPerf_Command runs the perf commands as a user types them, up to the
// point where a cluster would be needed.
func TestPerf_Command(t *testing.T) {
	infos, err := workloads.List()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		wantOut []string
		wantErr string
	}{
		{"list names every built-in workload", []string{"perf", "list"}, []string{"NAME", "SIZES", "PURPOSE", infos[0].Name, infos[len(infos)-1].Name, "(integration-test)"}, ""},
		{"list -o xml is refused", []string{"perf", "list", "-o", "xml"}, nil, `-o "xml": want json or yaml`},
		{"run needs a workload", []string{"perf", "run"}, nil, "accepts 1 arg(s)"},
		{"run an unknown name", []string{"perf", "run", "no-such"}, nil, "neither a file nor an embedded workload"},
		{"run embedded from the plugin", []string{"perf", "run", "backoff-drain", "--cluster", "embedded"}, nil, "make build-perf"},
		{"run kubeconfig without consent", []string{"perf", "run", "backoff-drain", "--cluster", "kubeconfig"}, nil, "--allow-existing-cluster"},
		{"run keep on kubeconfig", []string{"perf", "run", "backoff-drain", "--cluster", "kubeconfig", "--allow-existing-cluster", "--keep"}, nil, "--keep does not apply to --cluster kubeconfig"},
		{"report of nothing", []string{"perf", "report", t.TempDir()}, nil, "results.json"},
		{"cleanup needs a run or all", []string{"perf", "cleanup"}, nil, "give --run ID or --all"},
		{"cleanup not both", []string{"perf", "cleanup", "--run", "x", "--all"}, nil, "give --run ID or --all"},
	}
	// No schedq-perf on PATH, so --cluster embedded is refused, not handed over.
	t.Setenv("PATH", t.TempDir())
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			root := NewCmdSchedq(streams)
			root.SetArgs(tc.args)
			err := root.Execute()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

func TestPerfList_json(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	root := NewCmdSchedq(streams)
	root.SetArgs([]string{"perf", "list", "-o", "json"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Items []workloads.Info `json:"items"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want, _ := workloads.List()
	if len(got.Items) != len(want) || got.Items[0].Purpose == "" || len(got.Items[0].TestCases) == 0 {
		t.Errorf("items %+v", got.Items)
	}
}

// getOnlyServer is an API server that lists one pod, one node and one
// namespace of run r1 and refuses every delete.
func getOnlyServer(t *testing.T) string {
	t.Helper()
	lists := map[string]string{
		"/api/v1/pods":       `{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"p","namespace":"namespace-1"}}]}`,
		"/api/v1/nodes":      `{"kind":"NodeList","apiVersion":"v1","items":[{"metadata":{"name":"n"}}]}`,
		"/api/v1/namespaces": `{"kind":"NamespaceList","apiVersion":"v1","items":[{"metadata":{"name":"namespace-1"}}]}`,
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusMethodNotAllowed)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"MethodNotAllowed","code":405,"message":"only GET here"}`)
			return
		}
		body, ok := lists[r.URL.Path]
		if !ok {
			body = `{"kind":"List","apiVersion":"v1","items":[]}`
		}
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestPerfCleanup_reportsWhatTheServerConfirmed cleans up on a server that
// refuses every delete: nothing is claimed removed, and the error names
// what may be left and the command that removes it.
func TestPerfCleanup_reportsWhatTheServerConfirmed(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	root := NewCmdSchedq(streams)
	kubeconfig := kubeconfigFor(t, getOnlyServer(t))
	root.SetArgs([]string{"perf", "cleanup", "--run", "r1", "--kubeconfig", kubeconfig})
	err := root.Execute()
	if err == nil {
		t.Fatal("no error, though every delete was refused")
	}
	for _, want := range []string{
		"removed (as the server confirmed): 0 pods, 0 nodes, 0 namespaces and 0 other objects",
		"may be left: pods, persistent volume claims, nodes, node leases, persistent volumes, namespaces",
		"remove them with: kubectl schedq perf cleanup --run r1 --kubeconfig " + kubeconfig,
		"only GET here",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if out.Len() != 0 {
		t.Errorf("stdout %q, want nothing", out)
	}
}
