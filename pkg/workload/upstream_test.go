package workload_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// checkHooks checks that the workloads of the directory whose upstream Go
// test code reads a param (WithNodeUpdateFn and Workload.GetParam) get that
// hook: nodedeclaredfeatures' numNodeDeclaredFeatures.
func checkHooks(t *testing.T, dir string, sel []*workload.Selected) {
	t.Helper()
	if dir != "nodedeclaredfeatures" {
		return
	}
	for _, s := range sel {
		if s.NodeDeclaredFeatures == nil {
			t.Errorf("%s: no NodeDeclaredFeatures, want upstream's hook's features", s.Name())
		}
	}
}

// upstreamDir is test/integration/scheduler_perf of k8s.io/kubernetes at
// version in the module cache, or "" if it is not there.
func upstreamDir(t *testing.T, version string) string {
	modcache := os.Getenv("GOMODCACHE")
	if modcache == "" {
		out, err := exec.Command("go", "env", "GOMODCACHE").Output()
		if err != nil {
			t.Logf("go env GOMODCACHE: %v", err)
			return ""
		}
		modcache = strings.TrimSpace(string(out))
	}
	dir := filepath.Join(modcache, "k8s.io", "kubernetes@"+version, "test", "integration", "scheduler_perf")
	if _, err := os.Stat(dir); err != nil {
		return ""
	}
	return dir
}

func configFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == "performance-config.yaml" {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// roots are the copies in testdata and, when that version of
// k8s.io/kubernetes is in the module cache, its own files.
func roots(t *testing.T, testdata, version string) map[string]string {
	r := map[string]string{"testdata": testdata}
	if dir := upstreamDir(t, version); dir != "" {
		r["modcache"] = dir
	} else {
		t.Logf("k8s.io/kubernetes@%s is not in the module cache: checking the copies in %s only", version, testdata)
	}
	return r
}

// TestUpstreamConfigs checks that every performance-config.yaml of
// scheduler_perf v1.37.2 (23 files) loads, and that its workloads labelled
// integration-test select in full: every op, every field, every template.
func TestUpstreamConfigs(t *testing.T) {
	for label, root := range roots(t, "testdata/upstream-v1.37.2", "v1.37.2") {
		files := configFiles(t, root)
		if len(files) != 23 {
			t.Errorf("%s: found %d config files, want v1.37.2's 23", root, len(files))
		}
		for _, path := range files {
			rel, _ := filepath.Rel(root, path)
			dir := filepath.Dir(rel)
			t.Run(label+"/"+dir, func(t *testing.T) {
				f, err := workload.Load(path)
				if err != nil {
					t.Fatal(err)
				}
				var opts []workload.SelectOption
				sel, err := f.Select("", "", "integration-test", opts...)
				if err != nil {
					t.Fatalf("Select(integration-test): %v", err)
				}
				checkHooks(t, dir, sel)
				// Beyond integration-test, a workload may fail only with an
				// error that names its op.
				all, err := f.Select("", "", "", opts...)
				if err != nil {
					var e *workload.Error
					if !errors.As(err, &e) || e.Op < 0 || e.Opcode == "" {
						t.Errorf("Select(all): %v, want an error that names the op", err)
					}
				}
				t.Logf("%d test cases, %d workloads labelled integration-test, %d selected in all (%v)", len(f.TestCases), len(sel), len(all), err)
			})
		}
	}
}

// TestUpstreamConfigs_v1_36 checks that v1.36.3's config files still load
// and select, except those using createResourceDriver, which v1.37 removed:
// they are rejected with an error that names the op and its replacement.
func TestUpstreamConfigs_v1_36(t *testing.T) {
	for label, root := range roots(t, "testdata/upstream", "v1.36.3") {
		files := configFiles(t, root)
		loaded, removed := 0, 0
		for _, path := range files {
			rel, _ := filepath.Rel(root, path)
			dir := filepath.Dir(rel)
			t.Run(label+"/"+dir, func(t *testing.T) {
				f, err := workload.Load(path)
				if err != nil {
					if !strings.HasPrefix(err.Error(), path+": test case ") || !strings.Contains(err.Error(), `(createResourceDriver): opcode "createResourceDriver" was removed from scheduler_perf: since v1.37 the DRA configs publish ResourceSlices with createAny`) {
						t.Fatalf("rejected for a reason other than createResourceDriver: %v", err)
					}
					removed++
					return
				}
				loaded++
				sel, err := f.Select("", "", "")
				if err != nil {
					t.Fatal(err)
				}
				checkHooks(t, dir, sel)
			})
		}
		if loaded == 0 || removed == 0 {
			t.Errorf("%s: %d files loaded, %d rejected for createResourceDriver; want some of both", root, loaded, removed)
		}
	}
}

func TestUpstreamConfigs_content(t *testing.T) {
	f := mustLoad(t, "testdata/upstream/volumes/performance-config.yaml")
	s := mustSelectOne(t, f, "SchedulingMigratedInTreePVs", "5Nodes")
	nodes := s.Ops[0].(*workload.CreateNodes)
	count := int32(39)
	want := &workload.NodeAllocatableStrategy{
		NodeAllocatable:    map[string]string{"attachable-volumes-csi-ebs.csi.aws.com": "39"},
		CsiNodeAllocatable: map[string]*storagev1.VolumeNodeResources{"ebs.csi.aws.com": {Count: &count}},
		MigratedPlugins:    []string{"kubernetes.io/aws-ebs"},
	}
	if diff := cmp.Diff(want, nodes.NodeAllocatableStrategy); diff != "" {
		t.Errorf("nodeAllocatableStrategy (-want, +got):\n%s", diff)
	}
	if nodes.NodeTemplatePath != "testdata/upstream/templates/node-default.yaml" {
		t.Errorf("node template = %q", nodes.NodeTemplatePath)
	}
	pods := s.Ops[2].(*workload.CreatePods)
	if pods.PersistentVolume == nil || pods.PersistentVolume.Spec.AWSElasticBlockStore == nil || pods.PersistentVolumeClaim == nil {
		t.Errorf("PV/PVC templates not loaded: %+v, %+v", pods.PersistentVolume, pods.PersistentVolumeClaim)
	}
	if !pods.CollectMetrics || pods.Count != 10 || pods.Namespace != "namespace-2" {
		t.Errorf("measured createPods: collect %v count %d namespace %q; want true, 10, namespace-2", pods.CollectMetrics, pods.Count, pods.Namespace)
	}
	if gates, emulation := s.EffectiveFeatureGates(); emulation != "" || gates["SchedulerQueueingHints"] {
		t.Errorf("QueueingHints off (a v1.36 file): gates %v, emulation %q; v1.37's harness emulates nothing for it", gates, emulation)
	}

	f = mustLoad(t, "testdata/upstream/topology_spreading/performance-config.yaml")
	s = mustSelectOne(t, f, "TopologySpreading", "5Nodes")
	label := s.Ops[0].(*workload.CreateNodes).LabelNodePrepareStrategy
	if label == nil || label.LabelKey != "topology.kubernetes.io/zone" || len(label.LabelValues) != 3 {
		t.Errorf("labelNodePrepareStrategy = %+v", label)
	}
	pod, err := s.Ops[2].(*workload.CreatePods).Pod(0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.TopologySpreadConstraints) == 0 {
		t.Errorf("pod from pod-with-topology-spreading.yaml has no topology spread constraints")
	}

	f = mustLoad(t, "testdata/upstream/nodedeclaredfeatures/performance-config.yaml")
	s = mustSelectOne(t, f, "NodeDeclaredFeaturesEnabled", "5Nodes5DeclaredFeatures")
	if n, err := s.Param("numNodeDeclaredFeatures"); err != nil || n != 5 {
		t.Errorf("Param(numNodeDeclaredFeatures) = %d, %v; want 5", n, err)
	}
	if got := s.Ops[1].(*workload.CreatePods).PodTemplatePath; got != "testdata/upstream/nodedeclaredfeatures/templates/pod-with-pod-level-resources.yaml" {
		t.Errorf("default pod template = %q", got)
	}
}
