package metricscrape

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

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

// configzOf is a v1 /configz with one profile per name and the Lease lease
// ("" without leader election).
func configzOf(lease string, names ...string) string {
	var profiles []string
	for _, n := range names {
		profiles = append(profiles, fmt.Sprintf(`{"schedulerName":%q}`, n))
	}
	le := `{"leaderElect":false}`
	if lease != "" {
		le = fmt.Sprintf(`{"leaderElect":true,"resourceNamespace":"kube-system","resourceName":%q}`, lease)
	}
	return fmt.Sprintf(`{"componentconfig":{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration","profiles":[%s],"leaderElection":%s}}`,
		strings.Join(profiles, ","), le)
}

// schedulers stands in for several kube-schedulers behind port-forwards: a
// TLS server per pod serving /metrics and /configz, and how often each
// was read.
type schedulers struct {
	mu      sync.Mutex
	ports   map[string]int // namespace/pod → local port
	configz map[string]string
	reads   map[string]int // namespace/pod → /metrics reads
	// configzReads counts the /configz reads of each pod.
	configzReads map[string]int
}

func (s *schedulers) add(t *testing.T, pod, configz string) {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case MetricsPath:
			s.mu.Lock()
			s.reads[pod]++
			s.mu.Unlock()
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			_, _ = w.Write([]byte(smallExposition))
		case ConfigzPath:
			s.mu.Lock()
			s.configzReads[pod]++
			s.mu.Unlock()
			if configz == "" {
				http.Error(w, `{"kind":"Status","apiVersion":"v1","code":403}`, http.StatusForbidden)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(configz))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ports == nil {
		s.ports, s.reads, s.configzReads = map[string]int{}, map[string]int{}, map[string]int{}
	}
	s.ports[pod] = port
}

func (s *schedulers) forward(_ context.Context, ns, pod string, _ int) (int, func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	port, ok := s.ports[ns+"/"+pod]
	if !ok {
		return 0, nil, fmt.Errorf("pod %s/%s has no server", ns, pod)
	}
	return port, func() {}, nil
}

// replica is a pod of the second scheduler's Deployment (ReplicaSet rs).
func replica(name, rs string) *corev1.Pod {
	p := deploymentPod(name, "cp-1")
	p.Labels = map[string]string{"component": "scheduler", "app": "second", "pod-template-hash": strings.TrimPrefix(rs, "second-")}
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, UID: "u-" + "rs", Controller: ptr.To(true)}}
	return p
}

func TestProfileSource(t *testing.T) {
	const ownLeader, secondLeader = "kube-system/kube-scheduler-cp-2", "kube-system/second-7f9-fghij"
	newCluster := func(t *testing.T, ownConfigz string, objects ...runtime.Object) (*schedulers, *Cluster) {
		s := &schedulers{}
		s.add(t, "kube-system/kube-scheduler-cp-1", ownConfigz)
		s.add(t, ownLeader, ownConfigz)
		s.add(t, "kube-system/second-7f9-abcde", configzOf("second", "second"))
		s.add(t, secondLeader, configzOf("second", "second"))
		objects = append(objects,
			schedulerPod("cp-1", corev1.PodRunning, true), schedulerPod("cp-2", corev1.PodRunning, true), lease("cp-2_a"))
		return s, NewCluster(&rest.Config{}, fake.NewClientset(objects...), s.forward)
	}
	secondObjects := []runtime.Object{replica("second-7f9-abcde", "second-7f9"), replica("second-7f9-fghij", "second-7f9"), secondLease("second-7f9-fghij_b")}
	own := configzOf("kube-scheduler", "default-scheduler", "batch")

	for _, tc := range []struct {
		name       string
		schedName  string
		ownConfigz string
		objects    []runtime.Object
		// wantPod is the pod read, wantProfiles its profiles; wantOthers
		// the schedulers looked at on the way.
		wantPod      string
		wantStandby  []string
		wantProfiles []string
		wantOthers   []SchedulerSeen
		wantErr      string
	}{
		{name: "no name: the cluster's own, with its profiles", ownConfigz: own, objects: secondObjects,
			wantPod: ownLeader, wantStandby: []string{"kube-system/kube-scheduler-cp-1"}, wantProfiles: []string{"default-scheduler", "batch"}},
		{name: "a profile of the cluster's own", schedName: "batch", ownConfigz: own, objects: secondObjects,
			wantPod: ownLeader, wantStandby: []string{"kube-system/kube-scheduler-cp-1"}, wantProfiles: []string{"default-scheduler", "batch"}},
		{name: "a second scheduler's: the holder of its own Lease", schedName: "second", ownConfigz: own, objects: secondObjects,
			wantPod: secondLeader, wantStandby: []string{"kube-system/second-7f9-abcde"}, wantProfiles: []string{"second"},
			wantOthers: []SchedulerSeen{{Pod: ownLeader, Lease: "kube-system/kube-scheduler", Profiles: []string{"default-scheduler", "batch"}}}},
		{name: "served by none", schedName: "volcano", ownConfigz: own, objects: secondObjects,
			wantErr: `no kube-scheduler here serves scheduler name "volcano" (looked at kube-system/kube-scheduler-cp-2 (profiles default-scheduler, batch); kube-system/second-7f9-abcde (profiles second))`},
		{name: "no second scheduler at all", schedName: "volcano", ownConfigz: own,
			wantErr: `no kube-scheduler here serves scheduler name "volcano" (looked at kube-system/kube-scheduler-cp-2 (profiles default-scheduler, batch)): its pods wait`},
		// Without /configz the metrics' profiles and the default name are
		// taken as served; another name is looked for elsewhere.
		{name: "own /configz forbidden: default-scheduler", schedName: "default-scheduler", objects: secondObjects,
			wantPod: ownLeader, wantStandby: []string{"kube-system/kube-scheduler-cp-1"}},
		{name: "own /configz forbidden: a second scheduler's", schedName: "second", objects: secondObjects,
			wantPod: secondLeader, wantStandby: []string{"kube-system/second-7f9-abcde"}, wantProfiles: []string{"second"},
			wantOthers: []SchedulerSeen{{Pod: ownLeader, Lease: "kube-system/kube-scheduler", Error: "these credentials may not get /configz"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := newCluster(t, tc.ownConfigz, tc.objects...)
			src := NewProfileSource(NewDiscovery(c), tc.schedName)
			snap, err := src.Scrape(context.Background())
			if tc.wantErr != "" {
				var nse *NotServedError
				if !errors.As(err, &nse) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want a NotServedError with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			o := snap.Origin
			if o.Pod != tc.wantPod || !reflect.DeepEqual(o.Standby, tc.wantStandby) || !reflect.DeepEqual(o.Profiles, tc.wantProfiles) {
				t.Errorf("read %s (standby %v, profiles %v), want %s (%v, %v)", o.Pod, o.Standby, o.Profiles, tc.wantPod, tc.wantStandby, tc.wantProfiles)
			}
			if !reflect.DeepEqual(o.Others, tc.wantOthers) {
				t.Errorf("others %+v, want %+v", o.Others, tc.wantOthers)
			}
			// The next scrape reads the same scheduler, a second one
			// without asking the cluster's own again.
			before := srv.reads[ownLeader]
			again, err := src.Scrape(context.Background())
			if err != nil || again.Origin.Pod != o.Pod {
				t.Fatalf("second scrape: %v, %v", again, err)
			}
			if tc.wantOthers != nil && srv.reads[ownLeader] != before {
				t.Errorf("the second scrape read the cluster's own scheduler again")
			}
		})
	}
}

// TestProfileSource_secondGone: when the second scheduler's pods are gone,
// the next scrape looks again, finds none, and says so.
func TestProfileSource_secondGone(t *testing.T) {
	s := &schedulers{}
	s.add(t, "kube-system/kube-scheduler-cp-1", configzOf("kube-scheduler", "default-scheduler"))
	s.add(t, "kube-system/second-7f9-abcde", configzOf("", "second"))
	client := fake.NewClientset(schedulerPod("cp-1", corev1.PodRunning, true), replica("second-7f9-abcde", "second-7f9"))
	src := NewProfileSource(NewDiscovery(NewCluster(&rest.Config{}, client, s.forward)), "second")
	snap, err := src.Scrape(context.Background())
	if err != nil || snap.Origin.Pod != "kube-system/second-7f9-abcde" {
		t.Fatalf("first scrape: %+v, %v", snap, err)
	}
	if err := client.CoreV1().Pods("kube-system").Delete(context.Background(), "second-7f9-abcde", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = src.Scrape(context.Background())
	var nse *NotServedError
	if !errors.As(err, &nse) {
		t.Fatalf("err = %v, want a NotServedError", err)
	}
}

// TestProfileSource_trustedNamespacesOnly: the search sends the
// kubeconfig's credentials to the pods it asks for their /configz, so it
// asks none outside kube-system, the cluster's own scheduler's namespace
// and the namespace the user names, however they are labelled.
func TestProfileSource_trustedNamespacesOnly(t *testing.T) {
	inNamespace := func(p *corev1.Pod, ns string) *corev1.Pod {
		p.Namespace = ns
		return p
	}
	openshift := func(node string) *corev1.Pod {
		p := schedulerPod(node, corev1.PodRunning, false)
		p.Namespace, p.Name, p.Labels = OpenShiftSchedulerNamespace, "openshift-kube-scheduler-"+node, map[string]string{"app": "openshift-kube-scheduler"}
		return p
	}
	for _, tc := range []struct {
		name      string
		own       *corev1.Pod // the cluster's scheduler
		second    *corev1.Pod // a kube-scheduler serving "volcano"
		named     string      // --scheduler-namespace
		forbidden string      // a namespace whose pods may not be listed
		// wantRead is whether the second one is read; else the error has
		// wantErr and the search looked in wantNamespaces.
		wantRead       bool
		wantNamespaces []string
		wantErr        string
	}{
		{name: "a team's namespace is not looked in", own: schedulerPod("cp-1", corev1.PodRunning, true),
			second: inNamespace(replica("second-7f9-abcde", "second-7f9"), "team-a"), wantNamespaces: []string{"kube-system"},
			wantErr: "(looked in namespaces kube-system; a kube-scheduler in another is found with --scheduler-namespace NAMESPACE, which sends your credentials to the pods there)"},
		{name: "unless the user names it", own: schedulerPod("cp-1", corev1.PodRunning, true),
			second: inNamespace(replica("second-7f9-abcde", "second-7f9"), "team-a"), named: "team-a", wantRead: true},
		{name: "naming kube-system changes nothing", own: schedulerPod("cp-1", corev1.PodRunning, true),
			second: inNamespace(replica("second-7f9-abcde", "second-7f9"), "team-a"), named: "kube-system", wantNamespaces: []string{"kube-system"}},
		{name: "the cluster's own scheduler's namespace (OpenShift's)", own: openshift("master-0"),
			second: inNamespace(replica("second-7f9-abcde", "second-7f9"), OpenShiftSchedulerNamespace), wantRead: true},
		{name: "kube-system forbidden: the other namespaces still looked in", own: openshift("master-0"), forbidden: "kube-system",
			second: inNamespace(replica("second-7f9-abcde", "second-7f9"), "kube-system"), wantNamespaces: []string{"kube-system", OpenShiftSchedulerNamespace},
			wantErr: "; pods in kube-system could not be listed (forbidden): its pods wait"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &schedulers{}
			own := tc.own.Namespace + "/" + tc.own.Name
			second := tc.second.Namespace + "/" + tc.second.Name
			s.add(t, own, configzOf("", "default-scheduler"))
			s.add(t, second, configzOf("", "volcano"))
			tc.own.Status.Phase = corev1.PodRunning
			client := fake.NewClientset(tc.own, tc.second)
			if tc.forbidden != "" {
				client.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
					if a.GetNamespace() != tc.forbidden {
						return false, nil, nil
					}
					return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("no"))
				})
			}
			src := NewProfileSource(NewDiscovery(NewCluster(&rest.Config{BearerToken: "secret"}, client, s.forward)), "volcano", tc.named)
			snap, err := src.Scrape(context.Background())
			if tc.wantRead {
				if err != nil || snap.Origin.Pod != second {
					t.Fatalf("read %+v, %v; want %s", snap, err, second)
				}
				return
			}
			var nse *NotServedError
			if !errors.As(err, &nse) || len(nse.Seen) != 1 || !reflect.DeepEqual(nse.Namespaces, tc.wantNamespaces) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want a NotServedError that looked at the cluster's own scheduler alone, in %v, with %q", err, tc.wantNamespaces, tc.wantErr)
			}
			if n := s.configzReads[second]; n != 0 {
				t.Errorf("%s was asked for its /configz %d time(s), with the kubeconfig's credentials", second, n)
			}
		})
	}
}

func secondLease(holder string) runtime.Object {
	l := lease(holder)
	l.Name = "second"
	return l
}
