package gatestable

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	utilfeature "k8s.io/apiserver/pkg/util/feature"

	"github.com/kubectl-schedq/kubectl-schedq/perf/internal/kubeversion"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// TestKnownGates checks the plugin's copy of the feature gates (the plugin
// cannot link k8s.io/kubernetes) against the real ones of the version
// perf/go.mod requires: the committed file must be what `make gates`
// writes, and CheckGate must agree with the real gate on what it refuses.
func TestKnownGates(t *testing.T) {
	want, err := Render()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "..", Path))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not what k8s.io/kubernetes %s's gates give; run make gates", Path, kubeversion.Get())
	}
	if workload.GatesVersion != kubeversion.Get() {
		t.Errorf("workload.GatesVersion = %s, perf/go.mod requires k8s.io/kubernetes %s", workload.GatesVersion, kubeversion.Get())
	}
	for _, tc := range []struct {
		gate  string
		value bool
	}{
		{"SchedulerPopFromBackoffQ", false},
		{"SchedulerPreQueueingHints", true},
		{"GenericWorkload", true},
		// Removed in v1.37: upstream's own configs for v1.36 still name it.
		{"SchedulerQueueingHints", false},
		{"NoSuchGate", true},
	} {
		real := utilfeature.DefaultFeatureGate.DeepCopy().SetFromMap(map[string]bool{tc.gate: tc.value})
		ours := workload.CheckGate(tc.gate, tc.value)
		if (real == nil) != (ours == nil) {
			t.Errorf("%s=%t: the real gate says %v, CheckGate %v", tc.gate, tc.value, real, ours)
		}
	}
}
