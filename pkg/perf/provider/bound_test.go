package provider

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
	callbound "github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
)

func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestKubeconfig_Start_bounded connects to API servers that never answer:
// Start returns within --request-timeout with an error that says so.
func TestKubeconfig_Start_bounded(t *testing.T) {
	for _, tc := range []struct {
		name    string
		server  func(testing.TB) string
		metrics bool
	}{
		{"a TLS server that stalls after the handshake", testsupport.StalledURL, false},
		{"a port that accepts and never answers", testsupport.SilentPort, false},
		{"--metrics-url on a stalled server", testsupport.StalledURL, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server := tc.server(t)
			k := &Kubeconfig{Path: writeKubeconfig(t, server), AllowExisting: true, RequestTimeout: 500 * time.Millisecond}
			if tc.metrics {
				k.MetricsURL = server + "/metrics"
			}
			began := time.Now()
			inst, err := k.Start(context.Background(), Spec{Workload: selectedWithGates(nil), RunLabels: map[string]string{runner.RunLabelKey: "r"}})
			took := time.Since(began)
			if err == nil {
				_ = inst.Stop(context.Background())
				t.Fatal("Start succeeded against a server that never answers")
			}
			if took > 5*time.Second {
				t.Errorf("Start took %s, bound 500ms", took)
			}
			for _, want := range []string{"no answer within 500ms", "--request-timeout"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

// TestCleanup_bounded cleans up on API servers that never answer: the
// first call that times out ends the cleanup, with an error that says so.
// The calls made are counted, not only timed: on a loaded machine one
// timed-out call has taken over twice its bound.
func TestCleanup_bounded(t *testing.T) {
	for _, tc := range testsupport.Unanswering {
		t.Run(tc.Name, func(t *testing.T) {
			cfg, err := clientcmd.BuildConfigFromFlags("", writeKubeconfig(t, tc.Server(t)))
			if err != nil {
				t.Fatal(err)
			}
			var calls atomic.Int32
			cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
				return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
					calls.Add(1)
					return rt.RoundTrip(r)
				})
			})
			client := cleanupClient(cfg, nil)
			began := time.Now()
			_, err = CleanupRuns(context.Background(), client, "r", 500*time.Millisecond)
			if n := calls.Load(); n != 1 {
				t.Errorf("cleanup made %d calls, want the first, unanswered, to end it", n)
			}
			if took := time.Since(began); took > 5*time.Second {
				t.Errorf("cleanup took %s, bound 500ms per call", took)
			}
			if err == nil || !strings.Contains(err.Error(), "no answer within 500ms") {
				t.Errorf("err = %v, want the timeout named", err)
			}
		})
	}
}

// TestCleanup_countsWhatTheServerConfirmed cleans up a run's pod, node and
// namespace on a server that refuses every delete (a GET-only API server),
// and on one that carries them out: only confirmed deletes count, and the
// kinds whose deletes failed are named as possibly left.
func TestCleanup_countsWhatTheServerConfirmed(t *testing.T) {
	runLabels := map[string]string{runner.RunLabelKey: "r1"}
	for _, tc := range []struct {
		name        string
		refuse      bool
		wantRemoved string
		wantLeft    []string
	}{
		{"every delete refused", true, "0 pods, 0 nodes, 0 namespaces and 0 other objects", []string{"pods", "persistent volume claims", "nodes", "node leases", "persistent volumes", "namespaces"}},
		{"every delete carried out", false, "1 pods, 1 nodes, 1 namespaces and 0 other objects", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset(
				&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "namespace-1", Labels: runLabels}},
				&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "namespace-1", Labels: runLabels}},
				&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: runLabels}},
			)
			deleteCollections(client)
			if tc.refuse {
				refuse := func(action clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewMethodNotSupported(action.GetResource().GroupResource(), action.GetVerb())
				}
				client.PrependReactor("delete", "*", refuse)
				client.PrependReactor("delete-collection", "*", refuse)
			}
			removed, err := Cleanup(context.Background(), client, nil, runLabels, nil, time.Second)
			if got := removed.String(); got != tc.wantRemoved {
				t.Errorf("removed %q, want %q", got, tc.wantRemoved)
			}
			if diff := cmp.Diff(tc.wantLeft, removed.Left); diff != "" {
				t.Errorf("left (-want, +got):\n%s", diff)
			}
			if (err != nil) != tc.refuse {
				t.Errorf("err = %v, want an error %t", err, tc.refuse)
			}
			if tc.refuse && !strings.Contains(err.Error(), "pods, persistent volume claims, nodes, node leases, persistent volumes, namespaces labelled schedq.kubectl-schedq.io/run=r1 may be left") {
				t.Errorf("err = %v, want the kinds left named", err)
			}
		})
	}
}

// TestKubeconfig_Start_workloadCallsBounded: the config the workload gets
// bounds every call by --request-timeout, as the first calls are: a server
// that stops answering mid-run ends the call, not the run's patience.
func TestKubeconfig_Start_workloadCallsBounded(t *testing.T) {
	stalled := testsupport.StalledURL(t)
	k := &Kubeconfig{AllowExisting: true, RequestTimeout: 300 * time.Millisecond,
		restConfig: &rest.Config{Host: stalled, TLSClientConfig: rest.TLSClientConfig{Insecure: true}},
		client:     fake.NewClientset(), metrics: fakeReader{schedulerMetrics}}
	inst, err := k.Start(context.Background(), Spec{Workload: selectedWithGates(nil), RunLabels: map[string]string{runner.RunLabelKey: "5c1d2e3f4a"}})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop(context.Background())
	client, err := kubernetes.NewForConfig(inst.Cluster.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	// The test's own deadline: without the bound the call would wait for it.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	began := time.Now()
	_, err = client.CoreV1().Pods("ns").Create(ctx, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, metav1.CreateOptions{})
	if took := time.Since(began); err == nil || !callbound.IsTimeout(err) || took > 10*time.Second {
		t.Fatalf("create took %s and returned %v, want a timeout after about 300ms", took, err)
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
