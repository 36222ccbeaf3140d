package metricscrape

import (
	"context"
	"errors"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// schedulerPod is a kubeadm static scheduler pod on node.
func schedulerPod(node string, phase corev1.PodPhase, labelled bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler-" + node, Namespace: SchedulerNamespace},
		Spec:       corev1.PodSpec{NodeName: node, HostNetwork: true},
		Status:     corev1.PodStatus{Phase: phase},
	}
	if labelled {
		p.Labels = map[string]string{"component": "kube-scheduler", "tier": "control-plane"}
	}
	return p
}

func lease(holder string) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: SchedulerLeaseName, Namespace: SchedulerNamespace},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder)},
	}
}

func TestDiscoverScheduler(t *testing.T) {
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "coredns-1", Namespace: SchedulerNamespace}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	tests := []struct {
		name        string
		objects     []runtime.Object
		wantPod     string
		wantHolder  string
		wantErr     func(error) bool
		wantErrText string
	}{
		{
			name:    "one pod, no lease (leader election off)",
			objects: []runtime.Object{schedulerPod("cp-1", corev1.PodRunning, true), other},
			wantPod: "kube-scheduler-cp-1",
		},
		{
			name:       "three pods, the lease holder wins",
			objects:    []runtime.Object{schedulerPod("cp-1", corev1.PodRunning, true), schedulerPod("cp-2", corev1.PodRunning, true), schedulerPod("cp-3", corev1.PodRunning, true), lease("cp-2_0f6c1f4e-1111-2222-3333-444455556666")},
			wantPod:    "kube-scheduler-cp-2",
			wantHolder: "cp-2_0f6c1f4e-1111-2222-3333-444455556666",
		},
		{
			name:    "holder hostname is the node's FQDN",
			objects: []runtime.Object{schedulerPod("cp-1", corev1.PodRunning, true), schedulerPod("cp-3", corev1.PodRunning, true), lease("cp-3.example.internal_abc")},
			wantPod: "kube-scheduler-cp-3",
		},
		{
			name:    "the old leader's pod is not running",
			objects: []runtime.Object{schedulerPod("cp-1", corev1.PodFailed, true), schedulerPod("cp-2", corev1.PodRunning, true), lease("cp-1_abc")},
			wantPod: "kube-scheduler-cp-2",
		},
		{
			name:    "no label: found by name",
			objects: []runtime.Object{schedulerPod("cp-1", corev1.PodRunning, false), other},
			wantPod: "kube-scheduler-cp-1",
		},
		{
			name: "OpenShift's pod",
			objects: []runtime.Object{&corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "openshift-kube-scheduler-m-0", Namespace: OpenShiftSchedulerNamespace, Labels: map[string]string{"app": "openshift-kube-scheduler"}},
				Spec:       corev1.PodSpec{NodeName: "m-0"}, Status: corev1.PodStatus{Phase: corev1.PodRunning},
			}},
			wantPod: "openshift-kube-scheduler-m-0",
		},
		{
			name:    "managed cluster: no scheduler pod",
			objects: []runtime.Object{other},
			wantErr: func(err error) bool { return errors.Is(err, ErrNoSchedulerPod) },
		},
		{
			name:        "none running",
			objects:     []runtime.Object{schedulerPod("cp-1", corev1.PodPending, true)},
			wantErrText: "no kube-scheduler pod in kube-system is running: kube-scheduler-cp-1 (Pending)",
		},
		{
			name:    "several and no lease",
			objects: []runtime.Object{schedulerPod("cp-1", corev1.PodRunning, true), schedulerPod("cp-2", corev1.PodRunning, true)},
			wantErr: func(err error) bool {
				var nl *NoLeaderError
				return errors.As(err, &nl) && len(nl.Pods) == 2 && nl.LeaseErr != nil
			},
		},
		{
			name:    "several and a holder that matches none",
			objects: []runtime.Object{schedulerPod("cp-1", corev1.PodRunning, true), schedulerPod("cp-2", corev1.PodRunning, true), lease("elsewhere_abc")},
			wantErr: func(err error) bool {
				var nl *NoLeaderError
				return errors.As(err, &nl) && nl.LeaseHolder == "elsewhere_abc" && strings.Contains(err.Error(), "matches none")
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset(tc.objects...)
			got, err := DiscoverScheduler(context.Background(), client)
			switch {
			case tc.wantErr != nil:
				if !tc.wantErr(err) {
					t.Fatalf("err = %v", err)
				}
				return
			case tc.wantErrText != "":
				if err == nil || err.Error() != tc.wantErrText {
					t.Fatalf("err = %v, want %q", err, tc.wantErrText)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if got.Pod.Name != tc.wantPod {
				t.Errorf("Pod = %s, want %s", got.Pod.Name, tc.wantPod)
			}
			if tc.wantHolder != "" && got.LeaseHolder != tc.wantHolder {
				t.Errorf("LeaseHolder = %q, want %q", got.LeaseHolder, tc.wantHolder)
			}
		})
	}
}

func TestDiscoverScheduler_forbidden(t *testing.T) {
	client := fake.NewClientset()
	client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New(`User "bob" cannot list resource "pods" in API group "" in the namespace "kube-system"`))
	})
	_, err := DiscoverScheduler(context.Background(), client)
	var pf *PortForwardForbiddenError
	if !errors.As(err, &pf) {
		t.Fatalf("err = %v, want *PortForwardForbiddenError", err)
	}
	if !strings.Contains(pf.Remedy(), `resources: ["pods/portforward"]`) {
		t.Errorf("Remedy() = %s", pf.Remedy())
	}
}

func TestDiscovery_portForwardScrape(t *testing.T) {
	var gotAuth string
	srv := httptest.NewTLSServer(schedulerHandler(smallExposition, &gotAuth))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())

	client := fake.NewClientset(schedulerPod("cp-1", corev1.PodRunning, true), schedulerPod("cp-2", corev1.PodRunning, true), lease("cp-2_x"))
	var forwardedTo string
	stopped := false
	forward := func(ctx context.Context, ns, pod string, remote int) (int, func(), error) {
		forwardedTo = ns + "/" + pod + ":" + strconv.Itoa(remote)
		return port, func() { stopped = true }, nil
	}
	s := NewDiscovery(NewCluster(&rest.Config{BearerToken: "tok"}, client, forward))
	snap, err := s.Scrape(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if forwardedTo != "kube-system/kube-scheduler-cp-2:10259" {
		t.Errorf("forwarded to %q, want the leader's 10259", forwardedTo)
	}
	if !stopped {
		t.Error("the port-forward was not closed")
	}
	if gotAuth != "Bearer tok" {
		t.Errorf("Authorization = %q, want the kubeconfig's token", gotAuth)
	}
	want := Origin{Kind: OriginPortForward, Platform: "kubeadm", Address: "kube-system/kube-scheduler-cp-2:10259", Pod: "kube-system/kube-scheduler-cp-2", Node: "cp-2",
		Lease: "kube-system/kube-scheduler", LeaseHolder: "cp-2_x", Candidates: 2, Standby: []string{"kube-system/kube-scheduler-cp-1"}}
	if !reflect.DeepEqual(snap.Origin, want) {
		t.Errorf("Origin = %+v, want %+v", snap.Origin, want)
	}
}

func TestDiscovery_portForwardforwardFails(t *testing.T) {
	client := fake.NewClientset(schedulerPod("cp-1", corev1.PodRunning, true))
	forward := func(ctx context.Context, ns, pod string, remote int) (int, func(), error) {
		return 0, nil, errors.New("error upgrading connection: no preferred addresses found")
	}
	s := NewDiscovery(NewCluster(&rest.Config{}, client, forward))
	_, err := s.Scrape(context.Background())
	var te *TransportError
	if !errors.As(err, &te) || te.Kind != Unreachable ||
		err.Error() != "cannot reach kube-scheduler kube-system/kube-scheduler-cp-1:10259 through a port-forward: error upgrading connection: no preferred addresses found" {
		t.Fatalf("err = %v", err)
	}
}

func TestDiscovery_portForwardforwardForbidden(t *testing.T) {
	client := fake.NewClientset(schedulerPod("cp-1", corev1.PodRunning, true))
	forward := func(ctx context.Context, ns, pod string, remote int) (int, func(), error) {
		return 0, nil, errors.New(`error upgrading connection: pods "kube-scheduler-cp-1" is forbidden: User "bob" cannot create resource "pods/portforward"`)
	}
	s := NewDiscovery(NewCluster(&rest.Config{}, client, forward))
	_, err := s.Scrape(context.Background())
	var pf *PortForwardForbiddenError
	if !errors.As(err, &pf) || !strings.HasPrefix(err.Error(), "port-forward to kube-system/kube-scheduler-cp-1:10259: ") {
		t.Fatalf("err = %v, want a PortForwardForbiddenError for the port-forward", err)
	}
}

// deploymentPod is a replica of a scheduler Deployment: on the pod network,
// its hostname (and so its Lease holder's) is its own name.
func deploymentPod(name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: SchedulerNamespace, Labels: map[string]string{"component": "scheduler"}},
		Spec:       corev1.PodSpec{NodeName: node},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

func TestSchedulerPods_Target(t *testing.T) {
	second := SchedulerPods{Namespace: SchedulerNamespace, Selector: "component=scheduler", LeaseNamespace: SchedulerNamespace, LeaseName: "second", Port: SchedulerSecurePort}
	noElection := second
	noElection.LeaseNamespace, noElection.LeaseName = "", ""
	secondLease := func(holder string) *coordinationv1.Lease {
		l := lease(holder)
		l.Name = "second"
		return l
	}
	tests := []struct {
		name        string
		pods        SchedulerPods
		objects     []runtime.Object
		wantPod     string
		wantStandby []string
		wantErr     string
	}{
		{
			name:        "kubeadm's three: the holder leads, the others stand by",
			pods:        KubeadmSchedulerPods,
			objects:     []runtime.Object{schedulerPod("cp-1", corev1.PodRunning, true), schedulerPod("cp-2", corev1.PodRunning, true), schedulerPod("cp-3", corev1.PodRunning, true), lease("cp-3_x")},
			wantPod:     "kube-scheduler-cp-3",
			wantStandby: []string{"kube-scheduler-cp-1", "kube-scheduler-cp-2"},
		},
		{
			// Both replicas run on node cp-1: the node cannot tell them apart.
			name:        "a Deployment's replicas: the holder is the pod's name",
			pods:        second,
			objects:     []runtime.Object{deploymentPod("second-7f9-abcde", "cp-1"), deploymentPod("second-7f9-fghij", "cp-1"), secondLease("second-7f9-fghij_x")},
			wantPod:     "second-7f9-fghij",
			wantStandby: []string{"second-7f9-abcde"},
		},
		{
			name:    "a replica on the holder's node is not the holder",
			pods:    second,
			objects: []runtime.Object{deploymentPod("second-7f9-abcde", "cp-1"), deploymentPod("second-7f9-fghij", "cp-2"), secondLease("cp-1_x")},
			wantErr: `2 kube-scheduler pods (second-7f9-abcde, second-7f9-fghij) and only the leader has a live queue, but its holder "cp-1_x" matches none of them`,
		},
		{
			name:    "one replica without leader election",
			pods:    noElection,
			objects: []runtime.Object{deploymentPod("second-7f9-abcde", "cp-1")},
			wantPod: "second-7f9-abcde",
		},
		{
			name:    "two replicas without leader election: two queues",
			pods:    noElection,
			objects: []runtime.Object{deploymentPod("second-7f9-abcde", "cp-1"), deploymentPod("second-7f9-fghij", "cp-2")},
			wantErr: "2 kube-scheduler pods (second-7f9-abcde, second-7f9-fghij) without leader election: each schedules from a queue of its own; read one with --metrics-url",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.pods.Target(context.Background(), NewCluster(nil, fake.NewClientset(tc.objects...), nil))
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var standby []string
			for _, p := range got.Standby {
				standby = append(standby, p.Name)
			}
			if got.Pod.Name != tc.wantPod || !reflect.DeepEqual(standby, tc.wantStandby) {
				t.Errorf("leader %s, standby %v; want %s, %v", got.Pod.Name, standby, tc.wantPod, tc.wantStandby)
			}
		})
	}
}
