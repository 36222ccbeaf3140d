package embedded

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"
)

// TestStart_badInput checks that bad input fails before anything starts, with
// an error that says what is wrong, and leaves no file behind.
func TestStart_badInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const header = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
	malformed := write("malformed.yaml", header+"podInitialBackoffSeconds: [1\n")
	invalid := write("invalid.yaml", header+"podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 2\n")
	unknownField := write("unknown-field.yaml", header+"podInitialBackofSeconds: 5\n")
	wrongKind := write("wrong-kind.yaml", "apiVersion: v1\nkind: Pod\n")
	missing := filepath.Join(dir, "missing.yaml")
	existingKubeconfig := write("kubeconfig", "apiVersion: v1\nkind: Config\n")

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port

	tests := []struct {
		name string
		opts Options
		want []string // substrings of the error
	}{
		{"unknown feature gate", Options{FeatureGates: map[string]bool{"NoSuchGate": true}},
			[]string{"feature gates", "unrecognized feature gate: NoSuchGate"}},
		{"locked feature gate", Options{FeatureGates: map[string]bool{"NodeInclusionPolicyInPodTopologySpread": false}},
			[]string{"feature gates", "NodeInclusionPolicyInPodTopologySpread", "locked"}},
		{"feature gate removed in v1.37", Options{FeatureGates: map[string]bool{"SchedulerQueueingHints": false}},
			[]string{"feature gates", "unrecognized feature gate: SchedulerQueueingHints"}},
		{"malformed scheduler config", Options{SchedulerConfigFile: malformed},
			[]string{"scheduler config " + malformed}},
		{"invalid scheduler config", Options{SchedulerConfigFile: invalid},
			[]string{"scheduler config " + invalid, "podMaxBackoffSeconds"}},
		{"unknown field in scheduler config", Options{SchedulerConfigFile: unknownField},
			[]string{"scheduler config " + unknownField, "podInitialBackofSeconds"}},
		{"not a scheduler config", Options{SchedulerConfigFile: wrongKind},
			[]string{"scheduler config " + wrongKind}},
		{"missing scheduler config", Options{SchedulerConfigFile: missing},
			[]string{"scheduler config", missing, "no such file"}},
		{"invalid scheduler config object", Options{SchedulerConfig: &configv1.KubeSchedulerConfiguration{PodInitialBackoffSeconds: ptr.To[int64](0)}},
			[]string{"scheduler config Options.SchedulerConfig", "podInitialBackoffSeconds"}},
		{"file and object", Options{SchedulerConfigFile: invalid, SchedulerConfig: &configv1.KubeSchedulerConfiguration{}},
			[]string{"mutually exclusive"}},
		{"queue port in use", Options{QueuePort: busyPort},
			[]string{"queue endpoint", "is in use"}},
		{"existing kubeconfig", Options{KubeconfigPath: existingKubeconfig},
			[]string{"kubeconfig " + existingKubeconfig + " already exists"}},
		{"negative nodes", Options{Nodes: -1},
			[]string{"nodes", "negative"}},
		{"negative leftover duration", Options{PodMaxInUnschedulablePodsDuration: -time.Second},
			[]string{"PodMaxInUnschedulablePodsDuration", "negative"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			cp, err := Start(context.Background(), tc.opts)
			if err == nil {
				cp.Stop()
				t.Fatal("Start succeeded")
			}
			t.Logf("error: %v", err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			emptyDir(t, tmp)
		})
	}
}

func TestParseFeatureGates(t *testing.T) {
	tests := []struct {
		in      string
		want    map[string]bool
		wantErr string
	}{
		{"", map[string]bool{}, ""},
		{"SchedulerPopFromBackoffQ=false", map[string]bool{"SchedulerPopFromBackoffQ": false}, ""},
		{" A=true, B=false ,", map[string]bool{"A": true, "B": false}, ""},
		{"A", nil, `feature gate "A": want Name=true or Name=false`},
		{"A=maybe", nil, `"maybe" is not a boolean`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseFeatureGates(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want, +got):\n%s", diff)
			}
			if len(got) == 0 {
				return
			}
			if back, err := ParseFeatureGates(FormatFeatureGates(got)); err != nil || !cmp.Equal(back, got) {
				t.Errorf("round trip through %q: %v, %v", FormatFeatureGates(got), back, err)
			}
		})
	}
}

// TestRuntimeConfig: the API versions served beyond the defaults follow the
// workload's gates as upstream's scheduler_perf sets them.
func TestRuntimeConfig(t *testing.T) {
	for _, tc := range []struct {
		gates map[string]bool
		want  string
	}{
		{nil, ""},
		{map[string]bool{"GenericWorkload": true}, "scheduling.k8s.io/v1beta1=true"},
		{map[string]bool{"GenericWorkload": false}, ""},
		{map[string]bool{"DynamicResourceAllocation": true}, "resource.k8s.io/v1=true,resource.k8s.io/v1beta2=true,resource.k8s.io/v1beta1=true,resource.k8s.io/v1alpha3=true"},
	} {
		if got := strings.Join(runtimeConfig(tc.gates), ","); got != tc.want {
			t.Errorf("runtimeConfig(%v) = %q, want %q", tc.gates, got, tc.want)
		}
	}
}
