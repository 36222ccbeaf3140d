package runner

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
	"github.com/kubectl-schedq/kubectl-schedq/workloads"
)

// opNamespaces lists every namespace the ops of sel name, in order.
func opNamespaces(sel *workload.Selected) []string {
	var out []string
	for _, op := range sel.Ops {
		switch o := op.(type) {
		case *workload.CreateNamespaces:
			out = append(out, o.Names()...)
		case *workload.CreatePods:
			out = append(out, o.Namespace)
		case *workload.DeletePods:
			out = append(out, o.Namespace)
		case *workload.Churn:
			out = append(out, o.Namespace)
		case *workload.Barrier:
			out = append(out, o.Namespaces...)
		case *workload.StartCollectingMetrics:
			out = append(out, o.Namespaces...)
		case *workload.CreateAny:
			out = append(out, o.Namespace)
		case *workload.UpdateAny:
			out = append(out, o.Namespace)
		}
	}
	return out
}

// TestWithNamespacePrefix: on a shared cluster every namespace a built-in
// workload names, created or referred to, gets the run's prefix, so two
// runs never share one; the workload itself is left as it was.
func TestWithNamespacePrefix(t *testing.T) {
	infos, err := workloads.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		t.Run(in.Name, func(t *testing.T) {
			f, err := workloads.Load(in.Name)
			if err != nil {
				t.Fatal(err)
			}
			sels, err := f.Select("", "", "integration-test")
			if err != nil {
				t.Fatal(err)
			}
			for _, sel := range sels {
				before := opNamespaces(sel)
				if len(before) == 0 {
					t.Fatalf("%s names no namespace", sel.Name())
				}
				a, b := withNamespacePrefix(sel, "schedq-aaaa-"), withNamespacePrefix(sel, "schedq-bbbb-")
				got := opNamespaces(a)
				for i, ns := range got {
					if before[i] == "" {
						continue
					}
					if ns != "schedq-aaaa-"+before[i] {
						t.Errorf("%s: namespace %q became %q, want the prefix", sel.Name(), before[i], ns)
					}
				}
				for _, ns := range opNamespaces(b) {
					if ns != "" && slices.Contains(got, ns) {
						t.Errorf("%s: two runs share namespace %q", sel.Name(), ns)
					}
				}
				if after := opNamespaces(sel); !slices.Equal(before, after) {
					t.Errorf("%s: the workload changed: %v, was %v", sel.Name(), after, before)
				}
				for _, ns := range before {
					if strings.HasPrefix(ns, "schedq-") {
						t.Errorf("%s: the workload itself has %q", sel.Name(), ns)
					}
				}
			}
		})
	}
	if sel := (&workload.Selected{}); withNamespacePrefix(sel, "") != sel {
		t.Error("no prefix must leave the workload as it is")
	}
}
