package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-schedq/kubectl-schedq/perf/embedded"
	"github.com/kubectl-schedq/kubectl-schedq/perf/groundtruth"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/cmd"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape/ekstest"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/status"
)

// eksReader may list and get pods and get the scheduler's metrics through
// EKS's metrics API, and nothing else; eksNoMetrics lacks the latter.
const (
	eksReader    = "schedq-eks-reader"
	eksNoMetrics = "schedq-eks-no-metrics"
)

// TestEKS_embedded reproduces EKS's shape with real parts: a real
// kube-apiserver serves APIService v1.metrics.eks.amazonaws.com, whose
// backend (an aggregated API server in this test, verifying the
// aggregator's front-proxy client certificate and X-Remote-User as a real
// one does) serves the real scheduler's metrics at the ksh path and answers
// 406 to the Accept headers EKS refuses; no scheduler pod is visible, and
// the reader's only rule beside pods is get on ksh/metrics. status and
// explain -A, with no metrics flag, find the metrics there, say so, and
// place a static set of parked and gated pods as the scheduler's queue has
// them.
//
// The scheduler's metrics are process-global, so the test runs in a
// process of its own: another control plane run before it in this one
// would leave its counts in them.
func TestEKS_embedded(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane; skipped with -short")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestEKS_embeddedChild$", "-test.v", "-test.count=1", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), eksChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestEKS_embeddedChild") {
		t.Fatalf("child process (%v):\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if _, msg, ok := strings.Cut(line, "eks_test.go:"); ok {
			t.Logf("child: eks_test.go:%s", msg)
		}
	}
}

// eksChildEnv marks the process TestEKS_embedded runs its child in.
const eksChildEnv = "SCHEDQ_INTEGRATION_EKS_CHILD"

// TestEKS_embeddedChild is TestEKS_embedded's process.
func TestEKS_embeddedChild(t *testing.T) {
	if os.Getenv(eksChildEnv) == "" {
		t.Skip("run by TestEKS_embedded in a process of its own")
	}
	cp := startControlPlane(t, embedded.Options{Nodes: 2, FrontProxy: true, KubeconfigPath: filepath.Join(t.TempDir(), "admin.kubeconfig")})
	client := cp.Client()
	backend := startEKSBackend(t, cp)
	registerEKSMetricsAPI(t, cp, backend.port())

	// The static set: parked (no node has 8 CPUs), gated, and a few bound.
	for i := range 3 {
		createPod(t, client, fmt.Sprintf("small-%d", i), "100m", false)
	}
	for i := range 4 {
		createPod(t, client, fmt.Sprintf("parked-%d", i), "8", false)
	}
	for i := range 3 {
		createPod(t, client, fmt.Sprintf("gated-%d", i), "100m", true)
	}
	waitFor(t, 60*time.Second, func() string {
		n := cp.Queue().Count()
		if n[groundtruth.Unschedulable] == 4 && n[groundtruth.Gated] == 3 && len(cp.Queue().Pods) == 7 {
			return ""
		}
		return fmt.Sprintf("ground truth %v", n)
	})
	grantEKSReaders(t, client)

	t.Run("the path answers 406 to the scheduler's own Accept header", func(t *testing.T) {
		// Through the real API server and aggregator: what a client that
		// asks for text only gets.
		hc, err := rest.HTTPClientFor(cp.RESTConfig)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodGet, cp.APIServerURL+metricscrape.EKSSchedulerMetricsPath, nil)
		req.Header.Set("Accept", "text/plain;version=0.0.4")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotAcceptable {
			t.Errorf("status %d, want 406", resp.StatusCode)
		}
	})

	t.Setenv("KUBECONFIG", eksKubeconfig(t, cp, eksReader))

	t.Run("status, no flags", func(t *testing.T) {
		out, err := runStatus(t)
		if err != nil {
			t.Fatal(err)
		}
		if want := "SOURCE     EKS: the API server's " + metricscrape.EKSSchedulerMetricsPath; !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
		var st status.SchedulerStatus
		jsonOut, err := runStatus(t, "-o", "json")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(jsonOut), &st); err != nil {
			t.Fatalf("%v\n%s", err, jsonOut)
		}
		if st.Source.Kind != metricscrape.OriginAPIServer || st.Source.Platform != "EKS" {
			t.Errorf("source = %+v", st.Source)
		}
		if st.Pending.Unschedulable != 4 || st.Pending.Gated != 3 || st.Pending.Active != 0 || st.Pending.Backoff != 0 {
			t.Errorf("pending = %+v, want the ground truth's 4 unschedulable and 3 gated", st.Pending)
		}
		if users := backend.users(); !slices.Contains(users, eksReader) {
			t.Errorf("the backend saw X-Remote-User %v, want %s: the aggregator did not pass the reader on", users, eksReader)
		}
	})

	t.Run("explain -A, no flags: every pod where the scheduler has it", func(t *testing.T) {
		out, errOut, err := runExplain(t, "-A", "-o", "json")
		if err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		var list explain.ExplanationList
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if want := "EKS: the API server's " + metricscrape.EKSSchedulerMetricsPath; list.Metrics != want {
			t.Errorf("metrics = %q, want %q", list.Metrics, want)
		}
		if n := strings.Count(errOut, "serves the scheduler's metrics only, not its /configz or /flagz"); n != 1 {
			t.Errorf("the missing /configz is said %d times, want once:\n%s", n, errOut)
		}
		checkPlacement(t, cp.Queue(), list)

		_, errOut, err = runExplain(t, "-A")
		if err != nil || !strings.Contains(errOut, "metrics: EKS: the API server's "+metricscrape.EKSSchedulerMetricsPath) {
			t.Errorf("the table's footer does not name the metrics (%v):\n%s", err, errOut)
		}
	})

	t.Run("without ksh/metrics: the 403 names it, and its remedy works", func(t *testing.T) {
		t.Setenv("KUBECONFIG", eksKubeconfig(t, cp, eksNoMetrics))
		_, err := runStatus(t)
		if err == nil {
			t.Fatal("status succeeded, want a 403")
		}
		msg := err.Error()
		for _, want := range []string{"403 Forbidden", fmt.Sprintf("user %q may not get ksh/metrics in API group metrics.eks.amazonaws.com", eksNoMetrics),
			`- apiGroups: ["metrics.eks.amazonaws.com"]`, `resources: ["ksh/metrics"]`} {
			if !strings.Contains(msg, want) {
				t.Errorf("message lacks %q:\n%s", want, msg)
			}
		}
		_, doc, _ := strings.Cut(msg, "<<'EOF'\n")
		doc, _, _ = strings.Cut(doc, "EOF\n")
		applyRemedy(t, client, doc)
		waitFor(t, 30*time.Second, func() string {
			if _, err := runStatus(t, "-o", "json"); err != nil {
				return err.Error()
			}
			return ""
		})
	})
}

// checkPlacement compares explain's queue for every pending pod with the
// scheduler's own.
func checkPlacement(t *testing.T, truth groundtruth.Queue, list explain.ExplanationList) {
	t.Helper()
	placed := 0
	for _, e := range list.Items {
		if e.State != explain.StatePending {
			continue
		}
		gt, ok := truth.Get(e.Namespace, e.Name)
		switch {
		case !ok:
			t.Errorf("%s/%s: explained as %s, not in the scheduler's queue", e.Namespace, e.Name, e.Queue.Word())
		case string(e.Queue) != string(gt.Queue):
			t.Errorf("%s/%s: explained as %s, the scheduler has it in %s", e.Namespace, e.Name, e.Queue.Word(), gt.Queue)
		default:
			placed++
		}
	}
	if placed != len(truth.Pods) {
		t.Errorf("%d of the scheduler's %d pods placed right", placed, len(truth.Pods))
	}
	t.Logf("placement: %d/%d pods right", placed, len(truth.Pods))
}

// eksBackend is the aggregated API server behind
// APIService v1.metrics.eks.amazonaws.com.
type eksBackend struct {
	srv *httptest.Server
	mu  sync.Mutex
	// seen are the X-Remote-User values of the requests it answered.
	seen []string
}

func (b *eksBackend) port() int {
	u, _ := url.Parse(b.srv.URL)
	p, _ := strconv.Atoi(u.Port())
	return p
}

func (b *eksBackend) users() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.seen)
}

// startEKSBackend serves ekstest.Handler with the real scheduler's metrics,
// read with the admin's credentials, to requests that come from the
// aggregator: a client certificate the front-proxy CA signed for
// FrontProxyClientName, and the user in X-Remote-User (what an aggregated
// API server's request-header authentication checks).
func startEKSBackend(t *testing.T, cp *embedded.ControlPlane) *eksBackend {
	t.Helper()
	rt, err := rest.TransportFor(metricscrape.CredentialConfig(cp.RESTConfig, true, ""))
	if err != nil {
		t.Fatal(err)
	}
	scheduler := &http.Client{Transport: rt, Timeout: 10 * time.Second}
	metrics := func(ctx context.Context) ([]byte, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cp.MetricsURL, nil)
		resp, err := scheduler.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("scheduler: %s", resp.Status)
		}
		return io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(cp.FrontProxyCA) {
		t.Fatal("no front-proxy CA")
	}
	b := &eksBackend{}
	api := ekstest.Handler(metrics)
	b.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 || r.TLS.PeerCertificates[0].Subject.CommonName != embedded.FrontProxyClientName {
			http.Error(w, "not the aggregator", http.StatusUnauthorized)
			return
		}
		user := r.Header.Get("X-Remote-User")
		if user == "" {
			http.Error(w, "no X-Remote-User", http.StatusUnauthorized)
			return
		}
		b.mu.Lock()
		b.seen = append(b.seen, user)
		b.mu.Unlock()
		api.ServeHTTP(w, r)
	}))
	b.srv.TLS = &tls.Config{ClientCAs: pool, ClientAuth: tls.VerifyClientCertIfGiven}
	b.srv.StartTLS()
	t.Cleanup(b.srv.Close)
	return b
}

// registerEKSMetricsAPI creates a Service in front of the backend (an
// ExternalName on localhost: an EndpointSlice may not hold a loopback
// address) and APIService v1.metrics.eks.amazonaws.com, and waits until the
// aggregator serves the group version.
func registerEKSMetricsAPI(t *testing.T, cp *embedded.ControlPlane, port int) {
	t.Helper()
	ctx := context.Background()
	client := cp.Client()
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "eks-metrics", Namespace: metav1.NamespaceDefault},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeExternalName, ExternalName: "localhost",
			Ports: []v1.ServicePort{{Name: "https", Port: int32(port)}}},
	}
	if _, err := client.CoreV1().Services(svc.Namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cp.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	apiService := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1",
		"kind":       "APIService",
		"metadata":   map[string]any{"name": "v1." + metricscrape.EKSMetricsGroup},
		"spec": map[string]any{
			"group": metricscrape.EKSMetricsGroup, "version": "v1",
			"service":               map[string]any{"namespace": svc.Namespace, "name": svc.Name, "port": int64(port)},
			"insecureSkipTLSVerify": true,
			"groupPriorityMinimum":  int64(1000), "versionPriority": int64(15),
		},
	}}
	gvr := schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	if _, err := dyn.Resource(gvr).Create(ctx, apiService, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, func() string {
		l, err := client.Discovery().ServerResourcesForGroupVersion(metricscrape.EKSMetricsGroupVersion)
		if err != nil {
			return err.Error()
		}
		if len(l.APIResources) == 0 {
			return "no resources yet"
		}
		return ""
	})
}

// grantEKSReaders lets eksReader list and get pods and get ksh/metrics, and
// eksNoMetrics only the former.
func grantEKSReaders(t *testing.T, client kubernetes.Interface) {
	t.Helper()
	pods := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}
	ksh := rbacv1.PolicyRule{APIGroups: []string{metricscrape.EKSMetricsGroup}, Resources: []string{metricscrape.EKSSchedulerMetricsResource}, Verbs: []string{"get"}}
	for user, rules := range map[string][]rbacv1.PolicyRule{eksReader: {pods, ksh}, eksNoMetrics: {pods}} {
		bindClusterRole(t, client, user, rules)
	}
}

func bindClusterRole(t *testing.T, client kubernetes.Interface, user string, rules []rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	if _, err := client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// eksKubeconfig is user's kubeconfig without the scheduler extension: as
// on EKS, nothing but the cluster says where the metrics are.
func eksKubeconfig(t *testing.T, cp *embedded.ControlPlane, user string) string {
	t.Helper()
	path := identityKubeconfig(t, cp, user)
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		delete(c.Extensions, metricscrape.KubeconfigExtensionName)
	}
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// runExplain runs `kubectl schedq explain` in this process and returns its
// stdout and stderr.
func runExplain(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut strings.Builder
	root := cmd.NewCmdSchedq(genericStreams(&out, &errOut))
	root.SetArgs(append([]string{"explain", "--request-timeout", "20s"}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}
