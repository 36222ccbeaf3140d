package kind_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// watchProc is a running `status --watch` or `explain --watch`.
type watchProc struct {
	name        string
	cmd         *exec.Cmd
	out, errOut *testsupport.TailBuffer
	exited      chan error
}

func startWatch(t *testing.T, kubeconfig, name string, args ...string) *watchProc {
	t.Helper()
	w := &watchProc{name: name, out: &testsupport.TailBuffer{Max: 64 << 20}, errOut: &testsupport.TailBuffer{Max: 64 << 20}, exited: make(chan error, 1)}
	w.cmd = exec.Command(env(t, "SCHEDQ_PLUGIN", ""), append(args, "--kubeconfig", kubeconfig)...)
	w.cmd.Stdout, w.cmd.Stderr = w.out, w.errOut
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { w.exited <- w.cmd.Wait() }()
	t.Cleanup(func() {
		if w.cmd.ProcessState == nil {
			_ = w.cmd.Process.Kill()
		}
	})
	return w
}

// notices are the watch's lines on stderr that say it found the scheduler
// again; others are its other lines there.
func (w *watchProc) notices() (notices, others []string) {
	for _, l := range strings.Split(strings.TrimSpace(w.errOut.String()), "\n") {
		switch {
		case l == "":
		case strings.HasPrefix(l, "watch: "):
			notices = append(notices, l)
		default:
			others = append(others, l)
		}
	}
	return notices, others
}

// blind reads "after 13.4s blind" from a notice; a notice that the
// scheduler "changed within" one interval, with no scrape failed, was blind
// for none of it.
func blind(t *testing.T, notice string) time.Duration {
	t.Helper()
	if strings.Contains(notice, " port-forwarded: it changed within the ") {
		return 0
	}
	_, rest, ok := strings.Cut(notice, " after ")
	if !ok {
		t.Fatalf("no blind time in %q", notice)
	}
	d, err := time.ParseDuration(strings.Fields(rest)[0])
	if err != nil {
		t.Fatalf("%q: %v", notice, err)
	}
	return d
}

// TestWatch_schedulerRestart runs status --watch and explain --watch while
// the kube-scheduler static pod's container is killed (the kubelet starts it
// again) and then while the kubelet restarts, stopped for 3 s (the
// port-forward, which goes through the kubelet, fails meanwhile). Each time both watches find the
// scheduler again, say so in one line on stderr with how long they were
// blind, and go on: status draws whole frames again.
func TestWatch_schedulerRestart(t *testing.T) {
	c := newCluster(t)
	node := c.name + "-control-plane"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// A parked pod, so that explain has a pending pod to explain.
	if _, err := c.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Admission refuses pods until the namespace's default service account exists.
	poll(ctx, t, "a pod in a new namespace", func() (bool, string) {
		_, err := c.client.CoreV1().Pods(ns).Create(ctx, pod("parked-0", "1000"), metav1.CreateOptions{})
		return err == nil, fmt.Sprint(err)
	})

	status := startWatch(t, c.kubeconfig, "status --watch", "status", "--watch", "--interval", "1s")
	explain := startWatch(t, c.kubeconfig, "explain --watch", "explain", "-A", "--watch", "--interval", "1s")
	watches := []*watchProc{status, explain}
	frames := func() int { return strings.Count(status.out.String(), "Every 1s: kubectl schedq status") }
	poll(ctx, t, "the first frames", func() (bool, string) {
		return frames() >= 2 && strings.Contains(explain.out.String(), "parked-0"), status.errOut.String() + explain.errOut.String()
	})

	for i, step := range []struct {
		what                  string
		args                  []string
		mayFallBetweenScrapes bool
	}{
		// crictl when the node has it; the node image built offline has
		// containerd's ctr, which kills the container's task as crictl stop
		// would (the kubelet starts the container again).
		{"the kube-scheduler container killed", []string{"sh", "-c", `
if command -v crictl >/dev/null; then crictl stop $(crictl ps -q --name kube-scheduler); exit; fi
for c in $(ctr -n k8s.io containers ls -q 'labels."io.kubernetes.container.name"==kube-scheduler'); do
  ctr -n k8s.io tasks ls | grep -q "^$c .*RUNNING" && ctr -n k8s.io tasks kill -s SIGKILL "$c"
done`}, true},
		// Stopped for a few seconds, so that a scrape falls in the gap
		// (a restart alone can fall between two scrapes).
		{"the kubelet restarted", []string{"sh", "-c", "systemctl stop kubelet && sleep 3 && systemctl start kubelet"}, false},
	} {
		before := frames()
		if out, err := run(ctx, time.Minute, "docker", append([]string{"exec", node}, step.args...)...); err != nil {
			t.Fatalf("%s: %v\n%s", step.what, err, out)
		}
		for _, w := range watches {
			poll(ctx, t, w.name+" to find the scheduler again after "+step.what, func() (bool, string) {
				n, others := w.notices()
				return len(n) >= i+1, strings.Join(others, "\n")
			})
			n, others := w.notices()
			if len(n) != i+1 || len(others) > 0 {
				t.Errorf("%s: after %s, stderr has %d notices (want %d) and other lines:\n%s", w.name, step.what, len(n), i+1, w.errOut)
			}
			// A killed container the kubelet starts again within one
			// interval can fall between two scrapes: then no scrape failed
			// and the notice says the scheduler changed (its counters
			// started over) instead of how long the watch was blind.
			notice := n[len(n)-1]
			found := "kube-scheduler-" + node + ":10259 found again and port-forwarded"
			if !strings.Contains(notice, found+" after ") && !(step.mayFallBetweenScrapes &&
				strings.Contains(notice, found+": it changed within the ") && strings.Contains(notice, "counters started over")) {
				t.Errorf("%s: notice %q", w.name, notice)
			}
			t.Logf("%s, %s: blind for %s\n%s", step.what, w.name, blind(t, notice), notice)
		}
		// status goes on drawing whole frames.
		poll(ctx, t, "status to draw two frames after "+step.what, func() (bool, string) {
			return frames() >= before+2 && !strings.Contains(lastFrame(status.out.String()), "showing the last good scrape"), lastFrame(status.out.String())
		})
	}

	stopWatches(t, watches...)
}

// stopWatches interrupts each watch, as Ctrl-C does, and checks that it
// ends at once and cleanly.
func stopWatches(t *testing.T, watches ...*watchProc) {
	t.Helper()
	for _, w := range watches {
		if err := w.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-w.exited:
			if err != nil {
				t.Errorf("%s exited after SIGINT: %v\n%s", w.name, err, w.errOut)
			}
		case <-time.After(time.Minute):
			t.Errorf("%s still runs a minute after SIGINT", w.name)
		}
	}
}

func lastFrame(out string) string {
	if i := strings.LastIndex(out, "Every 1s"); i >= 0 {
		return out[i:]
	}
	return out
}
