package gather

import (
	"context"
	"fmt"
	"reflect"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

// pagedPods serves n pods in pages as the API server does (limit, continue)
// and records each call's limit.
func pagedPods(n int) (*fake.Clientset, *[]int64) {
	client := fake.NewSimpleClientset()
	var limits []int64
	client.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		from, to, limit := page(a, n)
		limits = append(limits, limit)
		list := &corev1.PodList{}
		for i := from; i < to; i++ {
			list.Items = append(list.Items, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("p-%d", i),
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}})
		}
		list.Continue = next(to, n)
		return true, list, nil
	})
	return client, &limits
}

// page is the part of n objects a paged list call asks for, as the API
// server serves it (the continue token is where the page starts).
func page(a k8stesting.Action, n int) (from, to int, limit int64) {
	opts := a.(k8stesting.ListActionImpl).GetListOptions()
	from, _ = strconv.Atoi(opts.Continue)
	return from, min(n, from+int(opts.Limit)), opts.Limit
}

// next is the continue token of a page that ends at to, of n.
func next(to, n int) string {
	if to < n {
		return strconv.Itoa(to)
	}
	return ""
}

func TestListPods_pages(t *testing.T) {
	client, limits := pagedPods(1234)
	pods, err := listPods(context.Background(), client, metav1.NamespaceAll, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 1234 || pods[0].Name != "p-0" || pods[1233].Name != "p-1233" {
		t.Fatalf("got %d pods, want p-0 … p-1233", len(pods))
	}
	if want := []int64{500, 500, 500}; !reflect.DeepEqual(*limits, want) {
		t.Errorf("limits %v, want %v (kubectl's chunks)", *limits, want)
	}
	if pods[0].ManagedFields != nil {
		t.Errorf("managed fields kept: %v", pods[0].ManagedFields)
	}
}

// The pages share the command's bound: a list that outlives it stops.
func TestListPods_boundedAcrossPages(t *testing.T) {
	client, _ := pagedPods(5000)
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		if calls++; calls == 3 {
			cancel()
		}
		return false, nil, nil
	})
	if _, err := listPods(ctx, client, metav1.NamespaceAll, metav1.ListOptions{}); err == nil {
		t.Fatal("no error from a list whose context ended")
	}
	if calls > 4 {
		t.Errorf("%d pages listed after the context ended", calls-3)
	}
}

// slimPod and slimEvent keep everything explain.Infer reads, and sharing
// what the objects hold alike changes nothing it reads: its answer on the
// trimmed, shared objects is its answer on the whole ones.
func TestSlimObjects_sameExplanations(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	prio := int32(1000)
	full := func(name string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name), ResourceVersion: "7",
				CreationTimestamp: metav1.NewTime(now.Add(-time.Minute)),
				Labels:            map[string]string{"app": "web"}, Annotations: map[string]string{"a": "b"},
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
			Spec: corev1.PodSpec{
				Priority: &prio,
				Containers: []corev1.Container{{Name: "c", Image: "img", Command: []string{"sleep"},
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("6")}}}},
				InitContainers: []corev1.Container{{Name: "i", Image: "img",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}}},
				Overhead:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
				Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}},
			},
		}
	}
	fail := "0/4 nodes are available: 4 Insufficient cpu. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod."
	affinity := "0/4 nodes are available: 4 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
	var pods []*corev1.Pod
	var events []corev1.Event
	add := func(p *corev1.Pod, msg string) {
		if msg != "" {
			at := now.Add(-20 * time.Second)
			p.Status.Conditions = []corev1.PodCondition{
				{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionFalse},
				{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: msg, LastTransitionTime: metav1.NewTime(at)},
			}
			events = append(events, corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name + ".1", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "s"}}},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID, APIVersion: "v1"},
				Reason:         explain.FailedSchedulingReason, Message: msg, EventTime: metav1.NewMicroTime(at), Count: 2,
				Series: &corev1.EventSeries{Count: 3, LastObservedTime: metav1.NewMicroTime(at.Add(5 * time.Second))},
				Source: corev1.EventSource{Component: "default-scheduler"}, ReportingController: "default-scheduler",
			})
		}
		pods = append(pods, p)
	}
	add(full("big"), fail)
	sel := full("selector")
	sel.Spec.NodeSelector = map[string]string{"pool": "gpu"}
	add(sel, affinity)
	aff := full("affinity")
	aff.Spec.Affinity = &corev1.Affinity{
		NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"gpu"}}}}}}},
		PodAntiAffinity: &corev1.PodAntiAffinity{},
	}
	add(aff, affinity)
	gated := full("gated")
	gated.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/hold"}}
	add(gated, "")
	other := full("other")
	other.Spec.SchedulerName = "my-scheduler"
	add(other, "")
	bound := full("bound")
	bound.Spec.NodeName = "node-0"
	add(bound, "")
	deleting := full("deleting")
	deleting.DeletionTimestamp = &metav1.Time{Time: now}
	add(deleting, fail)
	done := full("done")
	done.Status.Phase = corev1.PodSucceeded
	add(done, "")
	add(full("new"), "")
	member := full("member")
	group := "g"
	member.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &group}
	add(member, fail)

	// A node added after the failures, that fits the selector's pod.
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-0", Labels: map[string]string{"pool": "gpu"}, CreationTimestamp: metav1.NewTime(now.Add(-10 * time.Second))},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Images: []corev1.ContainerImage{{Names: []string{"img"}}}},
	}

	// The scheduler queues pods by group (v1.37, GenericWorkload): the
	// member is explained from its group, which the trimmed pod must name.
	on := true
	in := explain.Input{Now: now, Pods: pods, Events: events, Nodes: []*corev1.Node{node}, Config: explain.DefaultConfig(),
		Version: queue.V1_37, Metrics: &explain.QueueMetrics{Pending: map[string]float64{}, GenericWorkload: &on}}
	slim := in
	slim.Pods, slim.Events = nil, nil
	sh := newSharer()
	for _, p := range pods {
		slim.Pods = append(slim.Pods, sh.pod(slimPod(p.DeepCopy())))
	}
	for i := range events {
		slim.Events = append(slim.Events, sh.event(slimEvent(&events[i])))
	}
	want, got := explain.Infer(in), explain.Infer(slim)
	if !reflect.DeepEqual(got, want) {
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Errorf("%s: trimmed\n%+v\nwhole\n%+v", want[i].Name, got[i], want[i])
			}
		}
	}
}

// Pods and events alike point at one copy of what they hold alike; a
// difference anywhere in it keeps a copy of its own; sharing changes no
// value.
func TestSharer(t *testing.T) {
	secs := func(v int64) *int64 { return &v }
	base := func() *corev1.Pod {
		prio := int32(10)
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p"},
			Spec: corev1.PodSpec{
				SchedulerName: "default-scheduler", Priority: &prio, NodeSelector: map[string]string{"pool": "a", "zone": "z"},
				Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}}}},
				Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists,
					Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs(300)}},
			},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
				Reason: "Unschedulable", Message: "0/1 nodes are available"}}},
		}
	}
	for _, tc := range []struct {
		name                                               string
		change                                             func(*corev1.Pod)
		containers, tolerations, selector, priority, alike bool
	}{
		{"alike", func(*corev1.Pod) {}, true, true, true, true, true},
		{"other cpu", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
		}, false, true, true, true, false},
		{"other container name", func(p *corev1.Pod) { p.Spec.Containers[0].Name = "d" }, false, true, true, true, false},
		{"a second container", func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "e"})
		}, false, true, true, true, false},
		{"other toleration seconds", func(p *corev1.Pod) { p.Spec.Tolerations[0].TolerationSeconds = secs(30) }, true, false, true, true, false},
		{"no toleration seconds", func(p *corev1.Pod) { p.Spec.Tolerations[0].TolerationSeconds = nil }, true, false, true, true, false},
		{"other toleration effect", func(p *corev1.Pod) { p.Spec.Tolerations[0].Effect = corev1.TaintEffectNoSchedule }, true, false, true, true, false},
		{"other selector value", func(p *corev1.Pod) { p.Spec.NodeSelector["zone"] = "y" }, true, true, false, true, false},
		{"selector key and value swapped", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"poola": "", "zone": "z"} }, true, true, false, true, false},
		{"other priority", func(p *corev1.Pod) { *p.Spec.Priority = 11 }, true, true, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sh := newSharer()
			first := sh.pod(slimPod(base()))
			second := base()
			tc.change(second)
			want := slimPod(second.DeepCopy())
			got := sh.pod(slimPod(second))
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("sharing changed the pod:\n%+v\nwant\n%+v", got, want)
			}
			for _, c := range []struct {
				what       string
				same, want bool
			}{
				{"containers", &got.Spec.Containers[0] == &first.Spec.Containers[0], tc.containers},
				{"tolerations", &got.Spec.Tolerations[0] == &first.Spec.Tolerations[0], tc.tolerations},
				{"node selector", reflect.ValueOf(got.Spec.NodeSelector).UnsafePointer() == reflect.ValueOf(first.Spec.NodeSelector).UnsafePointer(), tc.selector},
				{"priority", got.Spec.Priority == first.Spec.Priority, tc.priority},
			} {
				if c.same != c.want {
					t.Errorf("%s shared: %v, want %v", c.what, c.same, c.want)
				}
			}
			if tc.alike != reflect.DeepEqual(got.Spec, first.Spec) {
				t.Errorf("specs alike: %v, want %v", !tc.alike, tc.alike)
			}
		})
	}
}

// Events come in pages of eventChunkSize, pods in kubectl's.
func TestListEvents_pages(t *testing.T) {
	client := fake.NewSimpleClientset()
	var limits []int64
	const n = 12345
	client.PrependReactor("list", "events", func(a k8stesting.Action) (bool, runtime.Object, error) {
		from, to, limit := page(a, n)
		limits = append(limits, limit)
		list := &corev1.EventList{}
		for i := from; i < to; i++ {
			list.Items = append(list.Items, corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("e-%d", i)},
				Reason: explain.FailedSchedulingReason, InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: fmt.Sprintf("p-%d", i)}})
		}
		list.Continue = next(to, n)
		return true, list, nil
	})
	events, err := listEvents(context.Background(), client, metav1.NamespaceAll, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != n || events[0].InvolvedObject.Name != "p-0" || events[n-1].InvolvedObject.Name != fmt.Sprintf("p-%d", n-1) {
		t.Fatalf("got %d events, want the %d listed in order", len(events), n)
	}
	if want := []int64{5000, 5000, 5000}; !reflect.DeepEqual(limits, want) {
		t.Errorf("limits %v, want %v", limits, want)
	}
}

// gcPercent reads the collector's target.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestLowerGCPercent: the default target holds until the lists have kept
// lowerGCFrom objects, then listGCPercent, and restore brings back the one
// before; GOGC set by the user wins.
func TestLowerGCPercent(t *testing.T) {
	t.Setenv("GOGC", "")
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)

	restore := LowerGCPercent()
	kept(lowerGCFrom - 1)
	if p := gcPercent(); p != 100 {
		t.Errorf("with %d objects kept the target is %d, want 100 still", lowerGCFrom-1, p)
	}
	kept(1)
	if p := gcPercent(); p != listGCPercent {
		t.Errorf("with %d objects kept the target is %d, want %d", lowerGCFrom, p, listGCPercent)
	}
	restore()
	if p := gcPercent(); p != 100 {
		t.Errorf("after restore the target is %d, want 100", p)
	}
	kept(lowerGCFrom)
	if p := gcPercent(); p != 100 {
		t.Errorf("with the lists done, keeping objects set the target to %d", p)
	}

	t.Setenv("GOGC", "300")
	restore = LowerGCPercent()
	kept(lowerGCFrom)
	if p := gcPercent(); p != 100 {
		t.Errorf("with GOGC set the target became %d", p)
	}
	restore()
}
