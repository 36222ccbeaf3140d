// Package kind_test runs the built plugin against a real kind cluster: a
// kubeadm control plane whose kube-scheduler is found by discovery and
// reached by a port-forward to 10259, as on any kubeadm cluster.
//
// Gated by SCHEDQ_KIND_E2E=1 (`make test-kind` sets it): plain `go test ./...`
// skips these tests, and with the variable set a missing Docker is a failure,
// never a skip.
package kind_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const ns = "schedq-e2e"

type cluster struct {
	name       string
	kubeconfig string
	client     kubernetes.Interface
}

func env(t *testing.T, name, def string) string {
	t.Helper()
	if v := os.Getenv(name); v != "" {
		return v
	}
	if def == "" {
		t.Fatalf("%s is not set (make test-kind sets it)", name)
	}
	return def
}

// run runs a command with a bound on its time and returns its combined output.
func run(ctx context.Context, timeout time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// dockerNames lists names with a docker listing command; format is the
// listing's name field ({{.Names}} for containers, {{.Name}} for networks).
func dockerNames(t *testing.T, format string, what ...string) []string {
	t.Helper()
	out, err := run(context.Background(), time.Minute, "docker", append(what, "--format", format)...)
	if err != nil {
		t.Fatalf("docker %v: %v\n%s", what, err, out)
	}
	return strings.Fields(out)
}

// newCluster creates a kind cluster of one node for the whole test and
// deletes it when the test ends, then checks that nothing of it is left
// behind.
func newCluster(t *testing.T) *cluster {
	t.Helper()
	return newClusterOf(t, 1)
}

// newClusterOf is newCluster with controlPlanes control-plane nodes and no
// worker: with more than one, kind puts its load balancer in front of their
// API servers, and each node runs its own kube-scheduler, the three electing
// a leader, as kubeadm's HA control planes do.
func newClusterOf(t *testing.T, controlPlanes int) *cluster {
	t.Helper()
	if os.Getenv("SCHEDQ_KIND_E2E") != "1" {
		t.Skip("kind end-to-end tests run with SCHEDQ_KIND_E2E=1 (make test-kind)")
	}
	if out, err := run(context.Background(), 30*time.Second, "docker", "info"); err != nil {
		t.Fatalf("SCHEDQ_KIND_E2E=1 but no Docker engine answers (e2e/infra/docker-engine.sh up starts one): %v\n%s", err, out)
	}
	kind := env(t, "KIND", "kind")
	image := env(t, "SCHEDQ_KIND_IMAGE", "")
	c := &cluster{
		name:       fmt.Sprintf("%s%06d", env(t, "SCHEDQ_KIND_CLUSTER_PREFIX", "schedq-e2e-"), rand.IntN(1000000)),
		kubeconfig: filepath.Join(t.TempDir(), "kubeconfig"),
	}
	networksBefore := dockerNames(t, "{{.Name}}", "network", "ls")

	// Registered first, so it runs after the cluster's deletion.
	t.Cleanup(func() { c.checkNothingLeft(t, networksBefore) })
	t.Cleanup(func() {
		out, err := run(context.Background(), 3*time.Minute, kind, "delete", "cluster", "--name", c.name, "--kubeconfig", c.kubeconfig)
		if err != nil {
			t.Errorf("kind delete cluster %s: %v\n%s", c.name, err, out)
		}
	})

	// kube-scheduler listens on all addresses, as an operator sets it
	// for a Prometheus outside the node to scrape it (kubeadm binds it to
	// 127.0.0.1); discovery's port-forward reaches it either way.
	cfg := "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\n"
	if controlPlanes > 1 {
		cfg += "nodes:\n" + strings.Repeat("- role: control-plane\n", controlPlanes)
	}
	cfg += "kubeadmConfigPatches:\n- |\n  kind: ClusterConfiguration\n  scheduler:\n    extraArgs:\n    - name: bind-address\n      value: 0.0.0.0\n"
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err != nil {
		// kubelet >= 1.35 refuses cgroup v1 unless told otherwise (KEP-5573).
		cfg += "- |\n  kind: KubeletConfiguration\n  failCgroupV1: false\n"
	}
	createTimeout := 10 * time.Minute
	if controlPlanes > 1 {
		// A joining control plane's etcd member starts within kubeadm's
		// two minutes on a quiet machine, not always on a busy one.
		cfg += "- |\n  kind: JoinConfiguration\n  timeouts:\n    etcdAPICall: 8m\n    controlPlaneComponentHealthCheck: 8m\n"
		createTimeout = 20 * time.Minute
	}
	cfgPath := filepath.Join(t.TempDir(), "kind.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := run(context.Background(), createTimeout, kind, "create", "cluster", "--name", c.name,
		"--image", image, "--config", cfgPath, "--kubeconfig", c.kubeconfig, "--wait", "5m")
	if err != nil {
		t.Fatalf("kind create cluster: %v\n%s", err, out)
	}
	t.Logf("kind cluster %s (%d control-plane nodes) ready in %s", c.name, controlPlanes, time.Since(start).Round(time.Second))

	restCfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if c.client, err = kubernetes.NewForConfig(restCfg); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *cluster) checkNothingLeft(t *testing.T, networksBefore []string) {
	for _, n := range dockerNames(t, "{{.Names}}", "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster="+c.name) {
		t.Errorf("container %s of cluster %s left behind", n, c.name)
	}
	for _, n := range dockerNames(t, "{{.Name}}", "network", "ls") {
		// kind's shared network is kind's, reused across clusters; any other new one is ours.
		if !slices.Contains(networksBefore, n) && n != "kind" {
			t.Errorf("docker network %s left behind", n)
		}
	}
	if raw, err := os.ReadFile(c.kubeconfig); err == nil && strings.Contains(string(raw), "kind-"+c.name) {
		t.Errorf("kubeconfig %s still names cluster %s:\n%s", c.kubeconfig, c.name, raw)
	}
}

// plugin runs bin/kubectl-schedq with a bound on its time. It returns
// standard output, which -o json keeps to the JSON document; warnings on
// standard error are logged, and a failure returns both.
func plugin(t *testing.T, kubeconfig string, args ...string) (string, error) {
	t.Helper()
	bin := env(t, "SCHEDQ_PLUGIN", "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, append(args, "--kubeconfig", kubeconfig)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String() + stderr.String(), err
	}
	if stderr.Len() > 0 {
		t.Logf("%s: %s", strings.Join(args, " "), strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

func pod(name, cpu string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "pause", Image: "registry.k8s.io/pause:3.10.2",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
		}}},
	}
}

// seed creates parked pods (a CPU request no node has), gated pods and pods
// whose binding a ValidatingAdmissionPolicy denies (they back off after an
// error), as the demo does.
func (c *cluster) seed(t *testing.T) (parked, gated, denied []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := c.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	denyBinding(ctx, t, c.client, "deny-bind-")
	var pods []*corev1.Pod
	for i := range 3 {
		p := pod(fmt.Sprintf("parked-%d", i), "1000")
		parked = append(parked, p.Name)
		pods = append(pods, p)
	}
	for i := range 2 {
		p := pod(fmt.Sprintf("gated-%d", i), "10m")
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/approval"}}
		gated = append(gated, p.Name)
		pods = append(pods, p)
	}
	for i := range 2 {
		p := pod(fmt.Sprintf("deny-bind-%d", i), "10m")
		denied = append(denied, p.Name)
		pods = append(pods, p)
	}
	for _, p := range pods {
		if _, err := c.client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Wait until the scheduler has tried every pod that it can try.
	want := map[string]string{}
	for _, n := range parked {
		want[n] = corev1.PodReasonUnschedulable
	}
	for _, n := range gated {
		want[n] = corev1.PodReasonSchedulingGated
	}
	for _, n := range denied {
		want[n] = corev1.PodReasonSchedulerError
	}
	poll(ctx, t, "pods to reach their PodScheduled reasons", func() (bool, string) {
		list, err := c.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var missing []string
		for _, p := range list.Items {
			if w, ok := want[p.Name]; ok && scheduledReason(&p) != w {
				missing = append(missing, fmt.Sprintf("%s: %q, want %q", p.Name, scheduledReason(&p), w))
			}
		}
		return len(missing) == 0 && len(list.Items) >= len(want), strings.Join(missing, "; ")
	})
	return parked, gated, denied
}

func scheduledReason(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.Reason
		}
	}
	return ""
}

func poll(ctx context.Context, t *testing.T, what string, f func() (bool, string)) {
	t.Helper()
	var last string
	for {
		var ok bool
		if ok, last = f(); ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s: %s", what, last)
		case <-time.After(time.Second):
		}
	}
}

func denyBinding(ctx context.Context, t *testing.T, c kubernetes.Interface, prefix string) {
	t.Helper()
	fail := admissionv1.Fail
	name := "schedq-e2e-deny-bind"
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods/binding"}},
				},
			}}},
			Validations: []admissionv1.Validation{{Expression: fmt.Sprintf("!object.metadata.name.startsWith(%q)", prefix), Message: "the e2e test denies this binding"}},
		},
	}
	if _, err := c.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name, ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}},
	}
	if _, err := c.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The policy holds once the apiserver's informer has it: probe with a
	// gated pod's binding until one is denied.
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) == 0 {
		t.Fatalf("nodes: %v (%d)", err, len(nodes.Items))
	}
	i := 0
	poll(ctx, t, "the binding policy to take effect", func() (bool, string) {
		i++
		p := pod(fmt.Sprintf("%sprobe-%d", prefix, i), "10m")
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/probe"}}
		if _, err := c.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return false, err.Error()
		}
		err := c.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: ns},
			Target:     corev1.ObjectReference{Kind: "Node", Name: nodes.Items[0].Name},
		}, metav1.CreateOptions{})
		_ = c.CoreV1().Pods(ns).Delete(ctx, p.Name, *metav1.NewDeleteOptions(0))
		if err == nil {
			return false, "binding of a probe pod was allowed"
		}
		return strings.Contains(err.Error(), "the e2e test denies this binding"), err.Error()
	})
}

type statusJSON struct {
	Pending struct {
		Active        int64 `json:"activeQ"`
		Backoff       int64 `json:"backoffQ"`
		Unschedulable int64 `json:"unschedulablePods"`
		Gated         int64 `json:"gated"`
		Total         int64 `json:"total"`
	} `json:"pending"`
	Error string `json:"error"`
}

type schedulerJSON struct {
	Scheduler struct {
		Version   string `json:"version"`
		Model     string `json:"model"`
		ModelNote string `json:"modelNote"`
	} `json:"scheduler"`
}

type explainJSON struct {
	Items []struct {
		Namespace, Name, Queue string
	} `json:"items"`
	Metrics     string `json:"metrics"`
	Model       string `json:"model"`
	ModelSource string `json:"modelSource"`
	Config      struct {
		PodMaxInUnschedulablePods string `json:"podMaxInUnschedulablePods"`
		Source                    string `json:"source"`
	} `json:"config"`
}

// explainAll runs explain -A -o json with kubeconfig.
func explainAll(t *testing.T, kubeconfig string) explainJSON {
	t.Helper()
	out, err := plugin(t, kubeconfig, "explain", "-A", "-o", "json")
	if err != nil {
		t.Fatalf("explain -A: %v\n%s", err, out)
	}
	var e explainJSON
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatalf("explain -A -o json: %v\n%s", err, out)
	}
	return e
}

// kubeVersion is the Kubernetes version of the node image (make test-kind
// sets it), and its model: v1.MINOR.
func kubeVersion(t *testing.T) (version, model string, minor int) {
	t.Helper()
	version = env(t, "SCHEDQ_KIND_KUBE_VERSION", "")
	if _, err := fmt.Sscanf(version, "v1.%d.", &minor); err != nil {
		t.Fatalf("SCHEDQ_KIND_KUBE_VERSION=%q: want v1.MINOR.PATCH", version)
	}
	return version, fmt.Sprintf("v1.%d", minor), minor
}

// readsTheScheduler checks that explain chose the model of the node
// image's scheduler from its own version and read its configuration from
// /configz and, where served by default (v1.36 on), /flagz.
func readsTheScheduler(t *testing.T, e explainJSON) {
	t.Helper()
	_, model, minor := kubeVersion(t)
	if e.Model != model || !strings.Contains(e.ModelSource, "kubernetes_build_info") {
		t.Errorf("model %q from %q, want %s from the scheduler's kubernetes_build_info", e.Model, e.ModelSource, model)
	}
	flagz := minor < 36 || strings.Contains(e.Config.Source, "/flagz")
	if !strings.Contains(e.Config.Source, "/configz") || !flagz || e.Config.PodMaxInUnschedulablePods != "5m0s" {
		t.Errorf("config %+v, want it read from /configz and, from v1.36, /flagz (leftover 5m0s)", e.Config)
	}
}

func TestKind(t *testing.T) {
	c := newCluster(t)
	parked, gated, denied := c.seed(t)

	t.Run("status counts agree with the pods", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		// Backing-off pods move between backoffQ and activeQ: poll for a
		// snapshot where every pod is where it must be.
		poll(ctx, t, "status to count every pod", func() (bool, string) {
			out, err := plugin(t, c.kubeconfig, "status", "-o", "json")
			if err != nil {
				return false, fmt.Sprintf("status: %v\n%s", err, out)
			}
			var s statusJSON
			if err := json.Unmarshal([]byte(out), &s); err != nil {
				return false, fmt.Sprintf("status -o json: %v\n%s", err, out)
			}
			p := s.Pending
			ok := p.Unschedulable == int64(len(parked)) && p.Gated == int64(len(gated)) &&
				p.Active+p.Backoff == int64(len(denied))
			return ok, fmt.Sprintf("pending %+v; want unschedulable %d, gated %d, active+backoff %d", p, len(parked), len(gated), len(denied))
		})
	})

	t.Run("status names the scheduler's version and model", func(t *testing.T) {
		version, model, _ := kubeVersion(t)
		out, err := plugin(t, c.kubeconfig, "status", "-o", "json")
		if err != nil {
			t.Fatalf("status: %v\n%s", err, out)
		}
		var s schedulerJSON
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("status -o json: %v\n%s", err, out)
		}
		if got := s.Scheduler; got.Version != version || got.Model != model || got.ModelNote != "" {
			t.Errorf("scheduler %+v, want version %s read as model %s", got, version, model)
		}
	})

	t.Run("explain places every pod", func(t *testing.T) {
		e := explainAll(t, c.kubeconfig)
		readsTheScheduler(t, e)
		got := map[string]string{}
		for _, it := range e.Items {
			if it.Namespace == ns {
				got[it.Name] = it.Queue
			}
		}
		for _, tc := range []struct {
			pods  []string
			queue []string
		}{
			{parked, []string{"unschedulablePods"}},
			{gated, []string{"gated"}},
			{denied, []string{"errorBackoffQ", "activeQ", "inFlight"}},
		} {
			for _, n := range tc.pods {
				if !slices.Contains(tc.queue, got[n]) {
					t.Errorf("%s placed in %q, want one of %v", n, got[n], tc.queue)
				}
			}
		}
	})

	t.Run("RBAC", func(t *testing.T) {
		for _, tc := range []struct {
			name       string
			metrics    bool
			statusWant string // "" means success
		}{
			{"read-only role", true, ""},
			{"without /metrics", false, "/metrics"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				kc := c.serviceAccountKubeconfig(t, tc.metrics)
				out, err := plugin(t, kc, "explain", "-A", "-o", "json")
				if err != nil {
					t.Errorf("explain as the ServiceAccount: %v\n%s", err, out)
				}
				if tc.metrics {
					var e explainJSON
					if err := json.Unmarshal([]byte(out), &e); err != nil {
						t.Errorf("explain -A -o json: %v\n%s", err, out)
					}
					readsTheScheduler(t, e)
				}
				out, err = plugin(t, kc, "status", "-o", "json")
				switch {
				case tc.statusWant == "" && err != nil:
					t.Errorf("status as the ServiceAccount: %v\n%s", err, out)
				case tc.statusWant != "" && err == nil:
					t.Errorf("status succeeded without the /metrics rule:\n%s", out)
				case tc.statusWant != "" && !strings.Contains(out, tc.statusWant):
					t.Errorf("status error does not name %q:\n%s", tc.statusWant, out)
				}
			})
		}
	})

	t.Run("Prometheus", func(t *testing.T) { c.testPrometheus(t, parked, gated, denied) })

	// Last: it moves the scheduler's static pod, and leaves kubeadm's shape.
	t.Run("platforms", func(t *testing.T) { c.testPlatforms(t, parked, gated) })
}

// serviceAccountKubeconfig returns the kubeconfig of serviceAccountToken's
// ServiceAccount.
func (c *cluster) serviceAccountKubeconfig(t *testing.T, metrics bool) string {
	t.Helper()
	name, token := c.serviceAccountToken(t, metrics)
	return c.tokenKubeconfig(t, name, token)
}

// serviceAccountToken makes a ServiceAccount bound to the read-only role
// the README prints (with or without its /metrics rule) and returns its
// name and a token for it.
func (c *cluster) serviceAccountToken(t *testing.T, metrics bool) (name, token string) {
	t.Helper()
	name = "schedq-reader"
	if !metrics {
		name = "schedq-reader-nometrics"
	}
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods", "events"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list"}},
		// A WebSocket port-forward (client-go's default since 1.30) is a GET:
		// v1.36 authorizes it as get, and as create too under
		// AuthorizePodWebsocketUpgradeCreatePermission.
		{APIGroups: []string{""}, Resources: []string{"pods/portforward"}, Verbs: []string{"get", "create"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get"}},
	}
	if metrics {
		rules = append(rules, rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics", "/configz", "/flagz"}, Verbs: []string{"get"}})
	}
	return name, c.roleToken(t, name, rules)
}

// roleKubeconfig is the kubeconfig of a ServiceAccount name bound to a
// ClusterRole of rules.
func (c *cluster) roleKubeconfig(t *testing.T, name string, rules []rbacv1.PolicyRule) string {
	t.Helper()
	return c.tokenKubeconfig(t, name, c.roleToken(t, name, rules))
}

// roleToken makes a ServiceAccount name bound to a ClusterRole of rules
// and returns a token for it.
func (c *cluster) roleToken(t *testing.T, name string, rules []rbacv1.PolicyRule) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	must(c.client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}))
	must(c.client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}))
	must(c.client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}},
	}, metav1.CreateOptions{}))
	tok, err := c.client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authnv1.TokenRequest{
		Spec: authnv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tok.Status.Token
}

// tokenKubeconfig writes a kubeconfig for the cluster with token.
func (c *cluster) tokenKubeconfig(t *testing.T, name, token string) string {
	t.Helper()
	admin, err := clientcmd.LoadFromFile(c.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cl := admin.Clusters[admin.Contexts[admin.CurrentContext].Cluster]
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kind"] = cl
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: "kind", AuthInfo: name}
	cfg.CurrentContext = name
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func ptr[T any](v T) *T { return &v }
