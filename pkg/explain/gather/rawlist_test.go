package gather

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// podServer is an API server's pod list, as HTTP: n pods in pages of the
// limit asked for, the continue token the index of the next pod, answered
// in protobuf unless the client asks for JSON only or json is set; a page
// from broken on is cut short.
type podServer struct {
	pods   []corev1.Pod
	json   bool
	broken int // the page index from which pages are garbage (0: none)
	forbid bool
	calls  atomic.Int32
}

func (s *podServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	call := int(s.calls.Add(1))
	if s.forbid {
		st := apierrors.NewForbidden(corev1.Resource("pods"), "", fmt.Errorf("no")).Status()
		st.APIVersion, st.Kind = "v1", "Status"
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(&st)
		return
	}
	q := r.URL.Query()
	from, _ := strconv.Atoi(q.Get("continue"))
	limit, _ := strconv.Atoi(q.Get("limit"))
	to := min(len(s.pods), from+limit)
	list := &corev1.PodList{Items: s.pods[from:to]}
	if to < len(s.pods) {
		list.Continue = strconv.Itoa(to)
	}
	list.APIVersion, list.Kind = "v1", "PodList"
	if s.json || !strings.Contains(r.Header.Get("Accept"), "protobuf") {
		w.Header().Set("Content-Type", "application/json")
		_ = scheme.Codecs.LegacyCodec(corev1.SchemeGroupVersion).Encode(list, w)
		return
	}
	raw, _ := list.Marshal()
	env, _ := (&runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "v1", Kind: "PodList"}, Raw: raw, ContentType: runtime.ContentTypeProtobuf}).Marshal()
	body := append(append([]byte{}, protoMagic...), env...)
	if s.broken > 0 && call >= s.broken {
		body = body[:len(body)-3]
	}
	w.Header().Set("Content-Type", runtime.ContentTypeProtobuf)
	_, _ = w.Write(body)
}

func newPodServer(t *testing.T, n int) (*podServer, kubernetes.Interface) {
	t.Helper()
	s := &podServer{}
	for i := range n {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", i), Namespace: "ns", UID: "u",
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}, Labels: map[string]string{"a": "b"}}}
		p.Spec.Containers = []corev1.Container{{Name: "c", Image: "i", Command: []string{"sleep"}}}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable"}}
		s.pods = append(s.pods, p)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c, err := kubernetes.NewForConfig(ListConfig(&rest.Config{Host: srv.URL}))
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// TestListPods_raw lists from an API server over HTTP: protobuf pages read
// by the lean decoder, or a JSON answer by client-go's; every page, in
// order, trimmed as slimPod trims; a refusal stays a Forbidden error, and a
// page cut short is an error, not fewer pods.
func TestListPods_raw(t *testing.T) {
	for _, tc := range []struct {
		name   string
		json   bool
		broken int
		forbid bool
		want   string // an error
	}{
		{name: "protobuf"},
		{name: "JSON", json: true},
		{name: "refused", forbid: true, want: "get pods"},
		{name: "a page cut short", broken: 2, want: "decoding a page of pods"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := newPodServer(t, 1234)
			s.json, s.broken, s.forbid = tc.json, tc.broken, tc.forbid
			pods, err := listPods(context.Background(), c, metav1.NamespaceAll, metav1.ListOptions{})
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want one saying %q", err, tc.want)
				}
				if tc.forbid && !apierrors.IsForbidden(err) {
					t.Errorf("err = %v, not a Forbidden error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := int(s.calls.Load()); got != 3 {
				t.Errorf("%d calls, want 3 pages of 500", got)
			}
			if len(pods) != 1234 || pods[0].Name != "p-0" || pods[1233].Name != "p-1233" {
				t.Fatalf("got %d pods, want p-0 … p-1233", len(pods))
			}
			for i, p := range pods {
				if diff := cmp.Diff(slimPod(&s.pods[i]), p); diff != "" {
					t.Fatalf("pod %d (-slimPod +listed):\n%s", i, diff)
				}
			}
		})
	}
}

// A list whose context ends stops between pages.
func TestListPods_rawBoundedAcrossPages(t *testing.T) {
	s, c := newPodServer(t, 5000)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := listPods(ctx, c, metav1.NamespaceAll, metav1.ListOptions{})
		done <- err
	}()
	for s.calls.Load() < 2 {
		goruntime.Gosched()
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("no error from a list whose context ended")
	}
	if n := s.calls.Load(); n > 4 {
		t.Errorf("%d pages listed, the context ended after 2", n)
	}
}
