package cmd

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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

// TestPerfRun_handsOverWhatWasParsed runs the plugin as a process with
// --cluster embedded and a schedq-perf on PATH that records its arguments:
// it gets the run command line as parsed, also when a flag's value or the
// workload is the word run, never the words before the run command.
func TestPerfRun_handsOverWhatWasParsed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the plugin as a process")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in schedq-perf is a shell script")
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"a context named run before the command",
			[]string{"--context", "run", "perf", "run", "backoff-drain", "--cluster", "embedded", "--out", "run"},
			[]string{"run", "backoff-drain", "--cluster", "embedded", "--context", "run", "--out", "run"}},
		{"a workload file named run",
			[]string{"perf", "run", "run", "--cluster", "embedded", "--topic", "run", "--keep=false", "--label-filter", "-performance"},
			[]string{"run", "run", "--cluster", "embedded", "--keep=false", "--label-filter=-performance", "--topic", "run"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			got := filepath.Join(dir, "args")
			script := "#!/bin/sh\nprintf '%s\\n' \"$@\" >" + got + "\n"
			if err := os.WriteFile(filepath.Join(dir, "schedq-perf"), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			c := exec.Command(os.Args[0], tc.args...)
			c.Env = append(os.Environ(), actAsPluginEnv+"=1", "PATH="+dir)
			out, err := c.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			data, err := os.ReadFile(got)
			if err != nil {
				t.Fatalf("schedq-perf did not run: %v\n%s", err, out)
			}
			if args := strings.Fields(string(data)); strings.Join(args, " ") != strings.Join(tc.want, " ") {
				t.Errorf("schedq-perf got %q, want %q", args, tc.want)
			}
			if want := "running " + filepath.Join(dir, "schedq-perf") + " " + strings.Join(tc.want, " "); !strings.Contains(string(out), want) {
				t.Errorf("output lacks %q:\n%s", want, out)
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
