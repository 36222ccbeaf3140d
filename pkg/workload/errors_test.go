package workload_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// ok is a test case that parses, for tests that break something else.
const okHead = `
- name: Foo
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodes
  - opcode: createPods
    countParam: $pods
    collectMetrics: true
`

func TestParse_errors(t *testing.T) {
	tests := []struct {
		name    string
		content string
		wantErr string
	}{
		{name: "empty file", content: "",
			wantErr: `workloads/x.yaml: no test cases defined`},
		{name: "not a list", content: "name: Foo\n",
			wantErr: `workloads/x.yaml: got object, want a list (a config file is a list of test cases)`},
		{name: "yaml syntax", content: "- name: Foo\n  labels: [a\n",
			wantErr: `workloads/x.yaml: yaml: line 2: did not find expected ',' or ']'`},
		{name: "duplicate key", content: "- name: Foo\n  name: Bar\n",
			wantErr: `workloads/x.yaml: yaml: unmarshal errors: line 2: key "name" already set in map`},
		{name: "unknown test case field", content: "- name: Foo\n  workload: []\n",
			wantErr: `workloads/x.yaml: test case "Foo": unknown field "workload"`},
		{name: "unknown field in a later test case", content: okHead + "  workloads: [{name: w}]\n- name: Bar\n  featureGate: {}\n",
			wantErr: `workloads/x.yaml: test case "Bar": unknown field "featureGate"`},
		{name: "unnamed test case", content: "- labels: 5\n",
			wantErr: `workloads/x.yaml: test case 0: labels: got number, want a list`},
		{name: "null test case", content: okHead + "  workloads: [{name: w}]\n- null\n",
			wantErr: `workloads/x.yaml: test case 1: test case is null`},
		{name: "unknown workload field", content: okHead + "  workloads:\n  - name: bar\n    param: {nodes: 1}\n",
			wantErr: `workloads/x.yaml: test case "Foo", workload "bar": unknown field "param"`},
		{name: "wrong workload field type", content: okHead + "  workloads:\n  - name: bar\n    labels: performance\n",
			wantErr: `workloads/x.yaml: test case "Foo", workload "bar": labels: got string, want a list`},
		{name: "threshold of the wrong type", content: okHead + "  workloads:\n  - name: bar\n    threshold: [1]\n",
			wantErr: `workloads/x.yaml: test case "Foo", workload "bar": threshold: got array, want a number or a map from topic to number`},
		{name: "null workload", content: okHead + "  workloads:\n  - null\n",
			wantErr: `workloads/x.yaml: test case "Foo", workload 0: workload is null`},
		{name: "unknown opcode", content: "- name: Foo\n  workloadTemplate:\n  - opcode: createPod\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 0: unknown opcode "createPod" (want one of createNodes, createNamespaces, createPods, createPodSets, deletePods, churn, barrier, sleep, startCollectingMetrics, stopCollectingMetrics, createAny, updateAny, createPodGroups, startCollectingProfile, stopCollectingProfile, createResourceClaims, allocResourceClaims)`},
		{name: "no opcode", content: "- name: Foo\n  workloadTemplate:\n  - count: 1\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 0: no opcode (want one of createNodes, createNamespaces, createPods, createPodSets, deletePods, churn, barrier, sleep, startCollectingMetrics, stopCollectingMetrics, createAny, updateAny, createPodGroups, startCollectingProfile, stopCollectingProfile, createResourceClaims, allocResourceClaims)`},
		{name: "unknown op field", content: okHead + "  - opcode: barrier\n    namespace: a\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 2 (barrier): unknown field "namespace"`},
		{name: "unknown field in a nested op struct", content: okHead + "  - opcode: createNodes\n    count: 1\n    uniqueNodeLabelStrategy: {labelKey: a, value: b}\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 2 (createNodes): unknown field "value"`},
		{name: "wrong op field type", content: okHead + "  - opcode: createPods\n    count: many\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 2 (createPods): count: got string, want an integer`},
		{name: "nested op field type", content: okHead + "  - opcode: createNodes\n    count: 1\n    nodeAllocatableStrategy: {migratedPlugins: x}\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 2 (createNodes): nodeAllocatableStrategy.migratedPlugins: got string, want a list`},
		{name: "YAML boolean for a string", content: okHead + "  - opcode: createPods\n    countParam: n\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 2 (createPods): countParam: got bool, want a string (YAML reads unquoted y, n, yes, no, on, off, true and false as booleans: quote it)`},
		{name: "countParam without $", content: okHead + "  - opcode: createPods\n    countParam: pods\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 2 (createPods): countParam "pods" must start with "$" (it names a param: "$name")`},
		{name: "negative count", content: okHead + "  - opcode: createNamespaces\n    prefix: ns\n    count: -1\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 2 (createNamespaces): count -1 is out of range: want a count from 0 to 2147483647`},
		{name: "a count that overflows", content: okHead + "  - opcode: createPods\n    count: 30000000000\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 2 (createPods): count 30000000000 is out of range: want a count from 0 to 2147483647`},
		{name: "a negative duration", content: okHead + "  - opcode: createPods\n    count: 1\n    duration: -6s\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 2 (createPods): duration -6s is out of range: want a duration of 0s or more`},
		{name: "a negative sleep", content: okHead + "  - opcode: sleep\n    duration: -6s\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 2 (sleep): duration -6s is out of range: want a duration of 0s or more`},
		{name: "collectMetrics and skipWaitToCompletion", content: okHead + "  - opcode: createPods\n    count: 1\n    collectMetrics: true\n    skipWaitToCompletion: true\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 2 (createPods): collectMetrics and skipWaitToCompletion cannot both be true`},
		{name: "skipWaitToCompletion and steadyState", content: okHead + "  - opcode: createPods\n    count: 1\n    steadyState: true\n    skipWaitToCompletion: true\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 2 (createPods): skipWaitToCompletion and steadyState cannot both be true`},
		{name: "duration is a string", content: okHead + "  - opcode: sleep\n    duration: 5\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 2 (sleep): duration: got number, want a string`},
		{name: "bad duration", content: okHead + "  - opcode: sleep\n    duration: 5 minutes\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 2 (sleep): time: unknown unit " minutes" in duration "5 minutes"`},
		{name: "churn mode", content: okHead + "  - opcode: churn\n    mode: delete\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 2 (churn): mode "delete" is not one of recreate, create`},
		{name: "churn recreate needs a number", content: okHead + "  - opcode: churn\n    mode: recreate\n    templatePaths: [a.yaml]\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 2 (churn): number must be > 0 when mode is recreate`},
		{name: "churn without templates", content: okHead + "  - opcode: churn\n    mode: create\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 2 (churn): templatePaths must name at least one file`},
		{name: "barrier stage", content: okHead + "  - opcode: barrier\n    stageRequirement: Bound\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 2 (barrier): stageRequirement "Bound" is not one of Scheduled, Attempted`},
		{name: "start without namespaces", content: okHead + "  - opcode: startCollectingMetrics\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 2 (startCollectingMetrics): namespaces must name at least one namespace`},
		{name: "createAny without template", content: okHead + "  - opcode: createAny\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 2 (createAny): templatePath must be set`},
		{name: "updateAny rate", content: okHead + "  - opcode: updateAny\n    templatePath: a.yaml\n    updatePerSecond: -1\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 2 (updateAny): updatePerSecond must not be negative, got -1`},
		{name: "deletePods rate", content: okHead + "  - opcode: deletePods\n    namespace: a\n    deletePodsPerSecond: -2\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 2 (deletePods): deletePodsPerSecond must not be negative, got -2`},
		{name: "createPodSets inner op", content: okHead + "  - opcode: createPodSets\n    count: 2\n    createPodsOp: {opcode: createPods, count: -1}\n",
			wantErr: `workloads/x.yaml: test case "Foo", op 2 (createPodSets): createPodsOp: count -1 is out of range: want a count from 0 to 2147483647`},
		{name: "null collector label values", content: "- name: Foo\n  metricsCollectorConfig:\n    metrics:\n      m: [null]\n",
			wantErr: `workloads/x.yaml: test case "Foo": metricsCollectorConfig.metrics["m"][0] is null`},
		{name: "duplicate test case", content: okHead + "  workloads: [{name: w}]\n" + okHead + "  workloads: [{name: w}]\n",
			wantErr: `workloads/x.yaml: test case "Foo": test case name is not unique`},
		{name: "no workloads", content: okHead,
			wantErr: `workloads/x.yaml: test case "Foo": no workloads defined`},
		{name: "duplicate workload", content: okHead + "  workloads: [{name: w}, {name: w}]\n",
			wantErr: `workloads/x.yaml: test case "Foo", workload "w": workload name is not unique in its test case`},
		{name: "no ops", content: "- name: Foo\n  workloads: [{name: w}]\n",
			wantErr: `workloads/x.yaml: test case "Foo": no ops defined in workloadTemplate`},
		{name: "no metrics", content: "- name: Foo\n  workloadTemplate: [{opcode: createNodes, count: 1}]\n  workloads: [{name: w}]\n",
			wantErr: `workloads/x.yaml: test case "Foo": no op in the workloadTemplate collects metrics (set collectMetrics: true on a createPods, or use startCollectingMetrics and stopCollectingMetrics)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := workload.Parse("workloads/x.yaml", []byte(tt.content))
			if err == nil {
				t.Fatalf("no error, want %s", tt.wantErr)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("error:\n got %s\nwant %s", err, tt.wantErr)
			}
			var e *workload.Error
			if !errors.As(err, &e) {
				t.Errorf("error is %T, want *workload.Error", err)
			}
		})
	}
}

func TestParse_removedOps(t *testing.T) {
	_, err := workload.Parse("dra/x.yaml", []byte(okHead+"  - opcode: createResourceDriver\n  workloads: [{name: w}]\n"))
	want := `dra/x.yaml: test case "Foo", op 2 (createResourceDriver): opcode "createResourceDriver" was removed from scheduler_perf: since v1.37 the DRA configs publish ResourceSlices with createAny and a ResourceSlice template`
	if err == nil || err.Error() != want {
		t.Errorf("error:\n got %v\nwant %s", err, want)
	}
}

// TestParse_keys checks upstream's decoding quirks: keys match Go field
// names without regard to case, and numbers become strings where a test
// case or workload wants a string, but not inside ops.
func TestParse_keys(t *testing.T) {
	f, err := workload.Parse("x.yaml", []byte(`
- NAME: Foo
  Labels: [1, true]
  WORKLOADTEMPLATE:
  - OpCode: createPods
    COUNTparam: $pods
    CollectMetrics: true
  workloads:
  - name: 5000
    Params: {pods: 3}
`))
	if err != nil {
		t.Fatal(err)
	}
	tc := f.TestCases[0]
	if tc.Name != "Foo" || strings.Join(tc.Labels, ",") != "1,true" || tc.Workloads[0].Name != "5000" {
		t.Errorf("got test case %q labels %q workload %q; want Foo, [1 true], 5000", tc.Name, tc.Labels, tc.Workloads[0].Name)
	}
	s := mustSelectOne(t, f, "Foo", "5000")
	if got := s.Ops[0].(*workload.CreatePods).Count; got != 3 {
		t.Errorf("count = %d, want 3", got)
	}

	_, err = workload.Parse("x.yaml", []byte(okHead+"  - opcode: createPods\n    count: 1\n    namespace: 5\n"))
	if want := `x.yaml: test case "Foo", op 2 (createPods): namespace: got number, want a string`; err == nil || err.Error() != want {
		t.Errorf("a number for an op's string: error = %v, want %s", err, want)
	}
}

// writeFiles writes files (path → content) into a temporary directory and
// returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const (
	podYAML  = "apiVersion: v1\nkind: Pod\nmetadata:\n  generateName: p-\nspec:\n  containers:\n  - name: c\n    image: i\n"
	nodeYAML = "apiVersion: v1\nkind: Node\nmetadata:\n  generateName: n-\n"
	pvcYAML  = "apiVersion: v1\nkind: PersistentVolumeClaim\nspec:\n  accessModes: [ReadWriteOnce]\n"
	pvYAML   = "apiVersion: v1\nkind: PersistentVolume\nspec:\n  capacity: {storage: 1Gi}\n"
)

func TestFile_Select_errors(t *testing.T) {
	templates := map[string]string{
		"t/pod.yaml":         podYAML,
		"t/node.yaml":        nodeYAML,
		"t/pvc.yaml":         pvcYAML,
		"t/pv.yaml":          pvYAML,
		"t/bad-pod.yaml":     "apiVersion: v1\nkind: Pod\nspec:\n  containerz: []\n",
		"t/bad-func.yaml":    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p-{{DivideInt .Index 0}}\n",
		"t/bad-syntax.yaml":  "metadata: {{.Index\n",
		"t/no-kind.yaml":     "metadata:\n  name: x\n",
		"t/sched.yaml":       "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
		"t/not-sched.yaml":   "apiVersion: v1\nkind: ConfigMap\n",
		"t/namespace.yaml":   "apiVersion: v1\nkind: Namespace\nmetadata:\n  labelz: {}\n",
		"t/churn-nokind.yml": "metadata:\n  generateName: x-\n",
	}
	head := func(extra string) string {
		return "- name: Foo\n" + extra + "  workloadTemplate:\n  - opcode: createPods\n    count: 1\n    collectMetrics: true\n"
	}
	tests := []struct {
		name    string
		config  string
		wantErr string // with DIR for the temporary directory
	}{
		{name: "param not defined",
			config:  head("") + "  - opcode: createPods\n    countParam: $n\n  workloads:\n  - name: bar\n    params: {m: 1}\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (createPods): countParam "$n" is not defined in params`},
		{name: "reference without $ on a field upstream does not check",
			config:  head("") + "  - opcode: sleep\n    durationParam: pause\n  workloads:\n  - name: bar\n    params: {pause: 1s}\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (sleep): durationParam "pause" is not defined in params (a reference is "$" and a param's name; this one looked up "ause")`},
		{name: "count param of the wrong type",
			config:  head("") + "  - opcode: createNodes\n    countParam: $nodes\n  workloads:\n  - name: bar\n    params: {nodes: \"5\"}\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (createNodes): countParam "$nodes": param "nodes" is the string "5", want a number`},
		{name: "duration param of the wrong type",
			config:  head("") + "  - opcode: sleep\n    durationParam: $d\n  workloads:\n  - name: bar\n    params: {d: 10}\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (sleep): durationParam "$d": param "d" is the number 10, want a duration string such as "30s"`},
		{name: "duration param unparsable",
			config:  head("") + "  - opcode: sleep\n    durationParam: $d\n  workloads:\n  - name: bar\n    params: {d: soon}\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (sleep): durationParam "$d": param "d": time: invalid duration "soon"`},
		{name: "steadyState param of the wrong type",
			config:  head("") + "  - opcode: createPods\n    count: 1\n    duration: 1s\n    steadyStateParam: $s\n  workloads:\n  - name: bar\n    params: {s: \"true\"}\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (createPods): steadyStateParam "$s": param "s" is the string "true", want a boolean`},
		{name: "steadyState without duration after binding",
			config:  head("") + "  - opcode: createPods\n    count: 1\n    steadyStateParam: $s\n  workloads:\n  - name: bar\n    params: {s: true}\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (createPods): steadyState needs a duration > 0, got 0s`},
		{name: "negative count from a param",
			config:  head("") + "  - opcode: createNodes\n    countParam: $n\n  workloads:\n  - name: bar\n    params: {\"n\": -3}\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (createNodes): countParam "$n": param "n" is -3, out of range: want a count from 0 to 2147483647`},
		{name: "a count that overflows from a param",
			config:  head("") + "  - opcode: createNodes\n    countParam: $n\n  workloads:\n  - name: bar\n    params: {\"n\": 1e30}\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (createNodes): countParam "$n": param "n" is 1e+30, out of range: want a count from 0 to 2147483647`},
		{name: "a negative duration from a param",
			config:  head("") + "  - opcode: createPods\n    count: 1\n    durationParam: $cycle\n  workloads:\n  - name: bar\n    params: {cycle: -6s}\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (createPods): durationParam "$cycle": param "cycle" is -6s, out of range: want a duration of 0s or more`},
		{name: "unused param",
			config:  head("") + "  workloads:\n  - name: bar\n    params: {nodes: 1}\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar": param "nodes" is defined but no op uses it (check for a typo; if upstream reads it in Go test code, the workload needs that code too)`},
		{name: "unused params",
			config:  head("") + "  workloads:\n  - name: bar\n    params: {b: 1, a: 2}\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar": params "a", "b" are defined but no op uses them (check for typos; if upstream reads them in Go test code, the workload needs that code too)`},
		{name: "pod set params unused when there are no sets",
			config:  head("") + "  - opcode: createPodSets\n    countParam: $sets\n    namespacePrefix: s\n    createPodsOp: {opcode: createPods, countParam: $per}\n  workloads:\n  - name: bar\n    params: {sets: 0, per: 2}\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar": param "per" is defined but no op uses it (check for a typo; if upstream reads it in Go test code, the workload needs that code too)`},
		{name: "pod set inner param",
			config:  head("") + "  - opcode: createPodSets\n    count: 2\n    namespacePrefix: s\n    createPodsOp: {opcode: createPods, countParam: $per}\n  workloads:\n  - name: bar\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (createPodSets): pod set 0 (namespace "s-0"): countParam "$per" is not defined in params`},
		{name: "negative threshold",
			config:  head("") + "  workloads:\n  - name: bar\n    threshold: -1\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar": threshold must not be negative, got -1`},
		{name: "negative topic threshold",
			config:  head("") + "  workloads:\n  - name: bar\n    threshold: {misc: 1, affinity: -2}\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar": threshold for topic "affinity" must not be negative, got -2`},
		{name: "selector without bucket",
			config:  head("") + "  workloads:\n  - name: bar\n    thresholdMetricSelector: {name: SchedulingThroughput}\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar": thresholdMetricSelector for "SchedulingThroughput": dataBucket must be set`},
		{name: "selector on a metric not collected",
			config:  head("") + "  workloads:\n  - name: bar\n    thresholdMetricSelector: {name: scheduler_nope, dataBucket: Average}\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar": thresholdMetricSelector: metric "scheduler_nope" is not collected (add it to metricsCollectorConfig)`},
		{name: "selector labels not collected",
			config:  head("") + "  workloads:\n  - name: bar\n    thresholdMetricSelector: {name: scheduler_scheduling_attempt_duration_seconds, labels: {result: maybe}, dataBucket: Average}\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar": thresholdMetricSelector: no collected label combination of metric "scheduler_scheduling_attempt_duration_seconds" matches labels map[result:maybe]`},
		{name: "selector of a metric no collector has",
			config:  head("") + "  workloads:\n  - name: bar\n    thresholdMetricSelector: {name: scheduler_no_such_metric, dataBucket: Average}\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar": thresholdMetricSelector: metric "scheduler_no_such_metric" is not collected (add it to metricsCollectorConfig)`},
		{name: "missing template",
			config:  head("") + "  - opcode: createPods\n    count: 1\n    podTemplatePath: t/missing.yaml\n  workloads:\n  - name: bar\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (createPods): podTemplatePath: open DIR/t/missing.yaml: no such file or directory`},
		{name: "missing default template",
			config:  head("  defaultPodTemplatePath: t/missing.yaml\n") + "  workloads:\n  - name: bar\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 0 (createPods): defaultPodTemplatePath: open DIR/t/missing.yaml: no such file or directory`},
		{name: "empty template path",
			config:  head("") + "  - opcode: createNodes\n    count: 1\n    nodeTemplatePath: \"\"\n  workloads:\n  - name: bar\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (createNodes): nodeTemplatePath is empty`},
		{name: "template with an unknown field",
			config:  head("") + "  - opcode: createPods\n    count: 3\n    podTemplatePath: t/bad-pod.yaml\n  workloads:\n  - name: bar\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (createPods): podTemplatePath: DIR/t/bad-pod.yaml (.Index=0, .Count=3): unknown field "containerz"`},
		{name: "template function fails",
			config:  head("") + "  - opcode: createPods\n    count: 1\n    podTemplatePath: t/bad-func.yaml\n  workloads:\n  - name: bar\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (createPods): podTemplatePath: DIR/t/bad-func.yaml: template: bad-func.yaml:4:12: executing "bad-func.yaml" at <DivideInt .Index 0>: error calling DivideInt: division by zero`},
		{name: "template syntax",
			config:  head("") + "  - opcode: createNodes\n    count: 1\n    nodeTemplatePath: t/bad-syntax.yaml\n  workloads:\n  - name: bar\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (createNodes): nodeTemplatePath: template: bad-syntax.yaml:2: unclosed action started at bad-syntax.yaml:1`},
		{name: "createAny object without kind",
			config:  head("") + "  - opcode: createAny\n    templatePath: t/no-kind.yaml\n  workloads:\n  - name: bar\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (createAny): templatePath: DIR/t/no-kind.yaml (.Index=0, .Count=1): no kind: want an object with apiVersion and kind`},
		{name: "churn template without kind",
			config:  head("") + "  - opcode: churn\n    mode: create\n    templatePaths: [t/churn-nokind.yml]\n  workloads:\n  - name: bar\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (churn): templatePaths[0]: DIR/t/churn-nokind.yml: no kind: want an object with apiVersion and kind`},
		{name: "namespace template with an unknown field",
			config:  head("") + "  - opcode: createNamespaces\n    prefix: a\n    count: 1\n    namespaceTemplatePath: t/namespace.yaml\n  workloads:\n  - name: bar\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (createNamespaces): namespaceTemplatePath: DIR/t/namespace.yaml: unknown field "labelz"`},
		{name: "PVC without PV",
			config:  head("") + "  - opcode: createPods\n    count: 1\n    persistentVolumeClaimTemplatePath: t/pvc.yaml\n  workloads:\n  - name: bar\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (createPods): persistentVolumeClaimTemplatePath needs a persistentVolumeTemplatePath too`},
		{name: "empty namespace",
			config:  head("") + "  - opcode: createPods\n    count: 1\n    namespace: \"\"\n  workloads:\n  - name: bar\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (createPods): namespace is empty (leave it out for the default "namespace-<op index>")`},
		{name: "negative churn interval",
			config:  head("") + "  - opcode: churn\n    mode: create\n    intervalMilliseconds: -5\n    templatePaths: [t/node.yaml]\n  workloads:\n  - name: bar\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (churn): intervalMilliseconds must not be negative, got -5`},
		{name: "label strategy without values",
			config:  head("") + "  - opcode: createNodes\n    count: 1\n    labelNodePrepareStrategy: {labelKey: a}\n  workloads:\n  - name: bar\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (createNodes): labelNodePrepareStrategy.labelValues must not be empty`},
		{name: "allocatable quantity",
			config:  head("") + "  - opcode: createNodes\n    count: 1\n    nodeAllocatableStrategy: {nodeAllocatable: {cpu: lots}}\n  workloads:\n  - name: bar\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (createNodes): nodeAllocatableStrategy.nodeAllocatable["cpu"]: "lots" is not a quantity: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`},
		{name: "stop without start",
			config:  head("") + "  - opcode: stopCollectingMetrics\n  workloads:\n  - name: bar\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 1 (stopCollectingMetrics): stopCollectingMetrics without a startCollectingMetrics before it`},
		{name: "overlapping windows",
			config:  head("") + "  - opcode: startCollectingMetrics\n    namespaces: [a]\n  - opcode: startCollectingMetrics\n    namespaces: [b]\n  workloads:\n  - name: bar\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 2 (startCollectingMetrics): startCollectingMetrics while another window is open: metrics collection would overlap`},
		{name: "collectMetrics inside a window",
			config:  head("") + "  - opcode: startCollectingMetrics\n    namespaces: [a]\n  - opcode: createPods\n    count: 1\n    collectMetrics: true\n  workloads:\n  - name: bar\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar", op 2 (createPods): collectMetrics while a startCollectingMetrics window is open: metrics collection would overlap`},
		{name: "scheduler config missing",
			config:  head("  schedulerConfigPath: t/nope.yaml\n") + "  workloads:\n  - name: bar\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar": schedulerConfigPath: open DIR/t/nope.yaml: no such file or directory`},
		{name: "scheduler config of another kind",
			config:  head("  schedulerConfigPath: t/not-sched.yaml\n") + "  workloads:\n  - name: bar\n",
			wantErr: `DIR/x.yaml: test case "Foo", workload "bar": schedulerConfigPath: DIR/t/not-sched.yaml: kind is "ConfigMap", want KubeSchedulerConfiguration`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"x.yaml": tt.config}
			for k, v := range templates {
				files[k] = v
			}
			dir := writeFiles(t, files)
			f, err := workload.Load(filepath.Join(dir, "x.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.Select("", "", "")
			if err == nil {
				t.Fatalf("no error, want %s", tt.wantErr)
			}
			if got := strings.ReplaceAll(err.Error(), dir, "DIR"); got != tt.wantErr {
				t.Errorf("error:\n got %s\nwant %s", got, tt.wantErr)
			}
			var e *workload.Error
			if !errors.As(err, &e) {
				t.Errorf("error is %T, want *workload.Error", err)
			}
		})
	}
}

func TestFile_Select_files(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"w/x.yaml": `
- name: Foo
  schedulerConfigPath: ../t/sched.yaml
  workloadTemplate:
  - opcode: createPods
    count: 2
    podTemplatePath: ../t/pod.yaml
    persistentVolumeTemplatePath: ../t/pv.yaml
    persistentVolumeClaimTemplatePath: ../t/pvc.yaml
    collectMetrics: true
  - opcode: createPods
    count: 1
    podTemplatePath: ` + filepath.Join("ABS", "t", "pod.yaml") + `
  workloads:
  - name: bar
`,
		"t/sched.yaml": "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
		"t/pod.yaml":   podYAML,
		"t/pv.yaml":    pvYAML,
		"t/pvc.yaml":   pvcYAML,
	})
	config := filepath.Join(dir, "w", "x.yaml")
	content, _ := os.ReadFile(config)
	if err := os.WriteFile(config, []byte(strings.ReplaceAll(string(content), "ABS", dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	// The files are beside the workload's directory: outside the tree it
	// may read by default (no go.mod or .git above), inside the one named.
	if _, err := mustLoad(t, config).Select("Foo", "bar", ""); err == nil || !strings.Contains(err.Error(), "is outside "+filepath.Join(dir, "w")) {
		t.Errorf("Select() error = %v, want the files outside the workload's directory refused", err)
	}
	f, err := workload.LoadWithin(config, dir)
	if err != nil {
		t.Fatal(err)
	}
	s := mustSelectOne(t, f, "Foo", "bar")
	if got, want := s.SchedulerConfigPath, filepath.Join(dir, "t", "sched.yaml"); got != want {
		t.Errorf("scheduler config = %q, want %q (relative to the file's directory)", got, want)
	}
	op := s.Ops[0].(*workload.CreatePods)
	if got, want := op.PodTemplatePath, filepath.Join(dir, "t", "pod.yaml"); got != want {
		t.Errorf("pod template = %q, want %q", got, want)
	}
	if op.PersistentVolume == nil || op.PersistentVolume.Kind != "PersistentVolume" ||
		op.PersistentVolumeClaim == nil || op.PersistentVolumeClaim.Kind != "PersistentVolumeClaim" {
		t.Errorf("PV/PVC not loaded: %v, %v", op.PersistentVolume, op.PersistentVolumeClaim)
	}
	if got, want := s.Ops[1].(*workload.CreatePods).PodTemplatePath, filepath.Join(dir, "t", "pod.yaml"); got != want {
		t.Errorf("absolute pod template = %q, want %q", got, want)
	}
}
