package kind_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The second kube-scheduler: its own scheduler name, Lease and Deployment in
// kube-system, as Kubernetes' "Configure Multiple Schedulers" task sets one
// up (and scheduler-plugins' chart labels its own: component=scheduler).
const (
	secondScheduler = "second-scheduler"
	// noSuchScheduler is a scheduler name no scheduler serves: its pods wait
	// for a scheduler that is not there (or is not a kube-scheduler, as
	// Volcano's and YuniKorn's are not).
	noSuchScheduler = "no-such-scheduler"
)

// haPods are the pods TestKindHA seeds, by the scheduler that handles them.
type haPods struct {
	parked, gated             []string // default-scheduler's
	secondParked, secondGated []string // second-scheduler's
	secondBound               string   // second-scheduler binds it
	noSuch                    []string // no-such-scheduler's
}

// schedulerOf is the scheduler name each seeded pod asks for.
func (p haPods) schedulerOf() map[string]string {
	m := map[string]string{}
	for _, n := range append(append([]string{}, p.parked...), p.gated...) {
		m[n] = corev1.DefaultSchedulerName
	}
	for _, n := range append(append([]string{}, p.secondParked...), p.secondGated...) {
		m[n] = secondScheduler
	}
	for _, n := range p.noSuch {
		m[n] = noSuchScheduler
	}
	return m
}

// untaint lets pods onto the control-plane nodes, as kind does itself for a
// cluster without workers only when it has one control-plane node.
func (c *cluster) untaint(ctx context.Context, t *testing.T) {
	t.Helper()
	nodes, err := c.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		var keep []corev1.Taint
		for _, taint := range n.Spec.Taints {
			if taint.Key != "node-role.kubernetes.io/control-plane" {
				keep = append(keep, taint)
			}
		}
		if len(keep) == len(n.Spec.Taints) {
			continue
		}
		n.Spec.Taints = keep
		if _, err := c.client.CoreV1().Nodes().Update(ctx, &n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// installSecondScheduler runs a second kube-scheduler, two replicas electing
// a leader through Lease kube-system/second-scheduler, from the node image's
// own kube-scheduler image, with the RBAC of Kubernetes' "Configure Multiple
// Schedulers" task (and the Lease its configuration names). It waits until
// one replica holds the Lease.
func (c *cluster) installSecondScheduler(ctx context.Context, t *testing.T) {
	t.Helper()
	version, _, _ := kubeVersion(t)
	sys := metav1.NamespaceSystem
	must := func(_ any, err error) {
		t.Helper()
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	sa := []rbacv1.Subject{{Kind: "ServiceAccount", Name: secondScheduler, Namespace: sys}}
	must(c.client.CoreV1().ServiceAccounts(sys).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: secondScheduler}}, metav1.CreateOptions{}))
	for _, role := range []string{"system:kube-scheduler", "system:volume-scheduler"} {
		must(c.client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: secondScheduler + "-as-" + strings.TrimPrefix(role, "system:")},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   sa,
		}, metav1.CreateOptions{}))
	}
	must(c.client.RbacV1().RoleBindings(sys).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: secondScheduler + "-extension-apiserver-authentication-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "extension-apiserver-authentication-reader"},
		Subjects:   sa,
	}, metav1.CreateOptions{}))
	// system:kube-scheduler may update only the Lease named kube-scheduler.
	must(c.client.RbacV1().Roles(sys).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: secondScheduler + "-lease"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"},
			ResourceNames: []string{secondScheduler}, Verbs: []string{"get", "update"}}},
	}, metav1.CreateOptions{}))
	must(c.client.RbacV1().RoleBindings(sys).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: secondScheduler + "-lease"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: secondScheduler + "-lease"},
		Subjects:   sa,
	}, metav1.CreateOptions{}))
	must(c.client.CoreV1().ConfigMaps(sys).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: secondScheduler + "-config"},
		Data: map[string]string{"config.yaml": `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: ` + secondScheduler + `
leaderElection:
  leaderElect: true
  resourceName: ` + secondScheduler + `
  resourceNamespace: kube-system
`},
	}, metav1.CreateOptions{}))
	labels := map[string]string{"component": "scheduler", "tier": "control-plane", "app": secondScheduler}
	must(c.client.AppsV1().Deployments(sys).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: secondScheduler, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: secondScheduler,
					Containers: []corev1.Container{{
						Name:            "kube-scheduler",
						Image:           "registry.k8s.io/kube-scheduler:" + version,
						ImagePullPolicy: corev1.PullNever,
						Command:         []string{"/usr/local/bin/kube-scheduler", "--config=/etc/" + secondScheduler + "/config.yaml"},
						VolumeMounts:    []corev1.VolumeMount{{Name: "config", MountPath: "/etc/" + secondScheduler}},
					}},
					Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
						ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: secondScheduler + "-config"}}}}},
				},
			},
		},
	}, metav1.CreateOptions{}))
	poll(ctx, t, "a replica of "+secondScheduler+" to hold its Lease", func() (bool, string) {
		l, err := c.client.CoordinationV1().Leases(sys).Get(ctx, secondScheduler, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "", "no holder yet"
	})
}

// seedHA creates the pods of each scheduler and waits until the schedulers
// have tried those they can try.
func (c *cluster) seedHA(ctx context.Context, t *testing.T) haPods {
	t.Helper()
	if _, err := c.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var p haPods
	var pods []*corev1.Pod
	add := func(list *[]string, name, cpu, scheduler string, gated bool) {
		q := pod(name, cpu)
		q.Spec.SchedulerName = scheduler
		if gated {
			q.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/approval"}}
		}
		*list = append(*list, name)
		pods = append(pods, q)
	}
	for i := range 3 {
		add(&p.parked, fmt.Sprintf("parked-%d", i), "1000", "", false)
	}
	for i := range 2 {
		add(&p.gated, fmt.Sprintf("gated-%d", i), "10m", "", true)
		add(&p.secondParked, fmt.Sprintf("second-parked-%d", i), "1000", secondScheduler, false)
		add(&p.noSuch, fmt.Sprintf("no-such-%d", i), "10m", noSuchScheduler, false)
	}
	add(&p.secondGated, "second-gated-0", "10m", secondScheduler, true)
	var bound []string
	add(&bound, "second-bound-0", "10m", secondScheduler, false)
	p.secondBound = bound[0]
	// Admission refuses pods until the namespace's default service account exists.
	poll(ctx, t, "the first pod in a new namespace", func() (bool, string) {
		_, err := c.client.CoreV1().Pods(ns).Create(ctx, pods[0], metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), fmt.Sprint(err)
	})
	for _, q := range pods[1:] {
		if _, err := c.client.CoreV1().Pods(ns).Create(ctx, q, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{p.secondBound: "bound"}
	for _, n := range append(append([]string{}, p.parked...), p.secondParked...) {
		want[n] = corev1.PodReasonUnschedulable
	}
	for _, n := range append(append([]string{}, p.gated...), p.secondGated...) {
		want[n] = corev1.PodReasonSchedulingGated
	}
	for _, n := range p.noSuch {
		want[n] = "" // no scheduler writes its condition
	}
	poll(ctx, t, "pods to reach their PodScheduled reasons", func() (bool, string) {
		list, err := c.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var missing []string
		for _, q := range list.Items {
			got := scheduledReason(&q)
			if q.Spec.NodeName != "" {
				got = "bound"
			}
			if w, ok := want[q.Name]; ok && got != w {
				missing = append(missing, fmt.Sprintf("%s: %q, want %q", q.Name, got, w))
			}
		}
		return len(missing) == 0 && len(list.Items) == len(want), strings.Join(missing, "; ")
	})
	return p
}

// leaseHolder is the holderIdentity of Lease kube-system/name.
func (c *cluster) leaseHolder(ctx context.Context, t *testing.T, name string) string {
	t.Helper()
	l, err := c.client.CoordinationV1().Leases(metav1.NamespaceSystem).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// TestKindHA runs status and explain on a kind cluster with three
// control-plane nodes behind kind's load balancer: three kube-schedulers
// electing a leader through Lease kube-system/kube-scheduler, and beside
// them a second kube-scheduler (two replicas, Lease
// kube-system/second-scheduler). Pods of each, and pods naming a scheduler
// that does not exist.
func TestKindHA(t *testing.T) {
	c := newClusterOf(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	start := time.Now()
	c.untaint(ctx, t)
	c.installSecondScheduler(ctx, t)
	pods := c.seedHA(ctx, t)
	t.Logf("second scheduler and %d pods ready in %s", len(pods.schedulerOf())+1, time.Since(start).Round(time.Second))
	holder := c.leaseHolder(ctx, t, "kube-scheduler")
	t.Logf("Lease kube-system/kube-scheduler: %s; kube-system/%s: %s", holder, secondScheduler, c.leaseHolder(ctx, t, secondScheduler))
}
