package runner

import (
	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// withNamespacePrefix returns sel with prefix put before every namespace
// its ops name (created, filled, waited on, counted, deleted), so that a run
// on a cluster others use never meets another run's namespaces: upstream's
// names (namespace-1, …) are safe only on a fresh cluster. sel is not
// changed; ops without namespaces are shared.
func withNamespacePrefix(sel *workload.Selected, prefix string) *workload.Selected {
	if prefix == "" {
		return sel
	}
	ns := func(n string) string {
		if n == "" {
			return "" // all namespaces, or a cluster-scoped object
		}
		return prefix + n
	}
	all := func(names []string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = ns(n)
		}
		return out
	}
	out := *sel
	out.Ops = make([]workload.Op, len(sel.Ops))
	for i, op := range sel.Ops {
		switch o := op.(type) {
		case *workload.CreateNamespaces:
			c := *o
			c.Prefix = ns(o.Prefix)
			op = &c
		case *workload.CreatePods:
			c := *o
			c.Namespace = ns(o.Namespace)
			op = &c
		case *workload.DeletePods:
			c := *o
			c.Namespace = ns(o.Namespace)
			op = &c
		case *workload.Churn:
			c := *o
			c.Namespace = ns(o.Namespace)
			op = &c
		case *workload.Barrier:
			c := *o
			c.Namespaces = all(o.Namespaces)
			op = &c
		case *workload.StartCollectingMetrics:
			c := *o
			c.Namespaces = all(o.Namespaces)
			op = &c
		case *workload.CreateAny:
			c := *o
			c.Namespace = ns(o.Namespace)
			op = &c
		case *workload.UpdateAny:
			c := *o
			c.Namespace = ns(o.Namespace)
			op = &c
		case *workload.CreatePodGroups:
			c := *o
			c.Namespace = ns(o.Namespace)
			op = &c
		case *workload.CreateResourceClaims:
			c := *o
			c.Namespace = ns(o.Namespace)
			op = &c
		case *workload.AllocResourceClaims:
			c := *o
			c.Namespace = ns(o.Namespace)
			op = &c
		}
		out.Ops[i] = op
	}
	return &out
}
