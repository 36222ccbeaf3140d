// Package integration runs kubectl-schedq's commands against real control
// planes: the embedded one (etcd, kube-apiserver with RBAC, kube-scheduler in
// this process), and kind when Docker is available.
package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	_ "k8s.io/component-base/metrics/prometheus/version" // kubernetes_build_info, as kube-scheduler's main imports it
	"sigs.k8s.io/yaml"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
	"github.com/kubectl-schedq/kubectl-schedq/perf/embedded"
	"github.com/kubectl-schedq/kubectl-schedq/perf/groundtruth"
	"github.com/kubectl-schedq/kubectl-schedq/perf/internal/kubeversion"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/cmd"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/status"
)

// The identities the test creates.
const (
	// readerUser may read pods, events and leases and get /metrics.
	readerUser = "schedq-reader"
	// noMetricsUser may read pods, events and leases, but not /metrics.
	noMetricsUser = "schedq-no-metrics"
)

// TestStatus_embedded runs `kubectl schedq status` against a real
// kube-scheduler with a queue in every state: bound pods, pods parked in
// unschedulablePods, gated pods, and pods cycling through the error backoff
// (their binding is denied). It compares the counts with the queue's ground
// truth and checks what each identity gets.
func TestStatus_embedded(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	cp := startControlPlane(t, embedded.Options{Nodes: 4, KubeconfigPath: kubeconfig})
	client := cp.Client()
	createIdentities(t, client)
	denyBinding(t, client, "deny-bind-")
	for i := range 10 {
		createPod(t, client, fmt.Sprintf("small-%d", i), "100m", false)
	}
	for i := range 4 {
		createPod(t, client, fmt.Sprintf("big-%d", i), "8", false) // no node has 8 CPUs
	}
	for i := range 2 {
		createPod(t, client, fmt.Sprintf("gated-%d", i), "100m", true)
	}
	for i := range 3 {
		createPod(t, client, fmt.Sprintf("deny-bind-%d", i), "100m", false)
	}
	waitFor(t, 60*time.Second, func() string {
		n := cp.Queue().Count()
		if n[groundtruth.Unschedulable] == 4 && n[groundtruth.Gated] == 2 && n[groundtruth.Active] == 0 &&
			n[groundtruth.ErrorBackoff]+n[groundtruth.InFlight] == 3 {
			return ""
		}
		return fmt.Sprintf("ground truth %v", n)
	})

	// "status" with no flags finds the scheduler through KUBECONFIG alone.
	t.Setenv("KUBECONFIG", kubeconfig)

	t.Run("no flags: the table", func(t *testing.T) {
		out, err := runStatus(t)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"SCHEDULER  kube-scheduler", "(from the kubeconfig)", "PENDING    activeQ ", "INCOMING (per second over the last", "ATTEMPTS", "SIGNALS"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("no flags: counts match the ground truth", func(t *testing.T) {
		checkCounts(t, cp)
	})

	t.Run("read-only identity, impersonated", func(t *testing.T) {
		checkCounts(t, cp, "--as", readerUser)
	})

	t.Run("read-only identity, its own certificate", func(t *testing.T) {
		t.Setenv("KUBECONFIG", identityKubeconfig(t, cp, readerUser))
		checkCounts(t, cp)
	})

	t.Run("identity without /metrics, impersonated", func(t *testing.T) {
		_, err := runStatus(t, "--as", noMetricsUser)
		checkRBACMessage(t, err, noMetricsUser, "(SelfSubjectAccessReview)")
	})

	t.Run("identity without /metrics, its own certificate, then the remedy", func(t *testing.T) {
		t.Setenv("KUBECONFIG", identityKubeconfig(t, cp, noMetricsUser))
		// This 403 comes from kube-scheduler itself (delegated authorization).
		_, err := runStatus(t)
		remedy := checkRBACMessage(t, err, noMetricsUser, cp.MetricsURL+": 403 Forbidden")
		applyRemedy(t, client, remedy)
		// Authorization decisions are cached by the scheduler for a short while.
		waitFor(t, 30*time.Second, func() string {
			if _, err := runStatus(t, "-o", "json"); err != nil {
				return err.Error()
			}
			return ""
		})
	})

	t.Run("no extension: discovery, then a port-forward that needs a kubelet", func(t *testing.T) {
		checkPortForwardWithoutKubelet(t, cp, client)
	})
}

// startControlPlane starts an embedded control plane for the test (which
// is skipped with -short) and stops it at the end.
func startControlPlane(t *testing.T, opts embedded.Options) *embedded.ControlPlane {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a control plane; skipped with -short")
	}
	cp, err := embedded.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	// kube-scheduler's runCommand registers the gate metrics after Setup, and
	// its main package imports the build-info metric; the embedded control
	// plane calls Setup and Run directly and does neither, so do it here.
	utilfeature.DefaultMutableFeatureGate.AddMetrics()
	return cp
}

// TestStatus_embedded's last step: without the kubeconfig extension, status
// falls back to discovery and a port-forward. Discovery runs against the real
// API server; the port-forward itself needs a kubelet, which the embedded
// control plane does not have, so the test checks the error it gets.
func checkPortForwardWithoutKubelet(t *testing.T, cp *embedded.ControlPlane, client kubernetes.Interface) {
	ctx := context.Background()
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler-" + embedded.FakeNodeName(0), Namespace: metricscrape.SchedulerNamespace,
			Labels: map[string]string{"component": "kube-scheduler", "tier": "control-plane"}},
		Spec: v1.PodSpec{NodeName: embedded.FakeNodeName(0), HostNetwork: true,
			Containers: []v1.Container{{Name: "kube-scheduler", Image: "registry.k8s.io/kube-scheduler:" + kubeversion.Get()}}},
	}
	created, err := client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status.Phase = v1.PodRunning
	if _, err := client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	admin, err := clientcmd.LoadFromFile(cp.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range admin.Clusters {
		delete(c.Extensions, metricscrape.KubeconfigExtensionName)
	}
	path := filepath.Join(t.TempDir(), "no-extension.kubeconfig")
	if err := clientcmd.WriteToFile(*admin, path); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", path)
	_, err = runStatus(t)
	want := "cannot reach kube-scheduler kube-system/kube-scheduler-node-0:10259 through a port-forward: error upgrading connection"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("err = %v, want the port-forward to the discovered pod to fail", err)
	}
}

// runStatus runs `kubectl schedq status` in this process with a short
// interval and returns its stdout.
func runStatus(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut strings.Builder
	root := cmd.NewCmdSchedq(genericStreams(&out, &errOut))
	root.SetArgs(append([]string{"status", "--interval", "500ms", "--request-timeout", "20s"}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// checkCounts runs status -o json until its pending counts and the ground
// truth, read just before and just after, agree (pods in the error backoff
// are briefly in flight each time they are retried).
func checkCounts(t *testing.T, cp *embedded.ControlPlane, args ...string) {
	t.Helper()
	var last string
	for attempt := 0; attempt < 8; attempt++ {
		before := cp.Queue().Count()
		out, err := runStatus(t, append([]string{"-o", "json"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		after := cp.Queue().Count()
		var st status.SchedulerStatus
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if st.Kind != status.SchedulerStatusKind || st.Source.Kind != metricscrape.OriginKubeconfig || st.Scheduler.Version == "" {
			t.Fatalf("status = %s", out)
		}
		if len(st.FeatureGates) == 0 || st.FeatureGates[0].Name != metricscrape.GateSchedulerPopFromBackoffQ || !st.FeatureGates[0].Enabled {
			t.Fatalf("gates = %+v, want SchedulerPopFromBackoffQ on first", st.FeatureGates)
		}
		want := status.PendingPods{
			Active:        int64(after[groundtruth.Active]),
			Backoff:       int64(after[groundtruth.Backoff] + after[groundtruth.ErrorBackoff]),
			Unschedulable: int64(after[groundtruth.Unschedulable]),
			Gated:         int64(after[groundtruth.Gated]),
		}
		want.Total = want.Active + want.Backoff + want.Unschedulable + want.Gated
		// v1.37 reports its pod-group queues too, empty without pod groups.
		var none int64
		want.IncompletePodGroupPods, want.PendingPodGroupPods = &none, &none
		if fmt.Sprint(before) == fmt.Sprint(after) && reflect.DeepEqual(st.Pending, want) {
			if st.Pending.Unschedulable != 4 || st.Pending.Gated != 2 {
				t.Errorf("pending = %+v, want 4 unschedulable and 2 gated", st.Pending)
			}
			if st.Attempts[0].Result != metricscrape.ResultScheduled || st.Attempts[0].Total < 10 {
				t.Errorf("attempts = %+v, want at least the 10 small pods scheduled", st.Attempts)
			}
			return
		}
		last = fmt.Sprintf("status %+v, ground truth before %v, after %v", st.Pending, before, after)
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("never agreed: %s", last)
}

// checkRBACMessage checks the error of a refused status and returns the
// YAML between its heredoc markers.
func checkRBACMessage(t *testing.T, err error, user, wantPrefix string) string {
	t.Helper()
	if err == nil {
		t.Fatal("status succeeded, want a 403")
	}
	msg := err.Error()
	for _, want := range []string{wantPrefix, fmt.Sprintf("user %q may not get /metrics", user), "kubectl apply -f - <<'EOF'", `- nonResourceURLs: ["/metrics"]`, fmt.Sprintf("name: %q", user)} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	_, doc, _ := strings.Cut(msg, "<<'EOF'\n")
	doc, _, _ = strings.Cut(doc, "EOF\n")
	return doc
}

// applyRemedy creates the ClusterRole and ClusterRoleBinding of the message.
func applyRemedy(t *testing.T, client kubernetes.Interface, doc string) {
	t.Helper()
	parts := strings.Split(doc, "\n---\n")
	if len(parts) != 2 {
		t.Fatalf("remedy has %d documents:\n%s", len(parts), doc)
	}
	var role rbacv1.ClusterRole
	var binding rbacv1.ClusterRoleBinding
	if err := yaml.UnmarshalStrict([]byte(parts[0]), &role); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict([]byte(parts[1]), &binding); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := client.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, &binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createIdentities gives both users read access to pods, events and leases;
// only the reader may also get /metrics.
func createIdentities(t *testing.T, client kubernetes.Interface) {
	t.Helper()
	read := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods", "events"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list"}},
	}
	roles := map[string][]rbacv1.PolicyRule{
		readerUser:    append(read, rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}),
		noMetricsUser: read,
	}
	for user, rules := range roles {
		bindClusterRole(t, client, user, rules)
	}
}

// identityKubeconfig writes a kubeconfig for user, authenticated by a client
// certificate, with the admin kubeconfig's cluster (and so its scheduler
// endpoint extension).
func identityKubeconfig(t *testing.T, cp *embedded.ControlPlane, user string) string {
	t.Helper()
	rc, err := cp.ClientConfigFor(user)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := clientcmd.LoadFromFile(cp.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	cluster := admin.Contexts[admin.CurrentContext].Cluster
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[cluster] = admin.Clusters[cluster]
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: rc.CertData, ClientKeyData: rc.KeyData}
	cfg.Contexts[user] = &clientcmdapi.Context{Cluster: cluster, AuthInfo: user}
	cfg.CurrentContext = user
	path := filepath.Join(t.TempDir(), user+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func createPod(t *testing.T, client kubernetes.Interface, name, cpu string, gated bool) {
	t.Helper()
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name: "pause", Image: "registry.k8s.io/pause:3.10",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}},
		}}},
	}
	if gated {
		p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/hold"}}
	}
	if _, err := client.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// denyBinding makes every binding of a pod whose name has prefix fail: the
// failure has no rejecting plugin, so the pod goes to the error backoff.
func denyBinding(t *testing.T, client kubernetes.Interface, prefix string) {
	t.Helper()
	if err := embedded.DenyBinding(context.Background(), client, "deny-bind", prefix, "binding denied by the test", metav1.NamespaceDefault); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it returns "" or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, cond func() string) {
	t.Helper()
	testsupport.Eventually(t, timeout, 200*time.Millisecond, cond)
}

func genericStreams(out, errOut *strings.Builder) genericiooptions.IOStreams {
	return genericiooptions.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}
}
