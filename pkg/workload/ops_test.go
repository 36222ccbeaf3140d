package workload_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// selectOp parses a test case whose workloadTemplate is a createNodes, the
// given op and a measured createPods, with params, and returns the given op
// after Select, or the first error of Parse or Select.
func selectOp(t *testing.T, op, params string) (workload.Op, error) {
	t.Helper()
	content := `
- name: Foo
  workloadTemplate:
  - opcode: createNodes
    count: 1
` + op + `
  - opcode: createPods
    count: 1
    collectMetrics: true
  workloads:
  - name: w
    params: {` + params + `}
`
	f, err := workload.Parse("testdata/workloads/x.yaml", []byte(content))
	if err != nil {
		return nil, err
	}
	sel, err := f.Select("", "", "")
	if err != nil {
		return nil, err
	}
	return sel[0].Ops[1], nil
}

// TestOps_v1_37 checks the ops and fields scheduler_perf v1.37 added, as
// upstream's isValid and patchParams check them.
func TestOps_v1_37(t *testing.T) {
	tests := []struct {
		name    string
		op      string
		params  string
		wantErr string
		check   func(t *testing.T, op workload.Op)
	}{
		{
			name: "createPodGroups",
			op: `  - opcode: createPodGroups
    countParam: $groups
    namespace: gang
    templatePath: templates/podgroup.yaml
    templateParams: {podsPerGroup: $size}`,
			params: "groups: 2, size: 3",
			check: func(t *testing.T, op workload.Op) {
				pg := op.(*workload.CreatePodGroups)
				if pg.Count != 2 || pg.Namespace != "gang" || pg.TemplatePath != "testdata/workloads/templates/podgroup.yaml" {
					t.Errorf("op = %+v", pg)
				}
				obj, err := pg.PodGroup(1)
				if err != nil {
					t.Fatal(err)
				}
				if obj.Name != "gang-1" || obj.Spec.SchedulingPolicy.Gang == nil || obj.Spec.SchedulingPolicy.Gang.MinCount != 3 {
					t.Errorf("PodGroup(1) = %+v", obj)
				}
			},
		},
		{
			name:    "createPodGroups without templatePath",
			op:      "  - {opcode: createPodGroups, count: 1, namespace: gang}",
			wantErr: `op 1 (createPodGroups): templatePath must be set`,
		},
		{
			name:    "createPodGroups without namespace",
			op:      "  - {opcode: createPodGroups, count: 1, templatePath: templates/podgroup.yaml}",
			wantErr: `op 1 (createPodGroups): namespace must be set`,
		},
		{
			name:    "createPodGroups with count 0",
			op:      "  - {opcode: createPodGroups, namespace: gang, templatePath: templates/podgroup.yaml, templateParams: {podsPerGroup: 1}}",
			wantErr: `workload "w", op 1 (createPodGroups): count must be at least 1, got 0`,
		},
		{
			name:    "createPodGroups with a countParam without $",
			op:      "  - {opcode: createPodGroups, countParam: groups, namespace: gang, templatePath: templates/podgroup.yaml}",
			wantErr: `op 1 (createPodGroups): countParam "groups" must start with "$"`,
		},
		{
			name:    "createPodGroups with an undefined template param",
			op:      "  - {opcode: createPodGroups, count: 1, namespace: gang, templatePath: templates/podgroup.yaml, templateParams: {podsPerGroup: $size}}",
			wantErr: `op 1 (createPodGroups): templateParams["podsPerGroup"] "$size": param "size" is not defined in params (give a default with "$size|value")`,
		},
		{
			name: "startCollectingProfile",
			op:   "  - {opcode: startCollectingProfile, type: cpu, filePath: cpu.pprof}",
			check: func(t *testing.T, op workload.Op) {
				want := &workload.StartCollectingProfile{OpPos: workload.OpPos{Index: 1, TemplateIndex: 1}, Type: "CPU", FilePath: "cpu.pprof"}
				if diff := cmp.Diff(want, op); diff != "" {
					t.Errorf("op (-want, +got):\n%s", diff)
				}
			},
		},
		{
			name:    "startCollectingProfile without filePath",
			op:      "  - {opcode: startCollectingProfile, type: CPU}",
			wantErr: `op 1 (startCollectingProfile): filePath must be set`,
		},
		{
			name:    "startCollectingProfile of memory",
			op:      "  - {opcode: startCollectingProfile, type: memory, filePath: m.pprof}",
			wantErr: `op 1 (startCollectingProfile): type "memory" is not a profile type upstream collects (only CPU)`,
		},
		{
			name:    "stopCollectingProfile without type",
			op:      "  - {opcode: stopCollectingProfile}",
			wantErr: `op 1 (stopCollectingProfile): type "" is not a profile type upstream collects (only CPU)`,
		},
		{
			name:   "createPods with countMultiplierParam, signatureBatchSizeParam and templateParams",
			op:     "  - {opcode: createPods, count: 2, countMultiplierParam: $per, signatureBatchSizeParam: $batch, podTemplatePath: templates/pod-params.yaml, templateParams: {group: $g, tier: '$tier|gold'}}",
			params: "per: 3, batch: 4, g: blue",
			check: func(t *testing.T, op workload.Op) {
				cp := op.(*workload.CreatePods)
				if cp.Count != 6 || cp.SignatureBatchSize != 4 {
					t.Errorf("count %d, signatureBatchSize %d; want 6, 4", cp.Count, cp.SignatureBatchSize)
				}
				pod, err := cp.Pod(5, cp.Count)
				if err != nil {
					t.Fatal(err)
				}
				want := map[string]string{"group": "blue", "tier": "gold", "signature": "signature-label-1"}
				if diff := cmp.Diff(want, pod.Labels); diff != "" {
					t.Errorf("labels (-want, +got):\n%s", diff)
				}
			},
		},
		{
			name: "createPods' signatureBatchSize defaults to 1",
			op:   "  - {opcode: createPods, count: 2, podTemplatePath: templates/pod-params.yaml, templateParams: {group: a, tier: b}}",
			check: func(t *testing.T, op workload.Op) {
				pod, err := op.(*workload.CreatePods).Pod(1, 2)
				if err != nil {
					t.Fatal(err)
				}
				if got := pod.Labels[workload.SignatureLabel]; got != "signature-label-1" {
					t.Errorf("signature = %q, want signature-label-1", got)
				}
			},
		},
		{
			name:    "createPods with a negative signatureBatchSize",
			op:      "  - {opcode: createPods, count: 1, signatureBatchSize: -1}",
			wantErr: `op 1 (createPods): signatureBatchSize -1 is out of range: want a count from 0 to 2147483647`,
		},
		{
			name:    "createPods with a signatureBatchSizeParam without $",
			op:      "  - {opcode: createPods, count: 1, signatureBatchSizeParam: batch}",
			wantErr: `op 1 (createPods): signatureBatchSizeParam "batch" must start with "$"`,
		},
		{
			name:    "createPods with a countMultiplierParam without $",
			op:      "  - {opcode: createPods, count: 1, countMultiplierParam: per}",
			wantErr: `op 1 (createPods): countMultiplierParam "per" must start with "$"`,
		},
		{
			name:    "createPods with a countMultiplierParam that is not a number",
			op:      "  - {opcode: createPods, count: 1, countMultiplierParam: $per}",
			params:  "per: x",
			wantErr: `op 1 (createPods): countMultiplierParam "$per": param "per" is the string "x", want a number`,
		},
		{
			name:   "createNodes with templateParams",
			op:     "  - {opcode: createNodes, count: 2, nodeTemplatePath: templates/node-params.yaml, templateParams: {zone: $zone}}",
			params: "zone: east",
			check: func(t *testing.T, op workload.Op) {
				node, err := op.(*workload.CreateNodes).Node(1)
				if err != nil {
					t.Fatal(err)
				}
				if node.Labels["zone"] != "east-1" {
					t.Errorf("labels = %v, want zone east-1", node.Labels)
				}
			},
		},
		{
			name:    "createAny with a bad template param default",
			op:      "  - {opcode: createAny, templatePath: templates/priorityclass.yaml, templateParams: {x: '$x|[1'}}",
			wantErr: `op 1 (createAny): templateParams["x"] "$x|[1": the default "[1" is not YAML`,
		},
		{
			name:   "createResourceClaims",
			op:     "  - {opcode: createResourceClaims, countParam: $claims, namespace: dra, templatePath: templates/resourceclaim.yaml}",
			params: "claims: 4",
			check: func(t *testing.T, op workload.Op) {
				rc := op.(*workload.CreateResourceClaims)
				if rc.Count != 4 || rc.Namespace != "dra" || rc.Claim == nil || rc.Claim.GenerateName != "claim-" {
					t.Errorf("op = %+v", rc)
				}
			},
		},
		{
			name:    "createResourceClaims without namespace",
			op:      "  - {opcode: createResourceClaims, count: 1, templatePath: templates/resourceclaim.yaml}",
			wantErr: `op 1 (createResourceClaims): namespace must be set`,
		},
		{
			name: "allocResourceClaims",
			op:   "  - {opcode: allocResourceClaims, namespace: dra}",
			check: func(t *testing.T, op workload.Op) {
				if a := op.(*workload.AllocResourceClaims); a.Namespace != "dra" {
					t.Errorf("namespace = %q", a.Namespace)
				}
			},
		},
		{
			name:    "createResourceDriver, removed in v1.37",
			op:      "  - {opcode: createResourceDriver, driverName: d}",
			wantErr: `op 1 (createResourceDriver): opcode "createResourceDriver" was removed from scheduler_perf: since v1.37 the DRA configs publish ResourceSlices with createAny`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op, err := selectOp(t, tt.op, tt.params)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, op)
		})
	}
}
