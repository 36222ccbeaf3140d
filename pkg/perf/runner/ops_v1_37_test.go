package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

const podGroupTemplate = `apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata:
  name: gang-{{.Index}}
spec:
  schedulingPolicy:
    gang:
      minCount: {{.podsPerGroup}}
`

const claimTemplate = `apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  generateName: claim-
spec:
  devices:
    requests:
    - name: req-0
      exactly:
        deviceClassName: test-class
`

// selectOps writes the templates and a config whose workloadTemplate is
// ops (then a measured createPods), and returns the bound ops.
func selectOps(t *testing.T, ops string) []workload.Op {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{"podgroup.yaml": podGroupTemplate, "claim.yaml": claimTemplate} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	config := "- name: T\n  workloadTemplate:\n" + ops + "  - {opcode: createPods, count: 1, collectMetrics: true}\n  workloads:\n  - name: w\n    params: {groups: 3, size: 2}\n"
	f, err := workload.Parse(filepath.Join(dir, "config.yaml"), []byte(config))
	if err != nil {
		t.Fatal(err)
	}
	sel, err := f.Select("", "", "", workload.WithExternalParams("groups", "size"))
	if err != nil {
		t.Fatal(err)
	}
	return sel[0].Ops
}

func newTestExecutor(client *fake.Clientset) *executor {
	return &executor{
		client:           client,
		opts:             Options{Ledger: NewLedger(), Labels: map[string]string{RunLabelKey: "test"}}.withDefaults(),
		podsPerNamespace: map[string]int{},
		result:           &Result{},
	}
}

func TestExecutor_createPodGroups(t *testing.T) {
	ops := selectOps(t, "  - {opcode: createPodGroups, countParam: $groups, namespace: gang, templatePath: podgroup.yaml, templateParams: {podsPerGroup: $size}}\n")
	client := fake.NewClientset()
	e := newTestExecutor(client)
	var stat OpStat
	summary, err := e.runOp(context.Background(), ops[0], &OpProgress{}, &stat)
	if err != nil {
		t.Fatal(err)
	}
	if summary != "3 pod groups" || stat.Created != 3 || stat.Namespace != "gang" {
		t.Errorf("summary %q, created %d, namespace %q; want 3 pod groups, 3, gang", summary, stat.Created, stat.Namespace)
	}
	if _, err := client.CoreV1().Namespaces().Get(context.Background(), "gang", metav1.GetOptions{}); err != nil {
		t.Errorf("namespace gang: %v", err)
	}
	list, err := client.SchedulingV1beta1().PodGroups("gang").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 3 {
		t.Fatalf("%d PodGroups, want 3", len(list.Items))
	}
	for _, pg := range list.Items {
		if !strings.HasPrefix(pg.Name, "gang-") || pg.Spec.SchedulingPolicy.Gang == nil || pg.Spec.SchedulingPolicy.Gang.MinCount != 2 || pg.Labels[RunLabelKey] != "test" {
			t.Errorf("PodGroup %s: %+v, labels %v", pg.Name, pg.Spec, pg.Labels)
		}
		if !e.opts.Ledger.Has(ObjectRef{Resource: podGroupsResource, Namespace: "gang", Name: pg.Name}) {
			t.Errorf("PodGroup %s is not in the ledger", pg.Name)
		}
	}
}

// TestExecutor_createPodGroups_invalid checks that a PodGroup the API server
// rejects as invalid fails the op at once, as upstream's retry does.
func TestExecutor_createPodGroups_invalid(t *testing.T) {
	ops := selectOps(t, "  - {opcode: createPodGroups, count: 1, namespace: gang, templatePath: podgroup.yaml, templateParams: {podsPerGroup: 1}}\n")
	client := fake.NewClientset()
	calls := 0
	client.PrependReactor("create", "podgroups", func(k8stesting.Action) (bool, runtime.Object, error) {
		calls++
		return true, nil, apierrors.NewInvalid(schema.GroupKind{Group: "scheduling.k8s.io", Kind: "PodGroup"}, "gang-0", nil)
	})
	_, err := newTestExecutor(client).runOp(context.Background(), ops[0], &OpProgress{}, &OpStat{})
	if err == nil || !strings.Contains(err.Error(), "podgroup.yaml: create PodGroup gang-0: ") || calls != 1 {
		t.Errorf("error = %v after %d creates, want one naming the template and the PodGroup after 1", err, calls)
	}
}

func TestExecutor_resourceClaims(t *testing.T) {
	ops := selectOps(t, "  - {opcode: createResourceClaims, count: 4, namespace: dra, templatePath: claim.yaml}\n  - {opcode: allocResourceClaims, namespace: dra}\n")
	client := fake.NewClientset()
	// The fake clientset does not generate names; the API server does.
	var named atomic.Int32
	client.PrependReactor("create", "resourceclaims", func(a k8stesting.Action) (bool, runtime.Object, error) {
		obj := a.(k8stesting.CreateAction).GetObject().(metav1.Object)
		obj.SetName(fmt.Sprintf("%s%d", obj.GetGenerateName(), named.Add(1)))
		return false, nil, nil
	})
	e := newTestExecutor(client)
	var stat OpStat
	if _, err := e.runOp(context.Background(), ops[0], &OpProgress{}, &stat); err != nil {
		t.Fatal(err)
	}
	list, err := client.ResourceV1().ResourceClaims("dra").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 4 || stat.Created != 4 || stat.Namespace != "dra" {
		t.Errorf("%d claims, created %d in %q; want 4, 4, dra", len(list.Items), stat.Created, stat.Namespace)
	}
	for _, c := range list.Items {
		if c.Spec.Devices.Requests[0].Exactly.DeviceClassName != "test-class" || c.Labels[RunLabelKey] != "test" {
			t.Errorf("claim %s: %+v, labels %v", c.Name, c.Spec, c.Labels)
		}
	}
	// Without the perf module's registration (this test binary has none).
	_, err = e.runOp(context.Background(), ops[1], &OpProgress{}, &OpStat{})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "only schedq-perf links") {
		t.Errorf("allocResourceClaims: error = %v, want the one-line reason naming schedq-perf", err)
	}
}

func TestExecutor_profile(t *testing.T) {
	ops := selectOps(t, "  - {opcode: startCollectingProfile, type: CPU, filePath: prof/cpu.pprof}\n  - {opcode: stopCollectingProfile, type: cpu}\n")
	e := newTestExecutor(fake.NewClientset())
	e.opts.ProfileDir = t.TempDir()
	if _, err := e.runOp(context.Background(), ops[1], &OpProgress{}, &OpStat{}); err == nil {
		t.Errorf("stopCollectingProfile before a start: no error")
	}
	if _, err := e.runOp(context.Background(), ops[0], &OpProgress{}, &OpStat{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.runOp(context.Background(), ops[0], &OpProgress{}, &OpStat{}); err == nil {
		t.Errorf("a second startCollectingProfile: no error")
	}
	if _, err := e.runOp(context.Background(), ops[1], &OpProgress{}, &OpStat{}); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(e.opts.ProfileDir, "prof_cpu.pprof"))
	if err != nil || info.Size() == 0 {
		t.Errorf("profile file: %v, %v; want a non-empty file", info, err)
	}
	if len(e.result.Profiles) != 1 || e.result.Profiles[0] != "prof_cpu.pprof" {
		t.Errorf("Profiles = %q, want [prof_cpu.pprof]", e.result.Profiles)
	}
	if len(e.result.Warnings) != 1 || !strings.Contains(e.result.Warnings[0], "profiles the runner only") {
		t.Errorf("warnings = %q, want one saying the scheduler is not profiled", e.result.Warnings)
	}
}

// TestProfileName: a workload's filePath names a file in the results
// directory, never a place outside it.
func TestProfileName(t *testing.T) {
	for _, tc := range []struct{ filePath, want string }{
		{"cpu.pprof", "cpu.pprof"},
		{"prof/cpu.pprof", "prof_cpu.pprof"},
		{"../../home/u/.bashrc", "home_u_.bashrc"},
		{"/etc/passwd", "etc_passwd"},
		{"./a/./b", "a_b"},
		{"..", "cpu.pprof"},
		{"/", "cpu.pprof"},
	} {
		if got := ProfileName(tc.filePath); got != tc.want {
			t.Errorf("ProfileName(%q) = %q, want %q", tc.filePath, got, tc.want)
		}
	}
}
