package provider

import (
	"context"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
)

// TestKubeconfig_Start_namespacesOfItsOwn: a run on an existing cluster
// gets namespaces named after its run ID, and says so; two runs differ.
func TestKubeconfig_Start_namespacesOfItsOwn(t *testing.T) {
	prefixes := map[string]bool{}
	for _, id := range []string{"3f9a1c02de", "7b2e90aa41"} {
		k := &Kubeconfig{AllowExisting: true, restConfig: &rest.Config{Host: "https://x"}, client: fake.NewClientset(), metrics: fakeReader{schedulerMetrics}}
		inst, err := k.Start(context.Background(), Spec{Workload: selectedWithGates(nil), RunLabels: map[string]string{runner.RunLabelKey: id}})
		if err != nil {
			t.Fatal(err)
		}
		if want := "schedq-" + id + "-"; inst.NamespacePrefix != want {
			t.Errorf("NamespacePrefix %q, want %q", inst.NamespacePrefix, want)
		}
		if !strings.Contains(strings.Join(inst.Notes, "\n"), "in namespaces of its own (schedq-"+id+"-…)") {
			t.Errorf("notes %q do not name the namespaces", inst.Notes)
		}
		prefixes[inst.NamespacePrefix] = true
		if err := inst.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if len(prefixes) != 2 {
		t.Errorf("two runs share namespaces: %v", prefixes)
	}
}
