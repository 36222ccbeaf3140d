package embedded

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-schedq/kubectl-schedq/perf/groundtruth"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
)

// TestControlPlane starts one control plane and walks it through the life of
// pods: bound, unschedulable, moved by a NodeAdd; checks RBAC on the API and
// on the scheduler's /metrics; then stops it and checks that nothing is left
// serving and no file is left behind.
func TestControlPlane(t *testing.T) {
	skipIfShort(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	kubeconfigOut := filepath.Join(t.TempDir(), "kubeconfig")
	servingBefore := servingGoroutines()
	goroutinesBefore := runtime.NumGoroutine()

	const leftover = 7 * time.Minute
	// Logs as a workload run writes them (Provider): upstream's harness's
	// level, into a file that Stop removes.
	cp := startForTest(t, Options{Nodes: 3, KubeconfigPath: kubeconfigOut, PodMaxInUnschedulablePodsDuration: leftover,
		LogToFile: true, LogLevel: HarnessLogVerbosity})
	client := cp.Client()
	ctx := context.Background()

	t.Run("the scheduler's queue has the leftover duration given", func(t *testing.T) {
		// An unexported field of upstream's PriorityQueue: read, never set.
		q := reflect.ValueOf(cp.Scheduler.SchedulingQueue).Elem()
		if got := time.Duration(q.FieldByName("podMaxInUnschedulablePodsDuration").Int()); got != leftover {
			t.Errorf("podMaxInUnschedulablePodsDuration = %v, want %v", got, leftover)
		}
	})

	t.Run("kubeconfig carries the scheduler endpoint", func(t *testing.T) {
		if cp.KubeconfigPath != kubeconfigOut {
			t.Fatalf("KubeconfigPath = %s, want %s", cp.KubeconfigPath, kubeconfigOut)
		}
		raw, err := clientcmd.LoadFromFile(cp.KubeconfigPath)
		if err != nil {
			t.Fatal(err)
		}
		cluster := raw.Clusters[raw.Contexts[raw.CurrentContext].Cluster]
		ext, ok := cluster.Extensions[metricscrape.KubeconfigExtensionName].(*k8sruntime.Unknown)
		if !ok {
			t.Fatalf("cluster extensions = %v, want %s", cluster.Extensions, metricscrape.KubeconfigExtensionName)
		}
		var ep metricscrape.SchedulerEndpoint
		if err := json.Unmarshal(ext.Raw, &ep); err != nil {
			t.Fatal(err)
		}
		want := metricscrape.SchedulerEndpoint{
			APIVersion: metricscrape.SchedulerEndpointAPIVersion, Kind: metricscrape.SchedulerEndpointKind,
			MetricsURL: cp.MetricsURL, QueueURL: cp.QueueURL, InsecureSkipTLSVerify: true,
		}
		if ep != want {
			t.Errorf("extension = %+v, want %+v", ep, want)
		}
		// The kubeconfig's own credentials reach the API and the metrics.
		config, err := clientcmd.BuildConfigFromFlags("", cp.KubeconfigPath)
		if err != nil {
			t.Fatal(err)
		}
		nodes, err := kubernetes.NewForConfigOrDie(config).CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes.Items) != 3 {
			t.Errorf("%d nodes, want 3", len(nodes.Items))
		}
		if code, _ := scrape(t, cp.MetricsURL, config); code != http.StatusOK {
			t.Errorf("GET /metrics with the kubeconfig's credentials: %d, want 200", code)
		}
	})

	t.Run("pods are bound", func(t *testing.T) {
		createPods(t, client, "small", 30, nil)
		waitBound(t, client, "small", 30, 30*time.Second)
	})

	t.Run("the logs are in the control plane's file at -v=2", func(t *testing.T) {
		// The scheduler's V(2) line for every binding, as upstream's
		// harness logs it.
		eventually(t, 10*time.Second, func() string {
			b, err := os.ReadFile(filepath.Join(cp.dir, LogFileName))
			if err != nil {
				return err.Error()
			}
			if n := strings.Count(string(b), "Successfully bound pod to node"); n < 30 {
				return fmt.Sprintf("%d bindings logged in %s, want 30", n, LogFileName)
			}
			return ""
		})
	})

	extra := map[string]string{"schedq.test/pool": "extra"}
	t.Run("unschedulable pods are unschedulable in the ground truth and scheduler_pending_pods", func(t *testing.T) {
		createPods(t, client, "parked", 5, extra)
		eventually(t, 30*time.Second, func() string {
			if n := cp.Queue().Count()[groundtruth.Unschedulable]; n != 5 {
				return "ground truth: " + jsonString(cp.Queue())
			}
			return ""
		})
		q, err := groundtruth.Fetch(ctx, nil, cp.QueueURL)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range q.Pods {
			if p.Queue != groundtruth.Unschedulable || !strings.HasPrefix(p.Name, "parked-") || p.Attempts < 1 || p.Timestamp.IsZero() {
				t.Errorf("GET %s: pod %+v, want parked-* unschedulable with attempts and a timestamp", cp.QueueURL, p)
			}
		}
		if len(q.Pods) != 5 {
			t.Errorf("GET %s: %d pods, want 5", cp.QueueURL, len(q.Pods))
		}
		eventually(t, 10*time.Second, func() string {
			_, families := scrape(t, cp.MetricsURL, cp.RESTConfig)
			if v := metricValue(families, "scheduler_pending_pods", map[string]string{"queue": "unschedulable"}); v != 5 {
				return "scheduler_pending_pods{queue=unschedulable} = " + jsonString(v)
			}
			return ""
		})
	})

	t.Run("a NodeAdd moves them", func(t *testing.T) {
		_, before := scrape(t, cp.MetricsURL, cp.RESTConfig)
		node := FakeNode("extra-0")
		node.Labels["schedq.test/pool"] = "extra"
		if err := CreateNodes(ctx, client, node); err != nil {
			t.Fatal(err)
		}
		waitBound(t, client, "parked", 5, 30*time.Second)
		_, after := scrape(t, cp.MetricsURL, cp.RESTConfig)
		nodeAdd := map[string]string{"event": "NodeAdd"}
		if d := metricValue(after, "scheduler_queue_incoming_pods_total", nodeAdd) - metricValue(before, "scheduler_queue_incoming_pods_total", nodeAdd); d != 5 {
			t.Errorf("scheduler_queue_incoming_pods_total{event=NodeAdd} rose by %v, want 5", d)
		}
		if q := cp.Queue(); len(q.Pods) != 0 {
			t.Errorf("queue after all pods are bound: %s", jsonString(q))
		}
	})

	t.Run("gated pods are gated", func(t *testing.T) {
		pod := testPod("gated-0", nil)
		pod.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "schedq.test/hold"}}
		if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, func() string {
			if p, ok := cp.Queue().Get("default", "gated-0"); !ok || p.Queue != groundtruth.Gated {
				return "ground truth: " + jsonString(cp.Queue())
			}
			_, families := scrape(t, cp.MetricsURL, cp.RESTConfig)
			if v := metricValue(families, "scheduler_pending_pods", map[string]string{"queue": "gated"}); v != 1 {
				return "scheduler_pending_pods{queue=gated} = " + jsonString(v)
			}
			return ""
		})
		pod, err := client.CoreV1().Pods("default").Get(ctx, "gated-0", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pod.Spec.SchedulingGates = nil
		if _, err := client.CoreV1().Pods("default").Update(ctx, pod, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitBound(t, client, "gated", 1, 10*time.Second)
	})

	t.Run("pods whose binding fails are in errorBackoff", func(t *testing.T) {
		// A ValidatingAdmissionPolicy denies pods/binding for fail-* pods:
		// the failure has no rejecting plugin, so the pod goes to
		// podErrorBackoffQ.
		if err := DenyBinding(ctx, client, "deny-fail-bindings", "fail-", "binding denied by the test", "default"); err != nil {
			t.Fatal(err)
		}
		createPods(t, client, "fail", 1, nil)
		eventually(t, 20*time.Second, func() string {
			p, ok := cp.Queue().Get("default", "fail-0")
			if !ok || p.Queue != groundtruth.ErrorBackoff || p.BackoffExpiresAt.IsZero() || !p.BackoffExpiresAt.After(p.Timestamp) {
				return "ground truth: " + jsonString(cp.Queue())
			}
			return ""
		})
		if err := client.CoreV1().Pods("default").Delete(ctx, "fail-0", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, "deny-fail-bindings", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("RBAC applies to the API and to /metrics", func(t *testing.T) {
		viewer, err := cp.ClientConfigFor("viewer")
		if err != nil {
			t.Fatal(err)
		}
		_, err = kubernetes.NewForConfigOrDie(viewer).CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if !apierrors.IsForbidden(err) {
			t.Errorf("viewer lists pods: err = %v, want Forbidden", err)
		}
		if code, _ := scrape(t, cp.MetricsURL, viewer); code != http.StatusForbidden {
			t.Errorf("viewer GET /metrics: %d, want 403", code)
		}
		role := &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
			Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
		}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "metrics-readers"}},
		}
		if _, err := client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		reader, err := cp.ClientConfigFor("reader", "metrics-readers")
		if err != nil {
			t.Fatal(err)
		}
		// The scheduler caches authorization decisions for 10 s, and the
		// binding may take a moment to reach the authorizer.
		eventually(t, 20*time.Second, func() string {
			if code, _ := scrape(t, cp.MetricsURL, reader); code != http.StatusOK {
				return "reader in metrics-readers GET /metrics: " + http.StatusText(code)
			}
			return ""
		})
	})

	t.Run("a second control plane in the process is refused", func(t *testing.T) {
		_, err := Start(ctx, Options{})
		if err == nil || !strings.Contains(err.Error(), "already running in this process") {
			t.Errorf("Start while running: err = %v", err)
		}
	})

	t.Run("Stop leaves nothing serving and no files", func(t *testing.T) {
		if err := cp.Stop(); err != nil {
			t.Fatal(err)
		}
		for _, u := range []string{cp.APIServerURL, cp.MetricsURL, cp.QueueURL} {
			pu, err := url.Parse(u)
			if err != nil {
				t.Fatal(err)
			}
			if c, err := net.DialTimeout("tcp", pu.Host, time.Second); err == nil {
				c.Close()
				t.Errorf("%s still accepts connections after Stop", pu.Host)
			}
		}
		eventually(t, 10*time.Second, func() string {
			if s := servingGoroutines(); len(s) > len(servingBefore) {
				return "goroutines still serving after Stop:\n" + strings.Join(s, "\n\n")
			}
			return ""
		})
		t.Logf("goroutines: %d before Start, %d after Stop", goroutinesBefore, runtime.NumGoroutine())
		emptyDir(t, tmp)
		if _, err := os.Stat(kubeconfigOut); !os.IsNotExist(err) {
			t.Errorf("kubeconfig %s still exists after Stop (err %v)", kubeconfigOut, err)
		}
		select {
		case <-cp.Done():
		default:
			t.Error("Done is open after Stop")
		}
		if cp.Err() != nil {
			t.Errorf("Err after Stop = %v, want nil", cp.Err())
		}
	})

	t.Run("another gate setting in the same process is refused", func(t *testing.T) {
		_, err := Start(ctx, Options{FeatureGates: map[string]bool{"SchedulerPopFromBackoffQ": false}})
		if err == nil || !strings.Contains(err.Error(), "process-global") {
			t.Errorf("Start with other gates: err = %v", err)
		}
	})
}

// servingGoroutines returns the stacks of goroutines that accept connections
// or serve a listener.
func servingGoroutines() []string {
	buf := make([]byte, 16<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "net.(*TCPListener).Accept") ||
			strings.Contains(g, "net/http.(*Server).Serve(") ||
			strings.Contains(g, "grpc.(*Server).Serve(") {
			out = append(out, g)
		}
	}
	return out
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
