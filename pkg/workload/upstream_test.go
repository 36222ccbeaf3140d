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

// hookParams are params that upstream's Go test code reads (through
// WithPreRunFn / WithNodeUpdateFn and Workload.GetParam), by the directory of
// the config file below scheduler_perf.
var hookParams = map[string][]string{
	"nodedeclaredfeatures": {"numNodeDeclaredFeatures"},
}

// upstreamDir is test/integration/scheduler_perf of k8s.io/kubernetes v1.36.3
// in the module cache, or "" if it is not there.
func upstreamDir(t *testing.T) string {
	modcache := os.Getenv("GOMODCACHE")
	if modcache == "" {
		out, err := exec.Command("go", "env", "GOMODCACHE").Output()
		if err != nil {
			t.Logf("go env GOMODCACHE: %v", err)
			return ""
		}
		modcache = strings.TrimSpace(string(out))
	}
	dir := filepath.Join(modcache, "k8s.io", "kubernetes@v1.36.3", "test", "integration", "scheduler_perf")
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

// TestUpstreamConfigs checks that every upstream performance-config.yaml
// either loads and selects in full, or is rejected only because it uses an
// op this project cannot run. It runs on the copies in testdata/upstream and,
// when k8s.io/kubernetes v1.36.3 is in the module cache, on all of them.
func TestUpstreamConfigs(t *testing.T) {
	roots := map[string]string{"testdata": "testdata/upstream"}
	if dir := upstreamDir(t); dir != "" {
		roots["modcache"] = dir
	} else {
		t.Log("k8s.io/kubernetes@v1.36.3 is not in the module cache: checking the copies in testdata/upstream only")
	}
	for label, root := range roots {
		files := configFiles(t, root)
		if len(files) < 4 {
			t.Fatalf("%s: found %d config files, want at least 4", root, len(files))
		}
		loaded, unsupported := 0, 0
		for _, path := range files {
			rel, _ := filepath.Rel(root, path)
			dir := filepath.Dir(rel)
			t.Run(label+"/"+dir, func(t *testing.T) {
				f, err := workload.Load(path)
				if err != nil {
					var u *workload.UnsupportedOpError
					if !errors.As(err, &u) {
						t.Fatalf("rejected for a reason other than an unsupported op: %v", err)
					}
					if !strings.HasPrefix(err.Error(), path+": test case ") || !strings.Contains(err.Error(), "("+string(u.Opcode)+"): ") {
						t.Errorf("the error does not name the file and the op: %v", err)
					}
					unsupported++
					return
				}
				loaded++
				var opts []workload.SelectOption
				if params := hookParams[dir]; params != nil {
					if _, err := f.Select("", "", ""); err == nil || !strings.Contains(err.Error(), params[0]) {
						t.Errorf("Select without WithExternalParams: error = %v, want one naming %q", err, params[0])
					}
					opts = append(opts, workload.WithExternalParams(params...))
				}
				sel, err := f.Select("", "", "", opts...)
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, tc := range f.TestCases {
					n += len(tc.Workloads)
				}
				if len(sel) != n {
					t.Errorf("selected %d workloads, the file has %d", len(sel), n)
				}
				perf, err := f.Select("", "", workload.DefaultPerfLabelFilter, opts...)
				if err != nil && !errors.Is(err, workload.ErrNoMatch) {
					t.Errorf("Select(performance): %v", err)
				}
				t.Logf("%d test cases, %d workloads, %d labelled performance", len(f.TestCases), n, len(perf))
			})
		}
		if loaded == 0 || unsupported == 0 {
			t.Errorf("%s: %d files loaded, %d rejected as unsupported; want some of both", root, loaded, unsupported)
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
	if gates, emulation := s.EffectiveFeatureGates(); emulation != "1.33" || gates["SchedulerQueueingHints"] {
		t.Errorf("QueueingHints off: gates %v, emulation %q", gates, emulation)
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
	s = mustSelectOne(t, f, "NodeDeclaredFeaturesEnabled", "5Nodes5DeclaredFeatures", workload.WithExternalParams("numNodeDeclaredFeatures"))
	if n, err := s.Param("numNodeDeclaredFeatures"); err != nil || n != 5 {
		t.Errorf("Param(numNodeDeclaredFeatures) = %d, %v; want 5", n, err)
	}
	if got := s.Ops[1].(*workload.CreatePods).PodTemplatePath; got != "testdata/upstream/nodedeclaredfeatures/templates/pod-with-pod-level-resources.yaml" {
		t.Errorf("default pod template = %q", got)
	}
}
