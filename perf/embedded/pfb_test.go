package embedded

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-schedq/kubectl-schedq/perf/groundtruth"
)

// pfbChildEnv tells a re-run of this test binary which SchedulerPopFromBackoffQ
// setting its control plane gets. Feature gates are process-global, so each
// setting needs a process of its own.
const pfbChildEnv = "SCHEDQ_EMBEDDED_PFB_CHILD"

// TestPopFromBackoffQ parks pods as unschedulable, adds the node they wait
// for, and checks how they reach activeQ after the NodeAdd put them in
// backoffQ: with SchedulerPopFromBackoffQ on, popped early from backoffQ
// (incoming{active,PopFromBackoffQ}); with it off, flushed when their backoff
// completes (incoming{active,BackoffComplete}). Each setting runs in its own
// process.
func TestPopFromBackoffQ(t *testing.T) {
	skipIfShort(t)
	for _, pfb := range []bool{true, false} {
		t.Run(fmt.Sprintf("popFromBackoffQ=%v", pfb), func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestPopFromBackoffQChild$", "-test.v", "-test.count=1", "-test.timeout=5m")
			cmd.Env = append(os.Environ(), pfbChildEnv+"="+strconv.FormatBool(pfb))
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestPopFromBackoffQChild") {
				t.Fatalf("child process (%v):\n%s", err, out)
			}
			for _, line := range strings.Split(string(out), "\n") {
				if _, msg, ok := strings.Cut(line, "pfb_test.go:"); ok {
					t.Logf("child: pfb_test.go:%s", msg)
				}
			}
		})
	}
}

// TestPopFromBackoffQChild is one process of TestPopFromBackoffQ.
func TestPopFromBackoffQChild(t *testing.T) {
	env := os.Getenv(pfbChildEnv)
	if env == "" {
		t.Skip("run by TestPopFromBackoffQ in a process of its own")
	}
	pfb, err := strconv.ParseBool(env)
	if err != nil {
		t.Fatalf("%s=%q: %v", pfbChildEnv, env, err)
	}
	const n = 20
	// Every backoff lasts 3 s, long enough that the NodeAdd finds every pod
	// still backing off, however loaded the machine.
	cp := startForTest(t, Options{
		FeatureGates: map[string]bool{"SchedulerPopFromBackoffQ": pfb},
		SchedulerConfig: &configv1.KubeSchedulerConfiguration{
			PodInitialBackoffSeconds: ptr.To[int64](3),
			PodMaxBackoffSeconds:     ptr.To[int64](3),
		},
		Nodes: 1,
	})
	client := cp.Client()
	ctx := context.Background()

	extra := map[string]string{"schedq.test/pool": "extra"}
	createPods(t, client, "parked", n, extra)
	eventually(t, 30*time.Second, func() string {
		if c := cp.Queue().Count()[groundtruth.Unschedulable]; c != n {
			return "ground truth: " + jsonString(cp.Queue())
		}
		return ""
	})

	node := FakeNode("extra-0")
	node.Labels["schedq.test/pool"] = "extra"
	added := time.Now()
	if err := CreateNodes(ctx, client, node); err != nil {
		t.Fatal(err)
	}
	if !pfb {
		// The pods wait out their backoff in backoffQ.
		eventually(t, 5*time.Second, func() string {
			q := cp.Queue()
			if q.Count()[groundtruth.Backoff] != n {
				return "ground truth: " + jsonString(q)
			}
			for _, p := range q.Pods {
				if !p.BackoffExpiresAt.After(p.Timestamp) {
					return "backoffExpiresAt not after timestamp: " + jsonString(p)
				}
			}
			return ""
		})
	}
	waitBound(t, client, "parked", n, 30*time.Second)
	t.Logf("popFromBackoffQ=%v: %d pods bound %v after the NodeAdd", pfb, n, time.Since(added).Round(time.Millisecond))

	_, families := scrape(t, cp.MetricsURL, cp.RESTConfig)
	incoming := func(queue, event string) float64 {
		return metricValue(families, "scheduler_queue_incoming_pods_total", map[string]string{"queue": queue, "event": event})
	}
	wantPop, wantComplete := 0.0, float64(n)
	if pfb {
		wantPop, wantComplete = float64(n), 0
	}
	if early := incoming("active", "NodeAdd"); early > 0 {
		t.Errorf("%v pods went straight to activeQ on the NodeAdd: their 3 s backoff had already expired, so this run says nothing about backoffQ (machine too slow?)", early)
	}
	for _, c := range []struct {
		queue, event string
		want         float64
	}{
		{"backoff", "NodeAdd", n},
		{"active", "PopFromBackoffQ", wantPop},
		{"active", "BackoffComplete", wantComplete},
	} {
		if got := incoming(c.queue, c.event); got != c.want {
			t.Errorf("scheduler_queue_incoming_pods_total{queue=%q,event=%q} = %v, want %v", c.queue, c.event, got, c.want)
		}
	}
}
