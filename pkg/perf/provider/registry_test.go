package provider

import (
	"os"
	"strings"
	"testing"
)

// TestResolve_messages: the choices name every --cluster value, embedded
// included, and the hand-over message names the Kubernetes version
// schedq-perf links, the one perf/go.mod requires.
func TestResolve_messages(t *testing.T) {
	gomod, err := os.ReadFile("../../../perf/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var version string
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "k8s.io/kubernetes" {
			version = f[1]
		}
	}
	if version == "" {
		t.Fatal("perf/go.mod requires no k8s.io/kubernetes")
	}
	t.Setenv("PATH", t.TempDir()) // no schedq-perf to hand over to
	for _, tc := range []struct {
		cluster string
		want    []string
	}{
		{"bogus", []string{`unknown cluster provider "bogus": want one of embedded, kind, kubeconfig`}},
		{NameEmbedded, []string{"--cluster embedded is not in this binary", "kube-scheduler " + version + " in one process", "make build-perf"}},
	} {
		t.Run(tc.cluster, func(t *testing.T) {
			_, _, err := Resolve(tc.cluster)
			if err == nil {
				t.Fatalf("Resolve(%q) = nil", tc.cluster)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Resolve(%q) = %q, want it to say %q", tc.cluster, err, w)
				}
			}
		})
	}
}
