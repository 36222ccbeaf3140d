package kind_test

import (
	"context"
	"encoding/json"
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
	// The standby counts only once it runs; on a loaded machine the
	// second replica can start well after the first took the Lease.
	poll(ctx, t, "both replicas of "+secondScheduler+" to run", func() (bool, string) {
		list, err := c.client.CoreV1().Pods(sys).List(ctx, metav1.ListOptions{LabelSelector: "app=" + secondScheduler})
		if err != nil {
			return false, err.Error()
		}
		var states []string
		running := 0
		for _, q := range list.Items {
			if q.Status.Phase == corev1.PodRunning && q.DeletionTimestamp == nil {
				running++
			}
			states = append(states, q.Name+" "+string(q.Status.Phase))
		}
		return running == 2, strings.Join(states, ", ")
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

// haStatus is what the HA tests read of status -o json.
type haStatus struct {
	Source struct {
		Platform string   `json:"platform"`
		Pod      string   `json:"pod"`
		Lease    string   `json:"lease"`
		Standby  []string `json:"standby"`
		Profiles []string `json:"profiles"`
		Others   []struct {
			Pod      string   `json:"pod"`
			Profiles []string `json:"profiles"`
		} `json:"others"`
	} `json:"source"`
	Scheduler struct {
		Leader *bool `json:"leader"`
	} `json:"scheduler"`
	Pending struct {
		Active        int64 `json:"activeQ"`
		Backoff       int64 `json:"backoffQ"`
		Unschedulable int64 `json:"unschedulablePods"`
		Gated         int64 `json:"gated"`
	} `json:"pending"`
}

// statusCounting polls status -o json (with args) until it counts parked
// pods in unschedulablePods, gated ones gated and none elsewhere.
func (c *cluster) statusCounting(ctx context.Context, t *testing.T, parked, gated int, args ...string) haStatus {
	t.Helper()
	var st haStatus
	poll(ctx, t, fmt.Sprintf("status %v to count %d parked and %d gated pods", args, parked, gated), func() (bool, string) {
		out, err := pluginStdout(t, c.kubeconfig, append([]string{"status", "-o", "json"}, args...)...)
		if err != nil {
			return false, err.Error()
		}
		st = haStatus{}
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			return false, err.Error()
		}
		p := st.Pending
		return p.Unschedulable == int64(parked) && p.Gated == int64(gated) && p.Active+p.Backoff == 0, fmt.Sprintf("%+v", p)
	})
	return st
}

// placement is where explain put each seeded pod: its queue, or the state
// of a pod it placed in no queue.
type placement map[string]string

// explainPlacement runs explain -A (with args) as a table and as -o json
// and returns where each says each pod of ns is; they must agree.
func explainPlacement(t *testing.T, kubeconfig string, args ...string) placement {
	t.Helper()
	p, _ := explainPlacementFrom(t, kubeconfig, args...)
	return p
}

// explainPlacementFrom is explainPlacement, and says where explain read the
// scheduler's metrics (-o json's metrics).
func explainPlacementFrom(t *testing.T, kubeconfig string, args ...string) (placement, string) {
	t.Helper()
	out, err := pluginStdout(t, kubeconfig, append([]string{"explain", "-A", "-o", "json"}, args...)...)
	if err != nil {
		t.Fatalf("explain -A -o json %v: %v\n%s", args, err, out)
	}
	var list struct {
		Items []struct {
			Namespace, Name, Queue, State, Summary string
		} `json:"items"`
		Metrics string `json:"metrics"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("explain -A -o json %v: %v\n%s", args, err, out)
	}
	fromJSON := placement{}
	for _, it := range list.Items {
		if it.Namespace != ns {
			continue
		}
		fromJSON[it.Name] = it.Queue
		if it.Queue == "" {
			fromJSON[it.Name] = it.State
		}
	}
	table, err := pluginStdout(t, kubeconfig, append([]string{"explain", "-A"}, args...)...)
	if err != nil {
		t.Fatalf("explain -A %v: %v\n%s", args, err, table)
	}
	// The table says "otherscheduler" in QUEUE where JSON has no queue and
	// state OtherScheduler.
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != ns {
			continue
		}
		want := fromJSON[f[1]]
		if want == "OtherScheduler" {
			want = "otherscheduler"
		}
		if f[2] != want {
			t.Errorf("explain %v: %s in %q in the table, %q in -o json", args, f[1], f[2], fromJSON[f[1]])
		}
	}
	return fromJSON, list.Metrics
}

// checkPlacement says which pods are not where want puts them; a pod
// missing from want must be in no queue (OtherScheduler).
func checkPlacement(t *testing.T, what string, got placement, want map[string]string) {
	t.Helper()
	for name, q := range got {
		w, ok := want[name]
		if !ok {
			w = "OtherScheduler"
		}
		if q != w {
			t.Errorf("%s: %s placed in %q, want %q", what, name, q, w)
		}
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("%s: %s not explained", what, name)
		}
	}
}

// pollFast calls f every 200ms until it holds or d passes, and returns when
// it first held.
func pollFast(t *testing.T, d time.Duration, what string, f func() (bool, string)) time.Time {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, last := f()
		if ok {
			return time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s: %s", d, what, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestKindHA runs status and explain on a kind cluster with three
// control-plane nodes behind kind's load balancer: three kube-schedulers
// electing a leader through Lease kube-system/kube-scheduler, and beside
// them a second kube-scheduler (two replicas, Lease
// kube-system/second-scheduler). Pods of each, and pods naming a scheduler
// that does not exist. No flag names where the metrics are.
func TestKindHA(t *testing.T) {
	c := newClusterOf(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	start := time.Now()
	c.untaint(ctx, t)
	c.installSecondScheduler(ctx, t)
	pods := c.seedHA(ctx, t)
	t.Logf("second scheduler and pods ready in %s", time.Since(start).Round(time.Second))

	ownWant := map[string]string{}
	for _, n := range pods.parked {
		ownWant[n] = "unschedulablePods"
	}
	for _, n := range pods.gated {
		ownWant[n] = "gated"
	}
	secondWant := map[string]string{}
	for _, n := range pods.secondParked {
		secondWant[n] = "unschedulablePods"
	}
	for _, n := range pods.secondGated {
		secondWant[n] = "gated"
	}

	t.Run("status reads the Lease holder and names the standby schedulers", func(t *testing.T) {
		st := c.statusCounting(ctx, t, len(pods.parked), len(pods.gated))
		holder := c.leaseHolder(ctx, t, "kube-scheduler")
		node, _, _ := strings.Cut(holder, "_")
		leader := "kube-system/kube-scheduler-" + node
		var standby []string
		for _, suffix := range []string{"control-plane", "control-plane2", "control-plane3"} {
			if p := "kube-system/kube-scheduler-" + c.name + "-" + suffix; p != leader {
				standby = append(standby, p)
			}
		}
		s := st.Source
		if s.Platform != "kubeadm" || s.Pod != leader || s.Lease != "kube-system/kube-scheduler" || strings.Join(s.Standby, ",") != strings.Join(standby, ",") ||
			strings.Join(s.Profiles, ",") != corev1.DefaultSchedulerName || st.Scheduler.Leader == nil || !*st.Scheduler.Leader {
			t.Errorf("status read %+v (leader %v), want the holder %s on kubeadm, standby %v, profiles [default-scheduler]", s, st.Scheduler.Leader, leader, standby)
		}
		table, err := pluginStdout(t, c.kubeconfig, "status")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"port-forward to " + leader + ":10259", "STANDBY    " + strings.Join(standby, ", ") + " (waiting for Lease kube-system/kube-scheduler",
			"PROFILES   default-scheduler (its /configz)"} {
			if !strings.Contains(table, want) {
				t.Errorf("status table lacks %q:\n%s", want, table)
			}
		}
	})

	t.Run("explain places the default scheduler's pods, and no other", func(t *testing.T) {
		got, from := explainPlacementFrom(t, c.kubeconfig)
		checkPlacement(t, "explain -A", got, ownWant)
		node, _, _ := strings.Cut(c.leaseHolder(ctx, t, "kube-scheduler"), "_")
		if want := "kubeadm: port-forward to kube-system/kube-scheduler-" + node + ":10259"; !strings.HasPrefix(from, want) {
			t.Errorf("explain read %q, want %q…", from, want)
		}
	})

	t.Run("a second scheduler's pods against its own queue", func(t *testing.T) {
		holder := c.leaseHolder(ctx, t, secondScheduler)
		leader, _, _ := strings.Cut(holder, "_")
		st := c.statusCounting(ctx, t, len(pods.secondParked), len(pods.secondGated), "--scheduler-name", secondScheduler)
		s := st.Source
		if s.Pod != "kube-system/"+leader || s.Lease != "kube-system/"+secondScheduler || len(s.Standby) != 1 ||
			strings.Join(s.Profiles, ",") != secondScheduler || len(s.Others) != 1 || strings.Join(s.Others[0].Profiles, ",") != corev1.DefaultSchedulerName {
			t.Errorf("status --scheduler-name read %+v, want the holder of Lease kube-system/%s (%s), one standby, the cluster's own among the others", s, secondScheduler, leader)
		}
		got, from := explainPlacementFrom(t, c.kubeconfig, "--scheduler-name", secondScheduler)
		checkPlacement(t, "explain -A --scheduler-name "+secondScheduler, got, secondWant)
		if want := "kubeadm, second scheduler: port-forward to kube-system/" + leader + ":10259"; !strings.HasPrefix(from, want) {
			t.Errorf("explain --scheduler-name read %q, want %q…", from, want)
		}
		readsTheScheduler(t, *explainOf(t, c.kubeconfig, "--scheduler-name", secondScheduler))
	})

	t.Run("pods of a scheduler that no kube-scheduler serves are in no queue", func(t *testing.T) {
		got := explainPlacement(t, c.kubeconfig, "--scheduler-name", noSuchScheduler)
		checkPlacement(t, "explain -A --scheduler-name "+noSuchScheduler, got, nil)
		out, err := pluginStdout(t, c.kubeconfig, "status", "--scheduler-name", noSuchScheduler)
		if err == nil || !strings.Contains(err.Error(), `no kube-scheduler here serves scheduler name "`+noSuchScheduler+`"`) {
			t.Errorf("status --scheduler-name %s: %v\n%s", noSuchScheduler, err, out)
		}
	})

	t.Run("failover: the watches follow the new leader", func(t *testing.T) { c.testFailover(ctx, t, pods) })
}

// testFailover stops the leading kube-scheduler as an operator does on a
// control-plane node (its static pod's manifest moved away: the kubelet
// stops it, and it gives up the Lease) while status --watch and explain
// --watch run, and measures when each shows the new leader's queue.
func (c *cluster) testFailover(ctx context.Context, t *testing.T, pods haPods) {
	status := startWatch(t, c.kubeconfig, "status --watch", "status", "--watch", "--interval", "1s")
	explain := startWatch(t, c.kubeconfig, "explain --watch", "explain", "-A", "--watch", "--interval", "1s")
	frames := func() int { return strings.Count(status.out.String(), "Every 1s: kubectl schedq status") }
	poll(ctx, t, "the first frames", func() (bool, string) {
		return frames() >= 2 && strings.Contains(explain.out.String(), pods.parked[0]), status.errOut.String() + explain.errOut.String()
	})
	old, _, _ := strings.Cut(c.leaseHolder(ctx, t, "kube-scheduler"), "_")
	oldPod := "kube-system/kube-scheduler-" + old

	killed := time.Now()
	if out, err := run(ctx, time.Minute, "docker", "exec", old, "mv", "/etc/kubernetes/manifests/kube-scheduler.yaml", "/etc/kubernetes/kube-scheduler.yaml.stopped"); err != nil {
		t.Fatalf("stopping the leader on %s: %v\n%s", old, err, out)
	}
	var newLeader string
	leaseMoved := pollFast(t, time.Minute, "another kube-scheduler to take the Lease", func() (bool, string) {
		h, _, _ := strings.Cut(c.leaseHolder(ctx, t, "kube-scheduler"), "_")
		newLeader = h
		return h != "" && h != old, "holder " + h
	})
	newPod := "kube-system/kube-scheduler-" + newLeader
	// The new leader's queue: the parked pods tried again and parked, the
	// gated ones gated.
	queue := fmt.Sprintf("unschedulablePods %d  gated %d", len(pods.parked), len(pods.gated))
	statusShown := pollFast(t, time.Minute, "status --watch to show the new leader's queue", func() (bool, string) {
		f := lastFrame(status.out.String())
		return strings.Contains(f, "port-forward to "+newPod+":10259") && strings.Contains(f, queue), f
	})
	explainShown := pollFast(t, time.Minute, "explain --watch to say it reads the new leader", func() (bool, string) {
		n, _ := explain.notices()
		return len(n) > 0 && strings.Contains(n[len(n)-1], "new leader "+newPod), explain.errOut.String()
	})
	t.Logf("leader %s stopped; Lease held by %s after %s; status --watch showed its queue after %s, explain --watch after %s",
		old, newLeader, leaseMoved.Sub(killed).Round(100*time.Millisecond), statusShown.Sub(killed).Round(100*time.Millisecond), explainShown.Sub(killed).Round(100*time.Millisecond))
	for what, at := range map[string]time.Time{"status --watch": statusShown, "explain --watch": explainShown} {
		if d := at.Sub(killed); d > 15*time.Second {
			t.Errorf("%s showed the new leader's queue %s after the leader was stopped, want within 15s", what, d.Round(100*time.Millisecond))
		}
	}
	for _, w := range []*watchProc{status, explain} {
		n, _ := w.notices()
		if len(n) == 0 || !strings.Contains(n[len(n)-1], "new leader "+newPod+" (Lease holder "+newLeader+"_") || !strings.Contains(n[len(n)-1], "was "+oldPod) ||
			strings.Contains(n[len(n)-1], "restarted") {
			t.Errorf("%s: notices %q, want the last to name the new leader %s and the old %s", w.name, n, newPod, oldPod)
		}
	}

	// Killed outright, the leader cannot give the Lease up: the others
	// take it when it expires (leaseDuration, 15 s after its last
	// renewal), and the kubelet starts the killed one again meanwhile, as
	// a standby. status shows the Lease holder's queue once it moves.
	holder := c.leaseHolder(ctx, t, "kube-scheduler")
	notices := func(w *watchProc) int { n, _ := w.notices(); return len(n) }
	before := notices(explain)
	killed = time.Now()
	if out, err := run(ctx, time.Minute, "docker", "exec", newLeader, "sh", "-c", `
for c in $(ctr -n k8s.io containers ls -q 'labels."io.kubernetes.container.name"==kube-scheduler'); do
  ctr -n k8s.io tasks ls | grep -q "^$c .*RUNNING" && ctr -n k8s.io tasks kill -s SIGKILL "$c"
done`); err != nil {
		t.Fatalf("killing the leader on %s: %v\n%s", newLeader, err, out)
	}
	var next string
	leaseMoved = pollFast(t, time.Minute, "the Lease to move after the kill", func() (bool, string) {
		next = c.leaseHolder(ctx, t, "kube-scheduler")
		return next != "" && next != holder, "holder " + next
	})
	nextNode, _, _ := strings.Cut(next, "_")
	nextPod := "kube-system/kube-scheduler-" + nextNode
	statusShown = pollFast(t, time.Minute, "status --watch to show the Lease holder's queue after the kill", func() (bool, string) {
		f := lastFrame(status.out.String())
		return strings.Contains(f, "port-forward to "+nextPod+":10259") && strings.Contains(f, ", leader)") && strings.Contains(f, queue), f
	})
	pollFast(t, time.Minute, "explain --watch to say it lost the killed leader", func() (bool, string) {
		return notices(explain) > before, explain.errOut.String()
	})
	t.Logf("leader %s killed; Lease held by %s after %s; status --watch showed its queue %s after that",
		newLeader, nextNode, leaseMoved.Sub(killed).Round(100*time.Millisecond), statusShown.Sub(leaseMoved).Round(100*time.Millisecond))
	if d := statusShown.Sub(leaseMoved); d > 15*time.Second {
		t.Errorf("status --watch showed the Lease holder's queue %s after the Lease moved, want within 15s", d.Round(100*time.Millisecond))
	}

	// explain places the pods in the leader's queue.
	got := explainPlacement(t, c.kubeconfig)
	want := map[string]string{}
	for _, n := range pods.parked {
		want[n] = "unschedulablePods"
	}
	for _, n := range pods.gated {
		want[n] = "gated"
	}
	checkPlacement(t, "explain -A after the failover", got, want)
	stopWatches(t, status, explain)
}
