package workload_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

const allOps = "testdata/workloads/all-ops.yaml"

var ignoreUnexported = cmpopts.IgnoreUnexported(
	workload.CreateNodes{}, workload.CreatePods{}, workload.Objects{}, workload.CreatePodGroups{},
)

func mustLoad(t *testing.T, path string) *workload.File {
	t.Helper()
	f, err := workload.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func mustSelectOne(t *testing.T, f *workload.File, testCase, name string, opts ...workload.SelectOption) *workload.Selected {
	t.Helper()
	sel, err := f.Select(testCase, name, "", opts...)
	if err != nil {
		t.Fatal(err)
	}
	if len(sel) != 1 {
		t.Fatalf("Select(%q, %q) returned %d workloads, want 1", testCase, name, len(sel))
	}
	return sel[0]
}

func TestFile_Select_allOps(t *testing.T) {
	f := mustLoad(t, allOps)
	tpl := "testdata/workloads/templates/"
	churnNode := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"generateName": "churn-"},
		"status":   map[string]any{"capacity": map[string]any{"pods": "0"}},
	}}
	namespace := &v1.Namespace{}
	namespace.APIVersion, namespace.Kind = "v1", "Namespace"
	namespace.Labels = map[string]string{"team": "true"}

	want := []workload.Op{
		&workload.CreateNodes{OpPos: workload.OpPos{Index: 0, TemplateIndex: 0}, Count: 5},
		&workload.CreateNodes{OpPos: workload.OpPos{Index: 1, TemplateIndex: 1}, Count: 3, NodeTemplatePath: tpl + "node-zoned.yaml",
			LabelNodePrepareStrategy: &workload.LabelNodePrepareStrategy{LabelKey: "example.com/rack", LabelValues: []string{"a", "b"}}},
		&workload.CreateNamespaces{OpPos: workload.OpPos{Index: 2, TemplateIndex: 2}, Prefix: "team", Count: 2,
			NamespaceTemplatePath: tpl + "namespace.yaml", Namespace: namespace},
		&workload.CreatePods{OpPos: workload.OpPos{Index: 3, TemplateIndex: 3}, SignatureBatchSize: 1, Count: 4, Namespace: "namespace-3",
			PodTemplatePath: tpl + "pod-indexed.yaml", SkipWaitToCompletion: true},
		&workload.Barrier{OpPos: workload.OpPos{Index: 4, TemplateIndex: 4}, StageRequirement: workload.Attempted},
		&workload.Churn{OpPos: workload.OpPos{Index: 5, TemplateIndex: 5}, Mode: workload.ChurnRecreate, Number: 2,
			Interval: 250 * time.Millisecond, Namespace: "namespace-5",
			TemplatePaths: []string{tpl + "churn-node.yaml"}, Objects: []*unstructured.Unstructured{churnNode}},
		&workload.CreateAny{OpPos: workload.OpPos{Index: 6, TemplateIndex: 6}, Objects: workload.Objects{TemplatePath: tpl + "priorityclass.yaml", Count: 2}},
		&workload.UpdateAny{OpPos: workload.OpPos{Index: 7, TemplateIndex: 7}, Objects: workload.Objects{TemplatePath: tpl + "node-update.yaml", Count: 1},
			UpdatePerSecond: 5, Subresources: []string{"status"}},
		&workload.CreatePods{OpPos: workload.OpPos{Index: 8, TemplateIndex: 8}, SignatureBatchSize: 1, Count: 3, Namespace: "set-0", PodTemplatePath: tpl + "pod-static.yaml"},
		&workload.CreatePods{OpPos: workload.OpPos{Index: 9, TemplateIndex: 8}, SignatureBatchSize: 1, Count: 3, Namespace: "set-1", PodTemplatePath: tpl + "pod-static.yaml"},
		&workload.DeletePods{OpPos: workload.OpPos{Index: 10, TemplateIndex: 9}, Namespace: "set-0", DeletePodsPerSecond: 10, SkipWaitToCompletion: true},
		&workload.Sleep{OpPos: workload.OpPos{Index: 11, TemplateIndex: 10}, Duration: 100 * time.Millisecond},
		&workload.StartCollectingMetrics{OpPos: workload.OpPos{Index: 12, TemplateIndex: 11}, Name: "window",
			Namespaces: []string{"measured"}, LabelSelector: map[string]string{"app": "measured"}},
		&workload.CreatePods{OpPos: workload.OpPos{Index: 13, TemplateIndex: 12}, SignatureBatchSize: 1, Count: 6, Namespace: "measured",
			PodTemplatePath: tpl + "pod-indexed.yaml", SteadyState: true, Duration: 2 * time.Second},
		&workload.StopCollectingMetrics{OpPos: workload.OpPos{Index: 14, TemplateIndex: 13}},
		&workload.CreatePods{OpPos: workload.OpPos{Index: 15, TemplateIndex: 14}, SignatureBatchSize: 1, Count: 6, Namespace: "namespace-15",
			PodTemplatePath: tpl + "pod-indexed.yaml", CollectMetrics: true},
	}

	s := mustSelectOne(t, f, "AllOps", "small")
	if diff := cmp.Diff(want, s.Ops, ignoreUnexported); diff != "" {
		t.Errorf("ops (-want, +got):\n%s", diff)
	}
	for i, op := range s.Ops {
		if op.Pos().Index != i {
			t.Errorf("op %d: Pos().Index = %d", i, op.Pos().Index)
		}
	}
	if got, want := s.Name(), "AllOps/small"; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
	if diff := cmp.Diff([]string{"integration-test", "short"}, s.Labels); diff != "" {
		t.Errorf("labels (-want, +got):\n%s", diff)
	}
	if got, want := s.SchedulerConfigPath, tpl+"scheduler-config.yaml"; got != want {
		t.Errorf("SchedulerConfigPath = %q, want %q", got, want)
	}
	wantGates := map[string]bool{"SchedulerQueueingHints": true, "SchedulerPopFromBackoffQ": false}
	if diff := cmp.Diff(wantGates, s.FeatureGates); diff != "" {
		t.Errorf("feature gates (-want, +got):\n%s", diff)
	}
	if got := s.Threshold.Get("affinity"); got != 20 {
		t.Errorf("Threshold.Get(affinity) = %v, want 20", got)
	}
	if diff := cmp.Diff(workload.DefaultThresholdMetricSelector(), s.ThresholdMetricSelector); diff != "" {
		t.Errorf("threshold metric selector (-want, +got):\n%s", diff)
	}

	// The second workload: no pod sets, so the op indexes after them shift.
	large := mustSelectOne(t, f, "AllOps", "large")
	if got, want := len(large.Ops), len(want)-2; got != want {
		t.Fatalf("large has %d ops, want %d", got, want)
	}
	last := large.Ops[len(large.Ops)-1].(*workload.CreatePods)
	if last.Namespace != "namespace-13" || last.Pos() != (workload.OpPos{Index: 13, TemplateIndex: 14}) {
		t.Errorf("last op of large: namespace %q at %v, want namespace-13 at op 13 (template op 14)", last.Namespace, last.Pos())
	}
	wantSel := workload.ThresholdMetricSelector{Name: "scheduler_scheduling_attempt_duration_seconds",
		Labels: map[string]string{"result": "scheduled"}, DataBucket: "Perc99", ExpectLower: true}
	if diff := cmp.Diff(wantSel, large.ThresholdMetricSelector); diff != "" {
		t.Errorf("large threshold metric selector (-want, +got):\n%s", diff)
	}
	if got := large.Threshold.Get("misc"); got != 100 {
		t.Errorf("large Threshold.Get(misc) = %v, want 100", got)
	}
}

func TestCreatePods_Pod(t *testing.T) {
	s := mustSelectOne(t, mustLoad(t, allOps), "AllOps", "small")
	templated := s.Ops[3].(*workload.CreatePods)
	pod, err := templated.Pod(7, 9)
	if err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{"app": "measured", "index": "7", "half": "3", "of": "9", "bucket": "b1", "signature": "signature-label-7"}
	if diff := cmp.Diff(wantLabels, pod.Labels); diff != "" {
		t.Errorf("labels (-want, +got):\n%s", diff)
	}
	if pod.Spec.Priority == nil || *pod.Spec.Priority != 70 {
		t.Errorf("priority = %v, want 70", pod.Spec.Priority)
	}
	if got := pod.Spec.Containers[0].Resources.Requests[v1.ResourceCPU]; got.Cmp(resource.MustParse("107m")) != 0 {
		t.Errorf("cpu request = %s, want 107m", got.String())
	}

	static := s.Ops[8].(*workload.CreatePods)
	a, err := static.Pod(0, 3)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := static.Pod(1, 3)
	if a == b || a.GenerateName != "static-" || b.GenerateName != "static-" {
		t.Errorf("static template: got %p %q and %p %q, want two copies of generateName static-", a, a.GenerateName, b, b.GenerateName)
	}
	a.GenerateName = "changed-"
	if c, _ := static.Pod(2, 3); c.GenerateName != "static-" {
		t.Errorf("a caller's change leaked into the next pod: %q", c.GenerateName)
	}
}

func TestCreatePods_Pod_default(t *testing.T) {
	f, err := workload.Parse("x.yaml", []byte(`
- name: T
  workloadTemplate:
  - opcode: createPods
    count: 2
    collectMetrics: true
  workloads:
  - name: w
`))
	if err != nil {
		t.Fatal(err)
	}
	op := mustSelectOne(t, f, "T", "w").Ops[0].(*workload.CreatePods)
	if op.PodTemplatePath != "" || op.Namespace != "namespace-0" {
		t.Errorf("got template %q, namespace %q; want the default pod in namespace-0", op.PodTemplatePath, op.Namespace)
	}
	pod, err := op.Pod(0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(workload.DefaultPod(), pod); diff != "" {
		t.Errorf("pod (-want, +got):\n%s", diff)
	}
}

func TestDefaultPod(t *testing.T) {
	pod := workload.DefaultPod()
	c := pod.Spec.Containers
	if pod.GenerateName != "pod-" || len(c) != 1 || c[0].Name != "pause" || c[0].Image != "registry.k8s.io/pause:3.10.2" ||
		len(c[0].Ports) != 1 || c[0].Ports[0].ContainerPort != 80 {
		t.Fatalf("unexpected default pod: %+v", pod)
	}
	for _, list := range []v1.ResourceList{c[0].Resources.Requests, c[0].Resources.Limits} {
		if cpu, mem := list[v1.ResourceCPU], list[v1.ResourceMemory]; cpu.String() != "100m" || mem.String() != "500Mi" {
			t.Errorf("resources = %s/%s, want 100m/500Mi", cpu.String(), mem.String())
		}
	}
}

func TestCreateNodes_Node(t *testing.T) {
	s := mustSelectOne(t, mustLoad(t, allOps), "AllOps", "small")

	def, err := s.Ops[0].(*workload.CreateNodes).Node(0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(workload.DefaultNode("node-0-"), def); diff != "" {
		t.Errorf("default node (-want, +got):\n%s", diff)
	}
	st := def.Status
	for _, list := range []v1.ResourceList{st.Capacity, st.Allocatable} {
		cpu, mem, pods := list[v1.ResourceCPU], list[v1.ResourceMemory], list[v1.ResourcePods]
		if cpu.String() != "4" || mem.String() != "32Gi" || pods.String() != "110" {
			t.Errorf("default node resources = %s/%s/%s, want 4/32Gi/110", cpu.String(), mem.String(), pods.String())
		}
	}
	if st.Phase != v1.NodeRunning || len(st.Conditions) != 1 || st.Conditions[0].Type != v1.NodeReady || st.Conditions[0].Status != v1.ConditionTrue {
		t.Errorf("default node is not Running and Ready: %+v", st)
	}

	zoned, err := s.Ops[1].(*workload.CreateNodes).Node(1)
	if err != nil {
		t.Fatal(err)
	}
	cpu := zoned.Status.Capacity[v1.ResourceCPU]
	if zoned.Labels["topology.kubernetes.io/zone"] != "zone-1" || cpu.String() != "3" {
		t.Errorf("node 1: zone %q, cpu %s; want zone-1, 3", zoned.Labels["topology.kubernetes.io/zone"], cpu.String())
	}
}

func TestCreateAny_Object(t *testing.T) {
	s := mustSelectOne(t, mustLoad(t, allOps), "AllOps", "small")
	op := s.Ops[6].(*workload.CreateAny)
	obj, err := op.Object(1)
	if err != nil {
		t.Fatal(err)
	}
	if obj.GetKind() != "PriorityClass" || obj.GetName() != "class-1-of-2" || obj.Object["value"] != int64(1000) {
		t.Errorf("got %v, want PriorityClass class-1-of-2 with value 1000", obj.Object)
	}
	upd, err := s.Ops[7].(*workload.UpdateAny).Object(0)
	if err != nil {
		t.Fatal(err)
	}
	if upd.GetName() != "zoned-node" {
		t.Errorf("updateAny object name = %q", upd.GetName())
	}
}

func TestParseTemplate_Render(t *testing.T) {
	tests := []struct {
		name     string
		template string
		index    int
		count    int
		want     string
		wantErr  string
	}{
		{name: "index and count", template: "{{.Index}}/{{.Count}}", index: 3, count: 10, want: "3/10"},
		{name: "AddInt", template: `{{AddInt 1 .Index "3"}}`, index: 2, want: "6"},
		{name: "AddFloat", template: `{{AddFloat 1.5 .Index}}`, index: 2, want: "3.5"},
		{name: "SubtractInt", template: `{{SubtractInt .Count .Index}}`, index: 3, count: 10, want: "7"},
		{name: "SubtractFloat", template: `{{SubtractFloat 1 0.25}}`, want: "0.75"},
		{name: "MultiplyInt", template: `{{MultiplyInt .Index 2 3}}`, index: 2, want: "12"},
		{name: "MultiplyFloat", template: `{{MultiplyFloat .Index 0.5}}`, index: 3, want: "1.5"},
		{name: "DivideInt truncates", template: `{{DivideInt .Index 5}}`, index: 14, want: "2"},
		{name: "DivideFloat", template: `{{DivideFloat .Index 4}}`, index: 3, want: "0.75"},
		{name: "Mod", template: `{{Mod .Index 3}}`, index: 7, want: "1"},
		{name: "no html escaping, as upstream v1.37", template: `{{"a<b"}}`, want: "a<b"},
		{name: "Int", template: `{{Int "7"}}/{{Int 2.9}}`, want: "7/2"},
		{name: "JSON", template: `{{JSON "a<b"}}`, want: `"a<b"`},
		{name: "division by zero", template: `{{DivideInt 1 0}}`, wantErr: "division by zero"},
		{name: "not a number", template: `{{AddInt "x"}}`, wantErr: "cannot cast x to float64"},
		{name: "unknown function", template: `{{Foo 1}}`, wantErr: `function "Foo" not defined`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := workload.ParseTemplate("t.yaml", []byte(tt.template))
			var got []byte
			if err == nil {
				got, err = tmpl.Render(tt.index, tt.count)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFile_Select_filters(t *testing.T) {
	f, err := workload.Parse("x.yaml", []byte(`
- name: A
  labels: [performance]
  workloadTemplate:
  - {opcode: createPods, count: 1, collectMetrics: true}
  workloads:
  - {name: a1, labels: [short]}
  - {name: a2}
- name: B
  workloadTemplate:
  - {opcode: createPods, count: 1, collectMetrics: true}
  workloads:
  - {name: b1, labels: [integration-test, short]}
  - {name: a2, labels: [integration-test, performance]}
`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, testCase, workload, filter string
		want                             []string
		wantErr                          string
	}{
		{name: "everything", want: []string{"A/a1", "A/a2", "B/b1", "B/a2"}},
		{name: "test case", testCase: "B", want: []string{"B/b1", "B/a2"}},
		{name: "workload in any test case", workload: "a2", want: []string{"A/a2", "B/a2"}},
		{name: "both names", testCase: "A", workload: "a2", want: []string{"A/a2"}},
		{name: "perf default", filter: workload.DefaultPerfLabelFilter, want: []string{"A/a1", "A/a2", "B/a2"}},
		{name: "perf short", filter: workload.ShortLabelFilter(workload.DefaultPerfLabelFilter), want: []string{"A/a1"}},
		{name: "integration default", filter: workload.DefaultIntegrationLabelFilter, want: []string{"B/b1"}},
		{name: "exclusion", filter: "-short", want: []string{"A/a2", "B/a2"}},
		{name: "no such test case", testCase: "C", wantErr: `x.yaml: no test case "C" (the file has "A", "B")`},
		{name: "no such workload", testCase: "A", workload: "b1", wantErr: `x.yaml: test case "A" has no workload "b1" (it has "a1", "a2")`},
		{name: "no such workload anywhere", workload: "zz", wantErr: `x.yaml: no test case has a workload "zz"`},
		{name: "filter excludes all", filter: "nightly", wantErr: `x.yaml: no workload passes label filter "nightly"`},
		{name: "filter excludes the named one", testCase: "B", workload: "b1", filter: "performance",
			wantErr: `x.yaml: no workload named by test case "B", workload "b1" passes label filter "performance"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := f.Select(tt.testCase, tt.workload, tt.filter)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %s", err, tt.wantErr)
				}
				if !errors.Is(err, workload.ErrNoMatch) {
					t.Errorf("error does not wrap ErrNoMatch")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range sel {
				got = append(got, s.Name())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("selected (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestMatchLabels(t *testing.T) {
	// Upstream's TestLabelFilter, plus the prefix edge cases.
	tests := []struct {
		filter string
		labels string
		want   bool
	}{
		{"", "", true},
		{"", "performance", true},
		{"", "performance,fast", true},
		{"performance", "", false},
		{"performance", "performance", true},
		{"performance", "performance,fast", true},
		{"performance,fast", "", false},
		{"performance,fast", "performance", false},
		{"performance,fast", "performance,fast", true},
		{"-fast", "", true},
		{"-fast", "performance", true},
		{"-fast", "performance,fast", false},
		{"+performance,-fast", "", false},
		{"+performance,-fast", "performance", true},
		{"+performance,-fast", "performance,fast", false},
		{"performance,,", "performance", true},
		{"performance,+short", "performance", false},
		{"performance,+short", "performance,short", true},
	}
	for _, tt := range tests {
		t.Run(tt.filter+"/"+tt.labels, func(t *testing.T) {
			var labels []string
			if tt.labels != "" {
				labels = strings.Split(tt.labels, ",")
			}
			if got := workload.MatchLabels(tt.filter, labels...); got != tt.want {
				t.Errorf("MatchLabels(%q, %q) = %v, want %v", tt.filter, labels, got, tt.want)
			}
		})
	}
}

func TestSelected_EffectiveFeatureGates(t *testing.T) {
	tests := []struct {
		name          string
		gates         map[string]bool
		wantGates     map[string]bool
		wantEmulation string
	}{
		{name: "none", gates: nil,
			wantGates: map[string]bool{}},
		{name: "batching left alone", gates: map[string]bool{"OpportunisticBatching": true},
			wantGates: map[string]bool{"OpportunisticBatching": true}},
		{name: "declared features on", gates: map[string]bool{"NodeDeclaredFeatures": true},
			wantGates: map[string]bool{"NodeDeclaredFeatures": true}},
		{name: "declared features off", gates: map[string]bool{"NodeDeclaredFeatures": false},
			wantGates: map[string]bool{"NodeDeclaredFeatures": false}, wantEmulation: "1.36"},
		// A v1.36 file turning the removed SchedulerQueueingHints off gets no
		// emulation: the control plane refuses the unknown gate itself.
		{name: "hints off", gates: map[string]bool{"SchedulerQueueingHints": false},
			wantGates: map[string]bool{"SchedulerQueueingHints": false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &workload.Selected{FeatureGates: tt.gates}
			gates, emulation := s.EffectiveFeatureGates()
			if diff := cmp.Diff(tt.wantGates, gates); diff != "" {
				t.Errorf("gates (-want, +got):\n%s", diff)
			}
			if emulation != tt.wantEmulation {
				t.Errorf("emulation version = %q, want %q", emulation, tt.wantEmulation)
			}
		})
	}
}

func TestFile_Select_featureGatesAndCollector(t *testing.T) {
	f, err := workload.Parse("x.yaml", []byte(`
- name: T
  featureGates: {SchedulerQueueingHints: false, A: true, B: false}
  workloadTemplate:
  - {opcode: createPods, count: 1, collectMetrics: true}
  workloads:
  - {name: inherit}
  - {name: override, featureGates: {SchedulerQueueingHints: true, B: true}}
- name: Custom
  metricsCollectorConfig:
    metrics:
      scheduler_scheduling_attempt_duration_seconds:
      - {label: result, values: [scheduled]}
      scheduler_pod_scheduling_sli_duration_seconds: null
  defaultThresholdMetricSelector: {name: scheduler_pod_scheduling_sli_duration_seconds, dataBucket: Perc99, expectLower: true}
  workloadTemplate:
  - {opcode: createPods, count: 1, collectMetrics: true}
  workloads:
  - {name: w, threshold: 5}
`))
	if err != nil {
		t.Fatal(err)
	}
	sel, err := f.Select("", "", "")
	if err != nil {
		t.Fatal(err)
	}
	inherit, override, custom := sel[0], sel[1], sel[2]
	if diff := cmp.Diff(map[string]bool{"SchedulerQueueingHints": false, "A": true, "B": false}, inherit.FeatureGates); diff != "" {
		t.Errorf("inherit gates (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]bool{"SchedulerQueueingHints": true, "A": true, "B": true}, override.FeatureGates); diff != "" {
		t.Errorf("override gates (-want, +got):\n%s", diff)
	}
	// v1.37.2's harness collects the queueing hint histograms whatever the
	// (removed) SchedulerQueueingHints gate says.
	for _, s := range []*workload.Selected{inherit, override} {
		if _, ok := s.MetricsCollectorConfig.Metrics["scheduler_queueing_hint_execution_duration_seconds"]; !ok {
			t.Errorf("%s: queueing hint histograms not collected", s.Workload)
		}
	}
	wantMCC := &workload.MetricsCollectorConfig{Metrics: map[string][]*workload.LabelValues{
		"scheduler_scheduling_attempt_duration_seconds": {{Label: "result", Values: []string{"scheduled"}}},
		"scheduler_pod_scheduling_sli_duration_seconds": nil,
	}}
	if diff := cmp.Diff(wantMCC, custom.MetricsCollectorConfig); diff != "" {
		t.Errorf("custom collector config (-want, +got):\n%s", diff)
	}
	wantSel := workload.ThresholdMetricSelector{Name: "scheduler_pod_scheduling_sli_duration_seconds", DataBucket: "Perc99", ExpectLower: true}
	if diff := cmp.Diff(wantSel, custom.ThresholdMetricSelector); diff != "" {
		t.Errorf("defaulted selector (-want, +got):\n%s", diff)
	}
}

func TestThreshold_Get(t *testing.T) {
	th := workload.Threshold{Value: 270, ByTopic: map[string]float64{"affinity": 100, "misc": 0}}
	for topic, want := range map[string]float64{"affinity": 100, "misc": 0, "dra": 270, "": 270} {
		if got := th.Get(topic); got != want {
			t.Errorf("Get(%q) = %v, want %v", topic, got, want)
		}
	}
}

func TestUniqueLabelCombos(t *testing.T) {
	// Upstream's Test_uniqueLVCombos.
	tests := []struct {
		name string
		lvs  []*workload.LabelValues
		want []map[string]string
	}{
		{name: "empty input", lvs: []*workload.LabelValues{}, want: []map[string]string{{}}},
		{name: "single label, multiple values",
			lvs:  []*workload.LabelValues{{Label: "A", Values: []string{"a1", "a2"}}},
			want: []map[string]string{{"A": "a1"}, {"A": "a2"}}},
		{name: "multiple labels, single value each",
			lvs:  []*workload.LabelValues{{Label: "A", Values: []string{"a1"}}, {Label: "B", Values: []string{"b1"}}},
			want: []map[string]string{{"A": "a1", "B": "b1"}}},
		{name: "multiple labels, multiple values",
			lvs: []*workload.LabelValues{{Label: "A", Values: []string{"a1", "a2"}}, {Label: "B", Values: []string{"b1", "b2"}}},
			want: []map[string]string{
				{"A": "a1", "B": "b1"}, {"A": "a1", "B": "b2"}, {"A": "a2", "B": "b1"}, {"A": "a2", "B": "b2"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, workload.UniqueLabelCombos(tt.lvs)); diff != "" {
				t.Errorf("(-want, +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultMetricsCollectorConfig(t *testing.T) {
	withHints := workload.DefaultMetricsCollectorConfig()
	without := workload.DefaultMetricsCollectorConfig()
	if got, want := len(withHints.Metrics), 8; got != want {
		t.Errorf("%d metrics, want %d (v1.37.2's default)", got, want)
	}
	combos := workload.UniqueLabelCombos(withHints.Metrics["scheduler_plugin_execution_duration_seconds"])
	if got, want := len(combos), 19*19; got != want {
		t.Errorf("plugin × extension point combos = %d, want %d", got, want)
	}
	// Callers may change what they get.
	without.Metrics["scheduler_scheduling_attempt_duration_seconds"][0].Values[0] = "changed"
	if v := workload.DefaultMetricsCollectorConfig().Metrics["scheduler_scheduling_attempt_duration_seconds"][0].Values[0]; v != "scheduled" {
		t.Errorf("default config was changed through a returned copy: %q", v)
	}
}

func TestSelected_Param(t *testing.T) {
	s := &workload.Selected{Params: map[string]any{"n": 5.0, "s": "x"}}
	if n, err := s.Param("n"); err != nil || n != 5 {
		t.Errorf("Param(n) = %d, %v", n, err)
	}
	if _, err := s.Param("s"); err == nil {
		t.Errorf("Param(s) of a string: no error")
	}
	if _, err := s.Param("missing"); err == nil {
		t.Errorf("Param(missing): no error")
	}
}
