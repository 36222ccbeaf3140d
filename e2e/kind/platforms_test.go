package kind_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// The static pod manifest kubeadm writes for kube-scheduler on the node.
const (
	manifestDir     = "/etc/kubernetes/manifests"
	kubeadmManifest = "kube-scheduler.yaml"
)

// platformShape is how a platform runs kube-scheduler as a static pod,
// applied to kind's own manifest.
type platformShape struct {
	platform  string
	file      string // the manifest's file name
	name      string // the static pod's name (the mirror pod's is name-<node>)
	namespace string
	labels    map[string]string
	// args are added to kube-scheduler's.
	args []string
	// nodeLabel is put on the node while the shape holds ("" none).
	nodeLabel string
	// lease is namespace/name of the Lease the scheduler elects its leader with.
	lease string
}

// The shapes the cluster is turned into, one after the other, from the
// platforms' own sources: OpenShift's (openshift/cluster-kube-scheduler-operator
// bindata: pod openshift-kube-scheduler in openshift-kube-scheduler, labels
// app=openshift-kube-scheduler and scheduler=true, leaderElection
// resourceNamespace openshift-kube-scheduler, set here with the same
// field's flag), Talos's (control_plane_static_pod.go: k8s-app=kube-scheduler
// beside component and tier), RKE2's (pkg/podtemplate: kubeadm's labels; its
// cloud provider labels nodes node.kubernetes.io/instance-type=rke2), and
// kubeadm's again.
var platformShapes = []platformShape{
	{
		platform: "OpenShift", file: "kube-scheduler-pod.yaml", name: "openshift-kube-scheduler", namespace: "openshift-kube-scheduler",
		labels: map[string]string{"app": "openshift-kube-scheduler", "scheduler": "true", "revision": "7"},
		args:   []string{"--leader-elect-resource-namespace=openshift-kube-scheduler"},
		lease:  "openshift-kube-scheduler/kube-scheduler",
	},
	{
		platform: "Talos", file: kubeadmManifest, name: "kube-scheduler", namespace: "kube-system",
		labels: map[string]string{"k8s-app": "kube-scheduler", "component": "kube-scheduler", "tier": "control-plane", "app.kubernetes.io/managed-by": "Talos"},
		lease:  "kube-system/kube-scheduler",
	},
	{
		platform: "RKE2", file: kubeadmManifest, name: "kube-scheduler", namespace: "kube-system",
		labels:    map[string]string{"component": "kube-scheduler", "tier": "control-plane"},
		nodeLabel: "node.kubernetes.io/instance-type=rke2",
		lease:     "kube-system/kube-scheduler",
	},
	{
		platform: "kubeadm", file: kubeadmManifest, name: "kube-scheduler", namespace: "kube-system",
		labels: map[string]string{"component": "kube-scheduler", "tier": "control-plane"},
		lease:  "kube-system/kube-scheduler",
	},
}

// testPlatforms turns the cluster into each platform's shape in turn and
// checks that status and explain -A, with no metrics flags, find the
// scheduler as that platform runs it, name it, and place the parked and
// gated pods where the scheduler has them. It ends in kubeadm's shape.
func (c *cluster) testPlatforms(t *testing.T, parked, gated []string) {
	node := c.name + "-control-plane"
	original := c.nodeFile(t, node, manifestDir+"/"+kubeadmManifest)
	var base corev1.Pod
	if err := yaml.Unmarshal(original, &base); err != nil {
		t.Fatalf("%s: %v", kubeadmManifest, err)
	}
	current := platformShape{file: kubeadmManifest, name: base.Name, namespace: base.Namespace}
	for _, shape := range platformShapes {
		ok := t.Run(shape.platform, func(t *testing.T) {
			start := time.Now()
			c.reshape(t, node, base, current, shape)
			current = shape
			st := c.awaitPlatform(t, shape, len(parked), len(gated))
			t.Logf("%s: the scheduler found and its queue settled %s after the reshape", shape.platform, time.Since(start).Round(time.Second))
			wantPod := shape.namespace + "/" + shape.name + "-" + node
			if st.Source.Pod != wantPod || st.Source.Lease != shape.lease || !strings.HasPrefix(st.Source.LeaseHolder, node+"_") {
				t.Errorf("source %+v, want pod %s, Lease %s held by %s", st.Source, wantPod, shape.lease, node)
			}
			c.checkLease(t, shape.lease, node)

			table, err := plugin(t, c.kubeconfig, "status")
			if want := "SOURCE     " + shape.platform + ": port-forward to " + wantPod + ":10259"; err != nil || !strings.Contains(table, want) {
				t.Errorf("status lacks %q (%v):\n%s", want, err, table)
			}
			e := explainAll(t, c.kubeconfig)
			if !strings.HasPrefix(e.Metrics, shape.platform+": port-forward to "+wantPod) {
				t.Errorf("explain's metrics %q, want %s's pod", e.Metrics, shape.platform)
			}
			right, total := placed(e, map[string][]string{"unschedulablePods": parked, "gated": gated})
			t.Logf("%s: %d/%d parked and gated pods placed right", shape.platform, right, total)
			if right != total {
				t.Errorf("%s: %d of %d parked and gated pods placed right", shape.platform, right, total)
			}
			if shape.platform == "OpenShift" {
				c.checkNamespaceRBAC(t, shape.namespace)
			}
		})
		if !ok {
			break
		}
	}
	if current.platform != "kubeadm" {
		c.reshape(t, node, base, current, platformShapes[len(platformShapes)-1])
	}
}

// placed counts the pods of want (queue → names) that explain put there.
func placed(e explainJSON, want map[string][]string) (right, total int) {
	got := map[string]string{}
	for _, it := range e.Items {
		if it.Namespace == ns {
			got[it.Name] = it.Queue
		}
	}
	for queue, names := range want {
		for _, n := range names {
			total++
			if got[n] == queue {
				right++
			}
		}
	}
	return right, total
}

// reshape replaces the scheduler's static pod of shape from with one of
// shape to: the old manifest goes first, and the new one is written once
// the old scheduler is gone, so that the new one finds its port free.
func (c *cluster) reshape(t *testing.T, node string, base corev1.Pod, from, to platformShape) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if to.namespace != "kube-system" {
		_, err := c.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: to.namespace}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	if out, err := run(ctx, time.Minute, "docker", "exec", node, "rm", "-f", manifestDir+"/"+from.file); err != nil {
		t.Fatalf("removing %s: %v\n%s", from.file, err, out)
	}
	mirror := from.name + "-" + node
	poll(ctx, t, "the old scheduler pod "+from.namespace+"/"+mirror+" to go", func() (bool, string) {
		_, err := c.client.CoreV1().Pods(from.namespace).Get(ctx, mirror, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	c.setNodeLabel(ctx, t, node, from.nodeLabel, false)
	c.setNodeLabel(ctx, t, node, to.nodeLabel, true)

	p := base.DeepCopy()
	p.Name, p.Namespace, p.Labels = to.name, to.namespace, to.labels
	p.Spec.Containers[0].Command = append(p.Spec.Containers[0].Command, to.args...)
	data, err := yaml.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	// Written beside the directory and moved in, so that the kubelet never
	// reads half a file.
	tmp := "/etc/kubernetes/" + to.file + ".new"
	cmd := exec.CommandContext(ctx, "docker", "exec", "-i", node, "sh", "-c", fmt.Sprintf("cat > %s && mv %s %s/%s", tmp, tmp, manifestDir, to.file))
	cmd.Stdin = bytes.NewReader(data)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("writing %s: %v\n%s", to.file, err, out)
	}
}

func (c *cluster) setNodeLabel(ctx context.Context, t *testing.T, node, label string, on bool) {
	t.Helper()
	if label == "" {
		return
	}
	k, v, _ := strings.Cut(label, "=")
	value := fmt.Sprintf("%q", v)
	if !on {
		value = "null"
	}
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%s}}}`, k, value)
	if _, err := c.client.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (c *cluster) nodeFile(t *testing.T, node, path string) []byte {
	t.Helper()
	out, err := exec.Command("docker", "exec", node, "cat", path).Output()
	if err != nil {
		t.Fatalf("reading %s on %s: %v", path, node, err)
	}
	return out
}

type platformStatusJSON struct {
	statusJSON
	Source struct {
		Platform    string `json:"platform"`
		Pod         string `json:"pod"`
		Lease       string `json:"lease"`
		LeaseHolder string `json:"leaseHolder"`
	} `json:"source"`
}

// awaitPlatform polls status -o json, with no metrics flags, until it reads
// the scheduler of shape's platform and that scheduler has tried the parked
// pods again.
func (c *cluster) awaitPlatform(t *testing.T, shape platformShape, parked, gated int) platformStatusJSON {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var st platformStatusJSON
	poll(ctx, t, "status to read "+shape.platform+"'s scheduler", func() (bool, string) {
		out, err := plugin(t, c.kubeconfig, "status", "-o", "json", "--interval", "500ms")
		if err != nil {
			return false, fmt.Sprintf("status: %v\n%s", err, out)
		}
		st = platformStatusJSON{}
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			return false, fmt.Sprintf("status -o json: %v\n%s", err, out)
		}
		p := st.Pending
		return st.Source.Platform == shape.platform && p.Unschedulable == int64(parked) && p.Gated == int64(gated),
			fmt.Sprintf("platform %q, pending %+v", st.Source.Platform, p)
	})
	return st
}

// checkLease checks that the scheduler holds the Lease of its platform.
func (c *cluster) checkLease(t *testing.T, lease, node string) {
	t.Helper()
	namespace, name, _ := strings.Cut(lease, "/")
	l, err := c.client.CoordinationV1().Leases(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Errorf("Lease %s: %v", lease, err)
		return
	}
	if h := l.Spec.HolderIdentity; h == nil || !strings.HasPrefix(*h, node+"_") {
		t.Errorf("Lease %s held by %v, want the scheduler on %s", lease, h, node)
	}
}

// checkNamespaceRBAC: an identity that may read everything but not reach
// pods in namespace gets a 403 whose remedy is a Role there; applied, it
// reads the scheduler.
func (c *cluster) checkNamespaceRBAC(t *testing.T, namespace string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name := "schedq-reader-no-" + namespace
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list"}},
		{NonResourceURLs: []string{"/metrics", "/configz", "/flagz"}, Verbs: []string{"get"}},
	}
	kc := c.roleKubeconfig(t, name, rules)
	out, err := plugin(t, kc, "status")
	if err == nil {
		t.Fatalf("status without access to %s succeeded:\n%s", namespace, out)
	}
	for _, want := range []string{"Finding the scheduler needs access to " + namespace, "kind: Role", "namespace: " + namespace, `resources: ["pods/portforward"]`} {
		if !strings.Contains(out, want) {
			t.Errorf("status's 403 lacks %q:\n%s", want, out)
		}
	}
	_, doc, _ := strings.Cut(out, "<<'EOF'\n")
	doc, _, _ = strings.Cut(doc, "EOF\n")
	c.applyRoles(ctx, t, doc)
	poll(ctx, t, "status with the remedy applied", func() (bool, string) {
		out, err := plugin(t, kc, "status", "-o", "json")
		return err == nil, out
	})
}

// applyRoles creates the Roles and RoleBindings of a remedy.
func (c *cluster) applyRoles(ctx context.Context, t *testing.T, doc string) {
	t.Helper()
	for _, part := range strings.Split(doc, "\n---\n") {
		var kind struct{ Kind string }
		if err := yaml.Unmarshal([]byte(part), &kind); err != nil {
			t.Fatal(err)
		}
		var err error
		switch kind.Kind {
		case "Role":
			var r rbacv1.Role
			if err = yaml.UnmarshalStrict([]byte(part), &r); err == nil {
				_, err = c.client.RbacV1().Roles(r.Namespace).Create(ctx, &r, metav1.CreateOptions{})
			}
		case "RoleBinding":
			var b rbacv1.RoleBinding
			if err = yaml.UnmarshalStrict([]byte(part), &b); err == nil {
				_, err = c.client.RbacV1().RoleBindings(b.Namespace).Create(ctx, &b, metav1.CreateOptions{})
			}
		default:
			err = fmt.Errorf("a %q in the remedy, want Roles and RoleBindings", kind.Kind)
		}
		if err != nil {
			t.Fatalf("%v\n%s", err, part)
		}
	}
}
