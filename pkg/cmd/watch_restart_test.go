package cmd

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
)

// standIn is a kube-scheduler that can go away and come back: a TLS
// server serving a recorded exposition, reached through a port-forward
// that connects to whichever server runs now, and its static pod in a fake
// clientset. restart stops the server and deletes the pod; comeBack starts
// a new server, on another port, with a new pod on another node.
type standIn struct {
	t      *testing.T
	client *fake.Clientset
	mu     sync.Mutex
	srv    *httptest.Server
	port   int // the last server's port, refused once it is closed
	body   []byte
}

func newStandIn(t *testing.T, node, exposition string) *standIn {
	s := &standIn{t: t, client: fake.NewClientset()}
	s.comeBack(node, exposition)
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.srv != nil {
			s.srv.Close()
		}
	})
	return s
}

func (s *standIn) comeBack(node, exposition string) {
	body, err := os.ReadFile(filepath.Join(recordedDir, exposition))
	if err != nil {
		s.t.Fatal(err)
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write(body)
	}))
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler-" + node, Namespace: metricscrape.SchedulerNamespace, Labels: map[string]string{"component": "kube-scheduler"}},
		Spec:       corev1.PodSpec{NodeName: node, HostNetwork: true},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if _, err := s.client.CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		s.t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.srv, s.port, s.body = srv, port, body
}

// goAway stops the server (scrapes through the port-forward are refused),
// then, after a while, deletes the pod (discovery finds none).
func (s *standIn) goAway(node string, podGone time.Duration) {
	s.mu.Lock()
	s.srv.Close()
	s.srv = nil
	s.mu.Unlock()
	time.Sleep(podGone)
	if err := s.client.CoreV1().Pods(metricscrape.SchedulerNamespace).Delete(context.Background(), "kube-scheduler-"+node, metav1.DeleteOptions{}); err != nil {
		s.t.Fatal(err)
	}
}

func (s *standIn) source(t *testing.T) metricscrape.Source {
	forward := func(ctx context.Context, ns, pod string, remote int) (int, func(), error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.port, func() {}, nil
	}
	return metricscrape.NewDiscovery(metricscrape.NewCluster(&rest.Config{}, s.client, forward))
}

// watchOutput is what a running watch has written so far: all of it.
func watchOutput() *testsupport.TailBuffer { return &testsupport.TailBuffer{Max: 64 << 20} }

// waitFor waits until cond holds, or fails the test after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	testsupport.Eventually(t, d, 50*time.Millisecond, func() string {
		if cond() {
			return ""
		}
		return what + " did not happen"
	})
}

// TestStatusWatch_schedulerRestart: status --watch goes on through a
// scheduler that goes away (its port refused, then its pod gone) and comes
// back as another pod on another address with its counters started over:
// the failed frames say so on stdout, stderr gets one line naming the new
// pod and how long the watch was blind, and the frames after it are whole.
func TestStatusWatch_schedulerRestart(t *testing.T) {
	sched := newStandIn(t, "cp-1", "v1.36-settled.prom")
	o, _ := newTestStatusOptions(sched.source(t), clock.RealClock{})
	out, errOut := watchOutput(), watchOutput()
	o.Out, o.ErrOut = out, errOut
	o.Watch, o.Interval, o.timeout = true, MinStatusInterval, 5*time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()

	frames := func() int { return strings.Count(out.String(), "Every 500ms: kubectl schedq status") }
	waitFor(t, 10*time.Second, "the second frame", func() bool { return frames() >= 2 })
	sched.goAway("cp-1", 1200*time.Millisecond)
	waitFor(t, 10*time.Second, "a frame that says the pod is gone", func() bool { return strings.Contains(out.String(), metricscrape.ErrNoSchedulerPod.Error()) })
	gone := frames()
	// The restarted scheduler has counted less than the one before.
	sched.comeBack("cp-2", "v1.36-parked.prom")
	waitFor(t, 10*time.Second, "three frames after the scheduler came back", func() bool { return frames() >= gone+3 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("stderr has %d lines, want the one notice:\n%s", len(lines), errOut)
	}
	notice := lines[0]
	t.Log(notice)
	for _, want := range []string{
		"watch: kube-system/kube-scheduler-cp-2:10259 found again and port-forwarded after ",
		" blind (last read at ",
		"scrape(s) failed, the first with: cannot reach kube-scheduler kube-system/kube-scheduler-cp-1:10259",
		"scheduler pod kube-system/kube-scheduler-cp-2, was kube-system/kube-scheduler-cp-1",
		"the scheduler restarted (its counters started over)",
	} {
		if !strings.Contains(notice, want) {
			t.Errorf("the notice lacks %q:\n%s", want, notice)
		}
	}
	blind := blindTime(t, notice)
	if blind < 1200*time.Millisecond || blind > 20*time.Second {
		t.Errorf("blind for %s; the scheduler was away for more than 1.2s and back within seconds", blind)
	}
	after := out.String()[strings.LastIndex(out.String(), metricscrape.ErrNoSchedulerPod.Error()):]
	last := after[strings.LastIndex(after, "Every 500ms"):]
	if strings.Contains(last, "error:") || !strings.Contains(last, "kube-scheduler-cp-2") {
		t.Errorf("the last frame is not a whole one of the new scheduler:\n%s", last)
	}
}

// TestExplainWatch_schedulerRestart: explain --watch goes on through a
// scheduler that goes away and comes back as another pod on another
// address, and says so in one line on stderr.
func TestExplainWatch_schedulerRestart(t *testing.T) {
	sched := newStandIn(t, "cp-1", "v1.36-parked.prom")
	o, client, _, _ := newTestExplain(t, parkedCluster(0), "-A")
	_ = client
	out, errOut := watchOutput(), watchOutput()
	o.Out, o.ErrOut = out, errOut
	o.source = sched.source(t)
	o.Watch, o.Interval, o.timeout = true, MinStatusInterval, 5*time.Second
	rounds := make(chan struct{}, 100)
	o.after = func(d time.Duration) <-chan time.Time {
		rounds <- struct{}{}
		return time.After(d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()
	waitRounds := func(n int) {
		for range n {
			select {
			case <-rounds:
			case <-time.After(10 * time.Second):
				t.Fatal("explain --watch stopped going round")
			}
		}
	}
	waitRounds(2)
	sched.goAway("cp-1", 1200*time.Millisecond)
	waitRounds(2)
	sched.comeBack("cp-2", "v1.36-parked.prom")
	waitRounds(3)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "watch: kube-system/kube-scheduler-cp-2:10259 found again and port-forwarded after ") ||
		!strings.Contains(lines[0], "scheduler pod kube-system/kube-scheduler-cp-2, was kube-system/kube-scheduler-cp-1") {
		t.Fatalf("stderr, want one notice of the new scheduler pod:\n%s", errOut)
	}
	if blind := blindTime(t, lines[0]); blind < 1200*time.Millisecond {
		t.Errorf("blind for %s, less than the 1.2s the scheduler was away", blind)
	}
}

// blindTime reads "after 1.5s blind" from a notice.
func blindTime(t *testing.T, notice string) time.Duration {
	t.Helper()
	_, rest, ok := strings.Cut(notice, " after ")
	if !ok {
		t.Fatalf("no blind time in %q", notice)
	}
	d, err := time.ParseDuration(strings.Fields(rest)[0])
	if err != nil {
		t.Fatal(errors.Join(err, errors.New(notice)))
	}
	return d
}
