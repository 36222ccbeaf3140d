package metricscrape_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
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
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	. "github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape/ekstest"
)

const exposition = "# TYPE scheduler_pending_pods gauge\nscheduler_pending_pods{queue=\"active\"} 0\nscheduler_pending_pods{queue=\"gated\"} 2\n"

// clusterShape is a cluster as a platform leaves it: its server version,
// whether EKS's metrics API is served, its nodes, pods and leases.
type clusterShape struct {
	version string
	eks     bool
	objects []runtime.Object
	// forbid makes listing pods in these namespaces a 403.
	forbid []string
}

// pod is a running scheduler pod on node.
func pod(namespace, name, node string, labels ...string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{}},
		Spec:       corev1.PodSpec{NodeName: node, HostNetwork: true},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, l := range labels {
		k, v, _ := strings.Cut(l, "=")
		p.Labels[k] = v
	}
	return p
}

func node(name string, labels ...string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for _, l := range labels {
		k, v, _ := strings.Cut(l, "=")
		n.Labels[k] = v
	}
	return n
}

func leaseHeld(namespace, holder string) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: SchedulerLeaseName, Namespace: namespace},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder)},
	}
}

// fakeCluster is the API server of shape: a fake clientset for the API,
// and one TLS server that plays both the scheduler behind a port-forward
// (/metrics) and the API server's EKS path (ekstest). It returns the
// discovery source and the port-forwards made.
func fakeCluster(t *testing.T, shape clusterShape) (*Discovery, *fake.Clientset, *[]string) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte(exposition))
	})
	mux.Handle("/apis/", ekstest.Handler(func(context.Context) ([]byte, error) { return []byte(exposition), nil }))
	srv := httptest.NewTLSServer(mux)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())

	client := fake.NewClientset(shape.objects...)
	disc := client.Discovery().(*fakediscovery.FakeDiscovery)
	disc.FakedServerVersion = &version.Info{GitVersion: shape.version}
	if disc.FakedServerVersion.GitVersion == "" {
		disc.FakedServerVersion.GitVersion = "v1.37.2"
	}
	if shape.eks {
		disc.Resources = []*metav1.APIResourceList{&ekstest.Resources}
	}
	for _, ns := range shape.forbid {
		ns := ns
		client.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
			if a.GetNamespace() != ns {
				return false, nil, nil
			}
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New(`User "bob" cannot list resource "pods" in the namespace "`+ns+`"`))
		})
	}
	var forwards []string
	forward := func(ctx context.Context, ns, pod string, remote int) (int, func(), error) {
		forwards = append(forwards, ns+"/"+pod+":"+strconv.Itoa(remote))
		return port, func() {}, nil
	}
	cfg := &rest.Config{Host: srv.URL, BearerToken: "tok", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	return NewDiscovery(NewCluster(cfg, client, forward)), client, &forwards
}

// TestDiscovery_platforms holds one row per platform: the shape the
// platform leaves a cluster in, and where discovery reads the metrics, or
// what it says when it cannot.
func TestDiscovery_platforms(t *testing.T) {
	kubeadmPod := func(node string) *corev1.Pod {
		return pod("kube-system", "kube-scheduler-"+node, node, "component=kube-scheduler", "tier=control-plane")
	}
	openshiftPod := func(node string) *corev1.Pod {
		return pod("openshift-kube-scheduler", "openshift-kube-scheduler-"+node, node, "app=openshift-kube-scheduler", "scheduler=true", "revision=7")
	}
	tests := []struct {
		name  string
		shape clusterShape
		// want is the origin read; wantErr the error's words otherwise.
		want    Origin
		wantErr []string
	}{
		{
			name:  "kubeadm",
			shape: clusterShape{objects: []runtime.Object{kubeadmPod("cp-1"), node("cp-1")}},
			want:  Origin{Kind: OriginPortForward, Platform: "kubeadm", Pod: "kube-system/kube-scheduler-cp-1", Node: "cp-1", Lease: "kube-system/kube-scheduler", Candidates: 1},
		},
		{
			name:  "kubeadm, unlabelled: by name",
			shape: clusterShape{objects: []runtime.Object{pod("kube-system", "kube-scheduler-cp-1", "cp-1")}},
			want:  Origin{Kind: OriginPortForward, Platform: "kubeadm", Pod: "kube-system/kube-scheduler-cp-1", Node: "cp-1", Lease: "kube-system/kube-scheduler", Candidates: 1},
		},
		{
			name: "RKE2: kubeadm's labels, its server version",
			shape: clusterShape{version: "v1.33.4+rke2r1", objects: []runtime.Object{kubeadmPod("s-1"), kubeadmPod("s-2"), kubeadmPod("s-3"),
				leaseHeld("kube-system", "s-3_0f6c1f4e")}},
			want: Origin{Kind: OriginPortForward, Platform: "RKE2", Pod: "kube-system/kube-scheduler-s-3", Node: "s-3", Lease: "kube-system/kube-scheduler", LeaseHolder: "s-3_0f6c1f4e", Candidates: 3,
				Standby: []string{"kube-system/kube-scheduler-s-1", "kube-system/kube-scheduler-s-2"}},
		},
		{
			name:  "RKE2 by its nodes' instance type",
			shape: clusterShape{objects: []runtime.Object{kubeadmPod("s-1"), node("s-1", "node.kubernetes.io/instance-type=rke2")}},
			want:  Origin{Kind: OriginPortForward, Platform: "RKE2", Pod: "kube-system/kube-scheduler-s-1", Node: "s-1", Lease: "kube-system/kube-scheduler", Candidates: 1},
		},
		{
			name: "Talos: k8s-app=kube-scheduler",
			shape: clusterShape{objects: []runtime.Object{
				pod("kube-system", "kube-scheduler-talos-cp-1", "talos-cp-1", "k8s-app=kube-scheduler", "component=kube-scheduler", "tier=control-plane", "app.kubernetes.io/managed-by=Talos")}},
			want: Origin{Kind: OriginPortForward, Platform: "Talos", Pod: "kube-system/kube-scheduler-talos-cp-1", Node: "talos-cp-1", Lease: "kube-system/kube-scheduler", Candidates: 1},
		},
		{
			name: "OpenShift: its namespace, labels and Lease",
			shape: clusterShape{version: "v1.33.5+4d28c28", objects: []runtime.Object{
				openshiftPod("master-0"), openshiftPod("master-1"), openshiftPod("master-2"),
				pod("openshift-kube-scheduler", "openshift-kube-scheduler-guard-master-0", "master-0", "app=guard"),
				pod("openshift-kube-scheduler", "installer-7-master-0", "master-0", "app=installer"),
				leaseHeld("openshift-kube-scheduler", "master-1_7d2f"),
				// A stale Lease in kube-system must not be the one read.
				leaseHeld("kube-system", "master-2_0000"),
			}},
			want: Origin{Kind: OriginPortForward, Platform: "OpenShift", Pod: "openshift-kube-scheduler/openshift-kube-scheduler-master-1", Node: "master-1",
				Lease: "openshift-kube-scheduler/kube-scheduler", LeaseHolder: "master-1_7d2f", Candidates: 3,
				Standby: []string{"openshift-kube-scheduler/openshift-kube-scheduler-master-0", "openshift-kube-scheduler/openshift-kube-scheduler-master-2"}},
		},
		{
			name:  "EKS: the metrics API, no pod",
			shape: clusterShape{version: "v1.33.4-eks-3cfe0ce", eks: true, objects: []runtime.Object{node("ip-10-0-1-2.ec2.internal")}},
			want:  Origin{Kind: OriginAPIServer, Platform: "EKS", Address: EKSSchedulerMetricsPath},
		},
		{
			name:    "EKS before 1.28",
			shape:   clusterShape{version: "v1.27.16-eks-a18cd3a"},
			wantErr: []string{"looks like EKS (server version v1.27.16-eks-a18cd3a", "from Kubernetes 1.28 on", "--prometheus-url"},
		},
		{
			name:    "k3s by its version",
			shape:   clusterShape{version: "v1.33.4+k3s1"},
			wantErr: []string{"looks like k3s (server version v1.33.4+k3s1)", "no scheduler pod: k3s runs kube-scheduler in the server process", "--metrics-url https://127.0.0.1:10259/metrics", "--kube-scheduler-arg=bind-address=0.0.0.0"},
		},
		{
			name:    "k3s by its nodes",
			shape:   clusterShape{objects: []runtime.Object{node("pi", "node.kubernetes.io/instance-type=k3s")}},
			wantErr: []string{"looks like k3s (node pi labelled node.kubernetes.io/instance-type=k3s)"},
		},
		{
			name:    "k0s",
			shape:   clusterShape{version: "v1.33.4+k0s"},
			wantErr: []string{"looks like k0s", "k0s runs kube-scheduler in the server process", "k0s.yaml"},
		},
		{
			name:    "MicroK8s",
			shape:   clusterShape{objects: []runtime.Object{node("ubuntu", "microk8s.io/cluster=true")}},
			wantErr: []string{"looks like MicroK8s", "--metrics-url"},
		},
		{
			name:    "GKE",
			shape:   clusterShape{version: "v1.33.4-gke.1245000"},
			wantErr: []string{"looks like GKE", "Google Cloud Managed Service for Prometheus", "--prometheus-url"},
		},
		{
			name:    "AKS",
			shape:   clusterShape{objects: []runtime.Object{node("aks-nodepool1-1", "kubernetes.azure.com/cluster=MC_rg_aks_westeurope")}},
			wantErr: []string{"looks like AKS", "Azure Monitor managed service for Prometheus", "--prometheus-url"},
		},
		{
			name:  "nothing to go by",
			shape: clusterShape{objects: []runtime.Object{node("n")}},
			wantErr: []string{"no kube-scheduler found (embedded: no schedq.kubectl-schedq.io/scheduler extension in the kubeconfig; EKS: API group metrics.eks.amazonaws.com/v1 not served; " +
				"Talos: no pod k8s-app=kube-scheduler in kube-system; kubeadm: no pod component=kube-scheduler or named kube-scheduler-* in kube-system; " +
				"OpenShift: no pod app=openshift-kube-scheduler in openshift-kube-scheduler); nothing says which platform this cluster is: use --metrics-url URL"},
		},
		{
			name:    "may not look in kube-system",
			shape:   clusterShape{forbid: []string{"kube-system", "openshift-kube-scheduler"}},
			wantErr: []string{`listing kube-scheduler pods (k8s-app=kube-scheduler) in kube-system: pods is forbidden`},
		},
		{
			name:  "may not look in openshift-kube-scheduler, but kube-system has it",
			shape: clusterShape{forbid: []string{"openshift-kube-scheduler"}, objects: []runtime.Object{kubeadmPod("cp-1")}},
			want:  Origin{Kind: OriginPortForward, Platform: "kubeadm", Pod: "kube-system/kube-scheduler-cp-1", Node: "cp-1", Lease: "kube-system/kube-scheduler", Candidates: 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, _, forwards := fakeCluster(t, tc.shape)
			snap, err := d.Scrape(context.Background())
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("read %+v, want an error", snap.Origin)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error lacks %q:\n%v", w, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want.Kind == OriginPortForward {
				want.Address = want.Pod + ":10259"
				if len(*forwards) != 1 || (*forwards)[0] != want.Address {
					t.Errorf("port-forwards %v, want one to %s", *forwards, want.Address)
				}
			} else if len(*forwards) != 0 {
				t.Errorf("port-forwards %v, want none", *forwards)
			}
			if !reflect.DeepEqual(snap.Origin, want) {
				t.Errorf("Origin = %+v\nwant     %+v", snap.Origin, want)
			}
			if snap.Pending[QueueGated] != 2 {
				t.Errorf("pending = %v, not the exposition's", snap.Pending)
			}
		})
	}
}

// TestDiscovery_calls counts the API calls: discovery asks each question
// once, and a later scrape asks only the found platform's.
func TestDiscovery_calls(t *testing.T) {
	d, client, _ := fakeCluster(t, clusterShape{objects: []runtime.Object{
		pod("kube-system", "kube-scheduler-cp-1", "cp-1", "component=kube-scheduler"), node("cp-1")}})
	count := func(scrape func()) []string {
		client.ClearActions()
		scrape()
		var calls []string
		for _, a := range client.Actions() {
			calls = append(calls, a.GetVerb()+" "+a.GetNamespace()+"/"+a.GetResource().Resource)
		}
		return calls
	}
	scrape := func() {
		if _, err := d.Scrape(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	// EKS's group version, the server version and a node (RKE2's marks),
	// Talos's pods, kubeadm's pods and Lease.
	first := count(scrape)
	want := "get /resource get /version list /nodes list kube-system/pods list kube-system/pods get kube-system/leases"
	if got := strings.Join(first, " "); got != want {
		t.Errorf("first scrape: %s\nwant %s", got, want)
	}
	if got := strings.Join(count(scrape), " "); got != "list kube-system/pods get kube-system/leases" {
		t.Errorf("second scrape: %s, want kubeadm's pods and Lease only", got)
	}
}

// TestDiscovery_schedulerGone: a watch whose scheduler pod went away looks
// again from the start, and says so in one message.
func TestDiscovery_schedulerGone(t *testing.T) {
	d, client, _ := fakeCluster(t, clusterShape{objects: []runtime.Object{pod("kube-system", "kube-scheduler-cp-1", "cp-1", "component=kube-scheduler")}})
	if _, err := d.Scrape(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := client.CoreV1().Pods("kube-system").Delete(context.Background(), "kube-scheduler-cp-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := d.Scrape(context.Background())
	var nf *NotFoundError
	if !errors.As(err, &nf) || !errors.Is(err, ErrNoSchedulerPod) {
		t.Fatalf("err = %v, want a NotFoundError", err)
	}
}

// TestEKS_forbidden: a 403 on EKS's path names its permission and the
// ClusterRole that grants it, not the scheduler's /metrics.
func TestEKS_forbidden(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"ksh.metrics.eks.amazonaws.com \"container\" is forbidden: User \"bob\" cannot get resource \"ksh/metrics\" in API group \"metrics.eks.amazonaws.com\" at the cluster scope","reason":"Forbidden","code":403}`))
	}))
	defer srv.Close()
	client := fake.NewClientset()
	client.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{&ekstest.Resources}
	d := NewDiscovery(NewCluster(&rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, client, nil))
	_, err := d.Scrape(context.Background())
	var fe *ForbiddenError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want a ForbiddenError", err)
	}
	if !strings.Contains(err.Error(), "may not get ksh/metrics in API group metrics.eks.amazonaws.com") {
		t.Errorf("err = %v", err)
	}
	if r := fe.Remedy(); !strings.Contains(r, `resources: ["ksh/metrics"]`) || strings.Contains(r, "nonResourceURLs") {
		t.Errorf("remedy:\n%s", r)
	}
}

// TestEKS_accept: the path is read with an Accept header EKS answers, and
// the scheduler's own would get 406.
func TestEKS_accept(t *testing.T) {
	var got []string
	h := ekstest.Handler(func(context.Context) ([]byte, error) { return []byte(exposition), nil })
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Accept"))
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	client := fake.NewClientset()
	client.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{&ekstest.Resources}
	d := NewDiscovery(NewCluster(&rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, client, nil))
	if _, err := d.Scrape(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !ekstest.Accepts(got[0]) {
		t.Errorf("Accept headers sent: %q", got)
	}
	if ekstest.Accepts("text/plain;version=0.0.4") {
		t.Error("the scheduler's own Accept header would be answered: the test shows nothing")
	}
}

// TestDiscovery_verbose: -v 1 prints each step of discovery, in order.
func TestDiscovery_verbose(t *testing.T) {
	var fs flag.FlagSet
	klog.InitFlags(&fs)
	var buf bytes.Buffer
	klog.LogToStderr(false)
	klog.SetOutput(&buf)
	_ = fs.Set("v", "1")
	t.Cleanup(func() {
		_ = fs.Set("v", "0")
		klog.SetOutput(io.Discard)
		klog.LogToStderr(true)
	})
	d, _, _ := fakeCluster(t, clusterShape{objects: []runtime.Object{pod("openshift-kube-scheduler", "openshift-kube-scheduler-m-0", "m-0", "app=openshift-kube-scheduler")}})
	if _, err := d.Scrape(context.Background()); err != nil {
		t.Fatal(err)
	}
	klog.Flush()
	var steps []string
	for _, line := range strings.Split(buf.String(), "\n") {
		if _, msg, ok := strings.Cut(line, "scheduler discovery: "); ok {
			steps = append(steps, msg)
		}
	}
	want := []string{
		"embedded: no schedq.kubectl-schedq.io/scheduler extension in the kubeconfig",
		"EKS: API group metrics.eks.amazonaws.com/v1 not served",
		"Talos: no pod k8s-app=kube-scheduler in kube-system",
		"kubeadm: no pod component=kube-scheduler or named kube-scheduler-* in kube-system",
		"OpenShift: 1 pod app=openshift-kube-scheduler in openshift-kube-scheduler",
		"OpenShift: reading kube-scheduler openshift-kube-scheduler/openshift-kube-scheduler-m-0:10259 (port-forward)",
	}
	if strings.Join(steps, "\n") != strings.Join(want, "\n") {
		t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(steps, "\n"), strings.Join(want, "\n"))
	}
}
