package provider

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/kind/pkg/apis/config/defaults"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/collect"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestSchedulerConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		path string
		want map[string]any
	}{
		{"default", "", map[string]any{"qps": float64(5000), "burst": float64(5000)}},
		{"the file's limits are honoured", write("a.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nclientConnection:\n  qps: 50\n"),
			map[string]any{"qps": float64(50), "burst": float64(5000)}},
		{"other fields are kept", write("b.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\npodInitialBackoffSeconds: 3\n"),
			map[string]any{"qps": float64(5000), "burst": float64(5000)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, err := SchedulerConfig(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			var obj map[string]any
			if err := yaml.Unmarshal(data, &obj); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, obj["clientConnection"]); diff != "" {
				t.Errorf("clientConnection (-want, +got):\n%s", diff)
			}
			if obj["kind"] != "KubeSchedulerConfiguration" {
				t.Errorf("kind lost: %v", obj)
			}
			if strings.HasPrefix(tc.name, "other") && obj["podInitialBackoffSeconds"] != float64(3) {
				t.Errorf("podInitialBackoffSeconds lost: %v", obj)
			}
		})
	}
	if _, err := SchedulerConfig(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("a missing file gave no error")
	}
}

// TestKindConfig checks the generated kind configuration against a golden
// file and for what it must carry.
func TestKindConfig(t *testing.T) {
	gates := map[string]bool{"SchedulerPopFromBackoffQ": false, "OpportunisticBatching": false}
	cfg, err := KindConfig("schedq-perf-test", gates, "", "/tmp/schedq-kind-x/scheduler")
	if err != nil {
		t.Fatal(err)
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	testsupport.Golden(t, filepath.Join("testdata", "kind-config.golden.yaml"), data, *update)

	// kind reads it strictly as v1alpha4.
	var back v1alpha4.Cluster
	if err := yaml.UnmarshalStrict(data, &back); err != nil {
		t.Fatalf("kind cannot read it back: %v", err)
	}
	if back.APIVersion != "kind.x-k8s.io/v1alpha4" || back.Kind != "Cluster" {
		t.Errorf("type %s %s", back.APIVersion, back.Kind)
	}
	if diff := cmp.Diff(gates, back.FeatureGates); diff != "" {
		t.Errorf("feature gates (-want, +got):\n%s", diff)
	}
	if !back.Networking.DisableDefaultCNI || back.Networking.KubeProxyMode != "none" {
		t.Errorf("networking %+v: want no CNI and no kube-proxy (no DaemonSet pods on fake nodes)", back.Networking)
	}
	if len(back.Nodes) != 1 || back.Nodes[0].Role != v1alpha4.ControlPlaneRole || len(back.Nodes[0].ExtraMounts) != 1 ||
		back.Nodes[0].ExtraMounts[0].ContainerPath != KindSchedulerConfigDir || back.Nodes[0].ExtraMounts[0].HostPath != "/tmp/schedq-kind-x/scheduler" {
		t.Errorf("nodes %+v: want one control plane mounting the scheduler config", back.Nodes)
	}
	var patch clusterConfigurationPatch
	if len(back.KubeadmConfigPatches) != 1 {
		t.Fatalf("patches %v", back.KubeadmConfigPatches)
	}
	if err := yaml.UnmarshalStrict([]byte(back.KubeadmConfigPatches[0]), &patch); err != nil {
		t.Fatal(err)
	}
	args := func(c component) map[string]string {
		m := map[string]string{}
		for _, a := range c.ExtraArgs {
			m[a.Name] = a.Value
		}
		return m
	}
	gateArg := "OpportunisticBatching=false,SchedulerPopFromBackoffQ=false"
	if a := args(patch.APIServer); a["disable-admission-plugins"] != "ServiceAccount,TaintNodesByCondition,Priority" || a["feature-gates"] != gateArg {
		t.Errorf("kube-apiserver args %v", a)
	}
	if a := args(patch.ControllerManager); !strings.Contains(a["controllers"], "-node-lifecycle-controller") || a["enable-hostpath-provisioner"] != "true" || a["feature-gates"] != gateArg {
		t.Errorf("kube-controller-manager args %v", a)
	}
	if a := args(patch.Scheduler); a["config"] != KindSchedulerConfigDir+"/scheduler-config.yaml" || a["feature-gates"] != gateArg {
		t.Errorf("kube-scheduler args %v", a)
	}
	if v := patch.Scheduler.ExtraVolumes; len(v) != 1 || v[0].HostPath != KindSchedulerConfigDir || v[0].MountPath != KindSchedulerConfigDir || !v[0].ReadOnly {
		t.Errorf("kube-scheduler volumes %+v", v)
	}
	if strings.Contains(back.KubeadmConfigPatches[0], "apiVersion") {
		t.Error("the patch names an apiVersion: kind skips a v1beta3 patch on 1.36")
	}
}

func TestKindConfig_emulationVersion(t *testing.T) {
	cfg, err := KindConfig("x", map[string]bool{"SchedulerQueueingHints": false}, "1.33", "/d")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(cfg.KubeadmConfigPatches[0], "emulated-version"); n != 3 {
		t.Errorf("emulated-version on %d components, want 3:\n%s", n, cfg.KubeadmConfigPatches[0])
	}
}

// TestKindConfig_runtimeConfig checks that a workload with GenericWorkload
// on gets PodGroups (scheduling.k8s.io/v1beta1) served: kube-apiserver
// does not serve that beta API by default, and without it the scheduler
// never gets Ready (its PodGroup informer cannot list) and createPodGroups
// fails. kind's own runtime-config arg is in the extraArgs list the patch
// replaces, so the patch must carry it.
func TestKindConfig_runtimeConfig(t *testing.T) {
	for _, tc := range []struct {
		name  string
		gates map[string]bool
		want  string // the apiserver's runtime-config; "" for none
	}{
		{"GenericWorkload on", map[string]bool{"GenericWorkload": true, "SchedulerPopFromBackoffQ": true}, "scheduling.k8s.io/v1beta1=true"},
		{"GenericWorkload off", map[string]bool{"GenericWorkload": false}, ""},
		{"GenericWorkload not set", map[string]bool{"SchedulerPopFromBackoffQ": false}, ""},
		{"no gates", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := KindConfig("x", tc.gates, "", "/d")
			if err != nil {
				t.Fatal(err)
			}
			var patch clusterConfigurationPatch
			if err := yaml.UnmarshalStrict([]byte(cfg.KubeadmConfigPatches[0]), &patch); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range patch.APIServer.ExtraArgs {
				if a.Name == "runtime-config" {
					got = append(got, a.Value)
				}
			}
			var want []string
			if tc.want != "" {
				want = []string{tc.want}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("kube-apiserver runtime-config args (-want, +got):\n%s", diff)
			}
			for _, c := range []component{patch.ControllerManager, patch.Scheduler} {
				for _, a := range c.ExtraArgs {
					if a.Name == "runtime-config" {
						t.Errorf("runtime-config on a component other than kube-apiserver: %+v", c.ExtraArgs)
					}
				}
			}
			var wantRC map[string]string
			if tc.want != "" {
				wantRC = map[string]string{"scheduling.k8s.io/v1beta1": "true"}
			}
			if diff := cmp.Diff(wantRC, cfg.RuntimeConfig); diff != "" {
				t.Errorf("kind's runtimeConfig (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestKindSchedulerConfig(t *testing.T) {
	data, err := KindSchedulerConfig(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "kubeconfig: /etc/kubernetes/scheduler.conf") || !strings.Contains(string(data), "qps: 5000") {
		t.Errorf("config:\n%s", data)
	}
}

// TestKind_Start_noContainerRuntime checks the error without Docker.
func TestKind_Start_noContainerRuntime(t *testing.T) {
	if _, err := DetectContainerRuntime(); err == nil {
		t.Skip("a container runtime answers here")
	}
	_, err := (&Kind{}).Start(context.Background(), Spec{Workload: &workload.Selected{}})
	if !errors.Is(err, ErrNoContainerRuntime) {
		t.Errorf("Start() = %v, want ErrNoContainerRuntime", err)
	}
}

// TestErrNoContainerRuntime_remedy checks that the advice without Docker
// names only what the plugin runs: not --cluster embedded, which it refuses.
func TestErrNoContainerRuntime_remedy(t *testing.T) {
	msg := ErrNoContainerRuntime.Error()
	if strings.Contains(msg, "embedded") || !strings.Contains(msg, "--cluster kubeconfig --allow-existing-cluster") {
		t.Errorf("ErrNoContainerRuntime = %q, want the kubeconfig cluster as the remedy and no embedded cluster", msg)
	}
}

// TestKindImageAdvice checks what a failed kind create adds about the node
// image: only a failed pull gets advice, which names --kind-image, and
// kind's default image when none was named.
func TestKindImageAdvice(t *testing.T) {
	pullErr := fmt.Errorf(`failed to pull image "%s": exit status 1`, defaults.Image)
	for _, tc := range []struct {
		name    string
		image   string
		named   bool
		err     error
		want    []string
		wantNot []string
	}{
		{"kind's default, pull failed", defaults.Image, false, pullErr,
			[]string{"kind's default node image " + KindDefaultImage(), "--kind-image", "kind build node-image"}, []string{"@sha256"}},
		{"a named image, pull failed", "example.local/node:v1", true, errors.New(`failed to pull image "example.local/node:v1": exit status 1`),
			[]string{"example.local/node:v1 is not on this machine", "--kind-image"}, []string{"kind's default"}},
		{"another failure", defaults.Image, false, errors.New("failed to init node with kubeadm"), nil, []string{"--kind-image"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := kindImageAdvice(tc.image, tc.named, tc.err)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("advice %q lacks %q", got, w)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(got, w) {
					t.Errorf("advice %q has %q", got, w)
				}
			}
			if len(tc.want) == 0 && got != "" {
				t.Errorf("advice %q, want none", got)
			}
		})
	}
}

// TestKindDefaultImage checks that the default named is kind's own v1.37
// image, without its digest.
func TestKindDefaultImage(t *testing.T) {
	if got := KindDefaultImage(); !strings.HasPrefix(got, "kindest/node:v1.37.") || strings.Contains(got, "@") {
		t.Errorf("KindDefaultImage() = %q, want kindest/node:v1.37.x (kind v0.33.0's)", got)
	}
}

const schedulerMetrics = `# TYPE scheduler_pending_pods gauge
scheduler_pending_pods{queue="active"} 0
scheduler_pending_pods{queue="backoff"} 0
scheduler_pending_pods{queue="unschedulable"} 0
scheduler_pending_pods{queue="gated"} 0
# TYPE kubernetes_feature_enabled gauge
kubernetes_feature_enabled{name="SchedulerPopFromBackoffQ",stage="BETA"} 1
kubernetes_feature_enabled{name="SchedulerQueueingHints",stage=""} 1
`

type fakeReader struct{ text string }

func (f fakeReader) ReadMetrics(context.Context) (collect.Families, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(f.text))
	return collect.Families(fams), err
}

func (fakeReader) String() string { return "fake scheduler" }

func selectedWithGates(gates map[string]bool) *workload.Selected {
	return &workload.Selected{TestCase: "T", Workload: "w", FeatureGates: gates}
}

func TestKubeconfig_Start_refusesWithoutAllowExisting(t *testing.T) {
	client := fake.NewClientset()
	k := &Kubeconfig{restConfig: &rest.Config{Host: "https://x"}, client: client, metrics: fakeReader{schedulerMetrics}}
	_, err := k.Start(context.Background(), Spec{Workload: selectedWithGates(nil), RunLabels: map[string]string{runner.RunLabelKey: "r"}})
	if !errors.Is(err, ErrExistingCluster) || !strings.Contains(err.Error(), "--allow-existing-cluster") {
		t.Errorf("Start() = %v, want ErrExistingCluster naming the flag", err)
	}
	if len(client.Actions()) != 0 {
		t.Errorf("it touched the cluster: %v", client.Actions())
	}
}

func TestKubeconfig_Start_checksGates(t *testing.T) {
	tests := []struct {
		name    string
		gates   map[string]bool
		wantErr string
	}{
		{"no gates", nil, ""},
		{"gates match", map[string]bool{"SchedulerPopFromBackoffQ": true, "SchedulerQueueingHints": true}, ""},
		{"a gate differs", map[string]bool{"SchedulerPopFromBackoffQ": false}, "SchedulerPopFromBackoffQ: the workload wants false, the scheduler has true"},
		{"a gate is not reported", map[string]bool{"SchedulerAsyncAPICalls": true}, "SchedulerAsyncAPICalls: the workload wants true, the scheduler does not report it"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset()
			k := &Kubeconfig{AllowExisting: true, restConfig: &rest.Config{Host: "https://x"}, client: client,
				dynamic: dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), metrics: fakeReader{schedulerMetrics}}
			inst, err := k.Start(context.Background(), Spec{Workload: selectedWithGates(tc.gates), RunLabels: map[string]string{runner.RunLabelKey: "r"}})
			if inst != nil {
				defer inst.Stop(context.Background())
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Start() = %v, want %q", err, tc.wantErr)
			}
			var mismatch *GateMismatchError
			if tc.wantErr != "" && !errors.As(err, &mismatch) {
				t.Errorf("error %T is not a *GateMismatchError", err)
			}
		})
	}
}

// TestKubeconfig_Stop_cleansUp starts the provider on a fake cluster,
// creates what a run creates (labelled, and some objects only the ledger
// knows), interrupts the run, and checks that Stop deletes all of it and
// nothing else.
func TestKubeconfig_Stop_cleansUp(t *testing.T) {
	runLabels := map[string]string{runner.RunLabelKey: "r1"}
	obj := func(name, ns string, labels map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}
	}
	client := fake.NewClientset(
		&v1.Namespace{ObjectMeta: obj("namespace-2", "", runLabels)},
		&v1.Namespace{ObjectMeta: obj("default", "", nil)},
		&v1.Pod{ObjectMeta: obj("pod-a", "namespace-2", runLabels)},
		&v1.Pod{ObjectMeta: obj("pod-b", "default", runLabels)},
		&v1.Pod{ObjectMeta: obj("theirs", "default", nil)},
		&v1.Pod{ObjectMeta: obj("other-run", "default", map[string]string{runner.RunLabelKey: "r2"})},
		&v1.Node{ObjectMeta: obj("node-0-abcde", "", runLabels)},
		&v1.Node{ObjectMeta: obj("real-node", "", nil)},
		&v1.PersistentVolume{ObjectMeta: obj("namespace-2-vol-0", "", runLabels)},
	)
	deleteCollections(client)
	pcGVR := schedulingv1.SchemeGroupVersion.WithResource("priorityclasses")
	dyn := dynamicfake.NewSimpleDynamicClient(scheme.Scheme,
		&schedulingv1.PriorityClass{TypeMeta: metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"}, ObjectMeta: obj("high", "", nil)},
		&schedulingv1.PriorityClass{TypeMeta: metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"}, ObjectMeta: obj("theirs", "", nil)},
	)
	k := &Kubeconfig{AllowExisting: true, restConfig: &rest.Config{Host: "https://x"}, client: client, dynamic: dyn, metrics: fakeReader{schedulerMetrics}}
	runCtx, interrupt := context.WithCancel(context.Background())
	inst, err := k.Start(runCtx, Spec{Workload: selectedWithGates(nil), RunLabels: runLabels})
	if err != nil {
		t.Fatal(err)
	}
	if inst.Ledger == nil {
		t.Fatal("no ledger: the runner would not record what to delete")
	}
	// What the runner records while it runs: an object created by
	// createAny (its labels replaced by an updateAny), the namespace.
	inst.Ledger.Add(runner.ObjectRef{Resource: pcGVR, Name: "high"})
	inst.Ledger.Add(runner.ObjectRef{Resource: v1.SchemeGroupVersion.WithResource("namespaces"), Name: "namespace-2"})
	inst.Ledger.AddPodNamespace("namespace-2")
	interrupt() // SIGINT: the run's context ends; Stop gets its own.
	if err := inst.Stop(context.Background()); err != nil {
		t.Fatalf("Stop: %v", err)
	}

	ctx := context.Background()
	names := func(list []string) []string { sort.Strings(list); return list }
	var pods, nodes, nss []string
	pl, _ := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	for _, p := range pl.Items {
		pods = append(pods, p.Namespace+"/"+p.Name)
	}
	nl, _ := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	for _, n := range nl.Items {
		nodes = append(nodes, n.Name)
	}
	nsl, _ := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	for _, n := range nsl.Items {
		nss = append(nss, n.Name)
	}
	if diff := cmp.Diff([]string{"default/other-run", "default/theirs"}, names(pods)); diff != "" {
		t.Errorf("pods left (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"real-node"}, names(nodes)); diff != "" {
		t.Errorf("nodes left (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"default"}, names(nss)); diff != "" {
		t.Errorf("namespaces left (-want, +got):\n%s", diff)
	}
	if pvs, _ := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{}); len(pvs.Items) != 0 {
		t.Errorf("persistent volumes left: %v", pvs.Items)
	}
	pcs, err := dyn.Resource(pcGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pcs.Items) != 1 || pcs.Items[0].GetName() != "theirs" {
		t.Errorf("priority classes left: %v, want only theirs", pcs.Items)
	}
	// A second Stop does nothing.
	if err := inst.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// deleteCollections makes the fake clientset carry out delete-collection
// requests as kube-apiserver does: every object of the resource in the
// namespace that the label selector selects.
func deleteCollections(client *fake.Clientset) {
	client.PrependReactor("delete-collection", "*", func(action clienttesting.Action) (bool, runtime.Object, error) {
		dc := action.(clienttesting.DeleteCollectionAction)
		gvr, ns := dc.GetResource(), dc.GetNamespace()
		kinds := map[string]string{"pods": "Pod", "nodes": "Node", "leases": "Lease", "persistentvolumes": "PersistentVolume", "persistentvolumeclaims": "PersistentVolumeClaim"}
		list, err := client.Tracker().List(gvr, gvr.GroupVersion().WithKind(kinds[gvr.Resource]), ns)
		if err != nil {
			return true, nil, err
		}
		sel := dc.GetListRestrictions().Labels
		items, err := meta.ExtractList(list)
		if err != nil {
			return true, nil, err
		}
		for _, it := range items {
			m, err := meta.Accessor(it)
			if err != nil {
				return true, nil, err
			}
			if sel.Matches(labels.Set(m.GetLabels())) {
				if err := client.Tracker().Delete(gvr, m.GetNamespace(), m.GetName()); err != nil {
					return true, nil, err
				}
			}
		}
		return true, nil, nil
	})
}

func TestCleanup_refusesEmptyLabels(t *testing.T) {
	client := fake.NewClientset(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}})
	if _, err := Cleanup(context.Background(), client, nil, nil, nil, 0); err == nil {
		t.Error("Cleanup with no labels would select everything; it must refuse")
	}
	if pods, _ := client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{}); len(pods.Items) != 1 {
		t.Error("it deleted the pod")
	}
}

// TestNodeKeeper removes the not-ready taint of a Ready node the run
// created, and renews its lease.
func TestNodeKeeper(t *testing.T) {
	runLabels := map[string]string{runner.RunLabelKey: "r"}
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: runLabels},
		Spec:       v1.NodeSpec{Taints: []v1.Taint{{Key: v1.TaintNodeNotReady, Effect: v1.TaintEffectNoSchedule}, {Key: "mine", Effect: v1.TaintEffectNoSchedule}}},
		Status:     v1.NodeStatus{Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}},
	}
	client := fake.NewClientset(node)
	k, err := startNodeKeeper(client, runLabels)
	if err != nil {
		t.Fatal(err)
	}
	defer k.stop()
	ctx := context.Background()
	for i := 0; ; i++ {
		n, err := client.CoreV1().Nodes().Get(ctx, "n", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(n.Spec.Taints) == 1 && n.Spec.Taints[0].Key == "mine" {
			break
		}
		if i == 200 {
			t.Fatalf("taints %v, want only the workload's own", n.Spec.Taints)
		}
		sleep()
	}
	renewLease(ctx, client, node, runLabels)
	l, err := client.CoordinationV1().Leases(nodeLeaseNamespace).Get(ctx, "n", metav1.GetOptions{})
	if err != nil || l.Spec.RenewTime == nil || l.Labels[runner.RunLabelKey] != "r" {
		t.Errorf("lease %+v, %v", l, err)
	}
}

func sleep() { time.Sleep(10 * time.Millisecond) }
