package perf

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	_ "k8s.io/kubernetes/pkg/features" // registers kube's gates

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// TestKnownGates checks the plugin's copy of the feature gates (the plugin
// cannot link k8s.io/kubernetes) against the real ones, and prints the
// replacement table when they differ.
func TestKnownGates(t *testing.T) {
	var want []string
	for name, spec := range utilfeature.DefaultMutableFeatureGate.GetAll() {
		want = append(want, fmt.Sprintf("%s %t %t", name, spec.Default, spec.LockToDefault))
	}
	sort.Strings(want)
	var got []string
	for _, g := range workload.KnownGates() {
		got = append(got, fmt.Sprintf("%s %t %t", g.Name, g.Default, g.Locked))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		var b strings.Builder
		for _, w := range want {
			f := strings.Fields(w)
			fmt.Fprintf(&b, "\t%q: {%s, %s},\n", f[0], f[1], f[2])
		}
		t.Errorf("pkg/workload/gates_v1.36.3.go differs from the real feature gates; its table should read:\n%s", b.String())
	}
	for _, tc := range []struct {
		gate  string
		value bool
	}{{"SchedulerPopFromBackoffQ", false}, {"SchedulerQueueingHints", false}, {"NoSuchGate", true}} {
		real := utilfeature.DefaultFeatureGate.DeepCopy().SetFromMap(map[string]bool{tc.gate: tc.value})
		ours := workload.CheckGate(tc.gate, tc.value)
		if (real == nil) != (ours == nil) {
			t.Errorf("%s=%t: the real gate says %v, CheckGate %v", tc.gate, tc.value, real, ours)
		}
	}
}
