package workload_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// TestSelected_NodeDeclaredFeatures checks upstream's nodedeclaredfeatures
// hook: Feature1…N sorted as strings when the workload turns the gate on and
// defines the param; nothing, and the param unused, otherwise.
func TestSelected_NodeDeclaredFeatures(t *testing.T) {
	tests := []struct {
		name    string
		gates   string
		params  string
		want    []string
		wantErr string
	}{
		{name: "five", gates: "{NodeDeclaredFeatures: true}", params: "{nodes: 1, numNodeDeclaredFeatures: 5}", want: []string{"Feature1", "Feature2", "Feature3", "Feature4", "Feature5"}},
		{name: "sorted as strings", gates: "{NodeDeclaredFeatures: true}", params: "{nodes: 1, numNodeDeclaredFeatures: 10}",
			want: []string{"Feature1", "Feature10", "Feature2", "Feature3", "Feature4", "Feature5", "Feature6", "Feature7", "Feature8", "Feature9"}},
		{name: "zero", gates: "{NodeDeclaredFeatures: true}", params: "{nodes: 1, numNodeDeclaredFeatures: 0}", want: []string{}},
		{name: "no param", gates: "{NodeDeclaredFeatures: true}", params: "{nodes: 1}"},
		{name: "gate off", gates: "{NodeDeclaredFeatures: false}", params: "{nodes: 1, numNodeDeclaredFeatures: 5}", wantErr: `param "numNodeDeclaredFeatures" is defined but no op uses it`},
		{name: "negative", gates: "{NodeDeclaredFeatures: true}", params: "{nodes: 1, numNodeDeclaredFeatures: -1}", wantErr: `param "numNodeDeclaredFeatures" must not be negative, got -1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content := "- name: T\n  workloadTemplate:\n  - {opcode: createNodes, countParam: $nodes}\n  - {opcode: createPods, count: 1, collectMetrics: true}\n" +
				"  workloads:\n  - name: w\n    featureGates: " + tt.gates + "\n    params: " + tt.params + "\n"
			f, err := workload.Parse("x.yaml", []byte(content))
			if err != nil {
				t.Fatal(err)
			}
			sel, err := f.Select("", "", "")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Select() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := sel[0].NodeDeclaredFeatures
			if !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Errorf("NodeDeclaredFeatures = %#v, want %#v", got, tt.want)
			}
		})
	}
}
