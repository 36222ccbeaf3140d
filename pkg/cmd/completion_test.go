package cmd

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// fakeAPIServer answers the lists completion makes: pending pods in
// "default" and the namespaces.
func fakeAPIServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/namespaces/default/pods":
			l := corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}}
			for _, n := range []string{"web-1", "web-2", "db-0"} {
				l.Items = append(l.Items, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: "default"}, Status: corev1.PodStatus{Phase: corev1.PodPending}})
			}
			_ = json.NewEncoder(w).Encode(l)
		case "/api/v1/namespaces":
			l := corev1.NamespaceList{TypeMeta: metav1.TypeMeta{Kind: "NamespaceList", APIVersion: "v1"}}
			for _, n := range []string{"default", "shop", "kube-system"} {
				l.Items = append(l.Items, corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}})
			}
			_ = json.NewEncoder(w).Encode(l)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCompletion(t *testing.T) {
	srv := fakeAPIServer(t)
	kubeconfig := kubeconfigFor(t, srv.URL)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"explain pod names", []string{"explain", "web"}, []string{"web-1", "web-2"}},
		{"explain skips names given", []string{"explain", "web-1", "web"}, []string{"web-2"}},
		{"explain -A: no names, no files", []string{"explain", "-A", ""}, nil},
		{"namespaces", []string{"explain", "-n", "s"}, []string{"shop"}},
		{"contexts", []string{"status", "--context", ""}, []string{"c"}},
		{"explain -o", []string{"explain", "-o", "w"}, []string{"wide"}},
		{"explain -o custom", []string{"explain", "-o", "cu"}, []string{"custom-columns="}},
		{"status -o", []string{"status", "-o", "js"}, []string{"json", "jsonpath=", "jsonpath-as-json=", "jsonpath-file="}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			root := NewCmdSchedq(streams)
			root.SetOut(out)
			args := append([]string{"__complete", "--kubeconfig", kubeconfig}, tc.args...)
			root.SetArgs(args)
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			got, directive := lines[:len(lines)-1], lines[len(lines)-1]
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("completions %q, want %q", got, tc.want)
			}
			// :4 is ShellCompDirectiveNoFileComp: never local files.
			if directive != ":4" {
				t.Errorf("directive %s, want :4 (no files)", directive)
			}
		})
	}
}
