package explainacc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
	"github.com/kubectl-schedq/kubectl-schedq/perf/embedded"
)

// The scenarios TestExplainAccuracy records, each on a control plane of its
// own with four 4-CPU nodes of 110 pods:
//
//   - scenario: rounds that put pods in every place of the queue (below);
//   - burst: a burst of 1,500 pods into activeQ, more than the nodes hold,
//     beside 30 pods whose bindings are denied: every binding failure moves
//     the parked pods out of unschedulablePods (burstScenario);
//   - churn: 200 pods no node fits, and a pod deleted and recreated every
//     500 ms, whose every deletion moves them all (churnScenario).
//
// A seed varies each run's numbers and times a little (seeded), so that
// runs differ and the calibration can be fitted on some seeds and measured
// on others.
var scenarios = []scenarioDef{
	{"scenario", roundLen, func(ctx context.Context, s *scenario, d time.Duration) error { return s.rounds(ctx, d) }},
	{"burst", 35 * time.Second, func(ctx context.Context, s *scenario, d time.Duration) error { return s.burst(ctx, d) }},
	{"churn", 20 * time.Second, func(ctx context.Context, s *scenario, d time.Duration) error { return s.churn(ctx, d) }},
}

// scenarioDef is one scenario: run drives the cluster for about d,
// ciDuration unless DurationEnv says otherwise.
type scenarioDef struct {
	name       string
	ciDuration time.Duration
	run        func(ctx context.Context, s *scenario, d time.Duration) error
}

func findScenario(name string) (scenarioDef, bool) {
	for _, sc := range scenarios {
		if sc.name == name {
			return sc, true
		}
	}
	return scenarioDef{}, false
}

// The scenario ("scenario") puts pods in every place of the queue, round
// after round (each round's names carry its number):
//
//   - err-*: bound by nobody: a ValidatingAdmissionPolicy denies their
//     binding, so they cycle through the error backoff (1 s, 2 s … 10 s);
//   - big-*: ask for 6 CPUs, more than any node has: unschedulablePods
//     (NodeResourcesFit), until a node that fits one is added;
//   - sel-*: select a node pool that does not exist yet: unschedulablePods
//     (NodeAffinity), until the pool's node is added;
//   - gated-*: carry a scheduling gate, removed from half of them mid-round
//     and from the rest later;
//   - small-*: bursts of a hundred pods that fit anywhere: activeQ and in
//     flight, and while they wait, others' backoffs wait too;
//
// and changes the cluster under them: nodes that help some pods and not
// others (NodeAdd), and deletion of the previous round's bound pods
// (AssignedPodDelete).
const (
	denyPrefix = "err-"
	roundLen   = 20 * time.Second
	ns         = metav1.NamespaceDefault
)

type step struct {
	at   time.Duration
	name string
	do   func(ctx context.Context, s *scenario, round int) error
}

var roundSteps = []step{
	{0, "previous round's small pods deleted", func(ctx context.Context, s *scenario, r int) error {
		if r == 0 {
			return nil
		}
		return s.deleteBound(ctx, fmt.Sprintf("small-r%d-", r-1))
	}},
	{0, "err, big, sel, gated pods and a burst", func(ctx context.Context, s *scenario, r int) error {
		sel := map[string]string{"schedq.test/pool": fmt.Sprintf("r%d", r)}
		for _, c := range []struct {
			prefix string
			n      int
			cpu    string
			sel    map[string]string
			gated  bool
		}{
			{fmt.Sprintf("%sr%d-", denyPrefix, r), 6, "100m", nil, false},
			{fmt.Sprintf("big-r%d-", r), 15, "6", nil, false},
			{fmt.Sprintf("sel-r%d-", r), 10, "1", sel, false},
			{fmt.Sprintf("gated-r%d-", r), 10, "10m", nil, true},
			{fmt.Sprintf("small-r%d-a-", r), 100, "10m", nil, false},
		} {
			if err := s.createPods(ctx, c.prefix, c.n, c.cpu, c.sel, c.gated); err != nil {
				return err
			}
		}
		return nil
	}},
	{2 * time.Second, "burst", func(ctx context.Context, s *scenario, r int) error {
		return s.createPods(ctx, fmt.Sprintf("small-r%d-b-", r), 100, "10m", nil, false)
	}},
	{4 * time.Second, "pool node (NodeAdd for sel)", func(ctx context.Context, s *scenario, r int) error {
		return s.addNode(ctx, fmt.Sprintf("pool-r%d", r), "4", map[string]string{"schedq.test/pool": fmt.Sprintf("r%d", r)})
	}},
	{6 * time.Second, "half the gates removed", func(ctx context.Context, s *scenario, r int) error {
		return s.ungate(ctx, fmt.Sprintf("gated-r%d-", r), 0, 5)
	}},
	{9 * time.Second, "burst, then an 8-CPU node (NodeAdd for big)", func(ctx context.Context, s *scenario, r int) error {
		if err := s.createPods(ctx, fmt.Sprintf("small-r%d-c-", r), 100, "10m", nil, false); err != nil {
			return err
		}
		return s.addNode(ctx, fmt.Sprintf("wide-r%d", r), "8", nil)
	}},
	{11 * time.Second, "a 1-CPU node (NodeAdd that fits no big pod)", func(ctx context.Context, s *scenario, r int) error {
		return s.addNode(ctx, fmt.Sprintf("tiny-r%d", r), "1", nil)
	}},
	{13 * time.Second, "half the round's bound small pods deleted", func(ctx context.Context, s *scenario, r int) error {
		return s.deleteBound(ctx, fmt.Sprintf("small-r%d-a-", r))
	}},
	{14 * time.Second, "burst", func(ctx context.Context, s *scenario, r int) error {
		return s.createPods(ctx, fmt.Sprintf("small-r%d-d-", r), 100, "10m", nil, false)
	}},
	{16 * time.Second, "the other gates removed", func(ctx context.Context, s *scenario, r int) error {
		return s.ungate(ctx, fmt.Sprintf("gated-r%d-", r), 5, 10)
	}},
}

type scenario struct {
	client kubernetes.Interface
	log    func(format string, args ...any)
	// parallel is how many creates are under way at once; 0 means 8.
	parallel int
	// rng varies the numbers and times of a seeded run; nil: none vary.
	rng *rand.Rand
}

// seeded returns a scenario whose numbers and times the seed varies.
func seeded(client kubernetes.Interface, log func(string, ...any), seed uint64) *scenario {
	return &scenario{client: client, log: log, rng: rand.New(rand.NewPCG(seed, 0x5c4ed9))}
}

// vary returns n changed by up to ±frac of itself, at random.
func (s *scenario) vary(n int, frac float64) int {
	if s.rng == nil || n == 0 {
		return n
	}
	d := int(float64(n) * frac)
	return n - d + s.rng.IntN(2*d+1)
}

// jitter returns d changed by up to ±j, at random.
func (s *scenario) jitter(d, j time.Duration) time.Duration {
	if s.rng == nil || j == 0 {
		return d
	}
	return d - j + time.Duration(s.rng.Int64N(int64(2*j)+1))
}

// rounds plays rounds until d has passed (at least one round), then waits
// for the last round to end. A seed moves each step by up to half a second.
func (s *scenario) rounds(ctx context.Context, d time.Duration) error {
	begin := time.Now()
	for r := 0; r == 0 || time.Since(begin)+roundLen <= d; r++ {
		start := begin.Add(time.Duration(r) * roundLen)
		for _, st := range roundSteps {
			at := st.at
			if at > 0 {
				at = s.jitter(at, 500*time.Millisecond)
			}
			if err := sleepUntil(ctx, start.Add(at)); err != nil {
				return err
			}
			t := time.Now()
			if err := st.do(ctx, s, r); err != nil {
				return fmt.Errorf("round %d, %s: %w", r, st.name, err)
			}
			s.log("round %d +%v: %s (%v)", r, st.at, st.name, time.Since(t).Round(time.Millisecond))
		}
		if err := sleepUntil(ctx, start.Add(roundLen)); err != nil {
			return err
		}
	}
	return nil
}

func sleepUntil(ctx context.Context, t time.Time) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Until(t)):
		return nil
	}
}

// createPods creates n pods named prefix0, prefix1 …, s.parallel at a time.
func (s *scenario) createPods(ctx context.Context, prefix string, n int, cpu string, sel map[string]string, gated bool) error {
	var wg sync.WaitGroup
	sem := make(chan struct{}, cmp.Or(s.parallel, 8))
	errs := make([]error, n)
	for i := range n {
		p := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s%d", prefix, i), Namespace: ns},
			Spec: v1.PodSpec{
				NodeSelector: sel,
				Containers: []v1.Container{{
					Name: "pause", Image: "registry.k8s.io/pause:3.10",
					Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}},
				}},
			},
		}
		if gated {
			p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "schedq.test/hold"}}
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			_, errs[i] = s.client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (s *scenario) addNode(ctx context.Context, name, cpu string, labels map[string]string) error {
	n := embedded.FakeNode(name)
	for k, v := range labels {
		n.Labels[k] = v
	}
	q := resource.MustParse(cpu)
	n.Status.Capacity[v1.ResourceCPU] = q
	n.Status.Allocatable[v1.ResourceCPU] = q
	return embedded.CreateNodes(ctx, s.client, n)
}

func (s *scenario) ungate(ctx context.Context, prefix string, from, to int) error {
	patch := []byte(`{"spec":{"schedulingGates":null}}`)
	for i := from; i < to; i++ {
		if _, err := s.client.CoreV1().Pods(ns).Patch(ctx, fmt.Sprintf("%s%d", prefix, i), types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// deleteBound deletes the bound pods whose names start with prefix, eight
// at a time, as a controller scaling down does. Each deletion is an
// AssignedPodDelete that explain cannot see (the pod is gone); a pod that
// fails while one is in flight goes to backoffQ instead of
// unschedulablePods. Deleting one by one on a slow API server would spread
// that coin toss over seconds.
func (s *scenario) deleteBound(ctx context.Context, prefix string) error {
	pods, err := s.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	var names []string
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Name, prefix) && p.Spec.NodeName != "" {
			names = append(names, p.Name)
		}
	}
	return s.deleteNames(ctx, names)
}

// deleteNames deletes the pods, eight at a time.
func (s *scenario) deleteNames(ctx context.Context, names []string) error {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	errs := make([]error, len(names))
	for i, name := range names {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = s.client.CoreV1().Pods(ns).Delete(ctx, name, *metav1.NewDeleteOptions(0))
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// denyBinding makes every binding of a pod whose name starts with prefix
// fail: the failure has no rejecting plugin, so the pod goes to the error
// backoff.
func denyBinding(ctx context.Context, client kubernetes.Interface, prefix string) error {
	return embedded.DenyBinding(ctx, client, "deny-bind", prefix, "binding denied by the accuracy test", ns)
}

// waitFor polls cond until it returns "" or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, cond func() string) {
	t.Helper()
	testsupport.Eventually(t, timeout, 50*time.Millisecond, cond)
}

// burst is the scenario a user meets when a job floods the scheduler: 30
// err- pods whose bindings are denied, then a burst of 1,500 pods that ask
// for little (10m CPU) onto four nodes of 110 pods each. Some 440 are bound;
// the rest are rejected by NodeResourcesFit (Too many pods) and parked, and
// every binding failure of an err- pod (an AssignedPodDelete for the
// scheduler) moves them all out of unschedulablePods again, while the burst
// still waits in activeQ. Every 30 s, 100 of the bound pods are deleted, so
// that as many parked ones are bound. A seed varies the counts by up to 10%
// (the deletions by 20%) and the times by up to 3 s.
func (s *scenario) burst(ctx context.Context, d time.Duration) error {
	denied, burst := s.vary(30, 0.1), s.vary(1500, 0.1)
	begin := time.Now()
	if err := s.createPods(ctx, denyPrefix+"burst-", denied, "100m", nil, false); err != nil {
		return err
	}
	s.log("+%v: %d %sburst pods (bindings denied)", time.Since(begin).Round(time.Millisecond), denied, denyPrefix)
	fast := *s
	fast.parallel = 32
	if err := fast.createPods(ctx, "burst-", burst, "10m", nil, false); err != nil {
		return err
	}
	s.log("+%v: %d burst pods created", time.Since(begin).Round(time.Millisecond), burst)
	for next := s.jitter(30*time.Second, 3*time.Second); next <= d; next += s.jitter(30*time.Second, 3*time.Second) {
		if err := sleepUntil(ctx, begin.Add(next)); err != nil {
			return err
		}
		n, err := s.deleteSomeBound(ctx, "burst-", s.vary(100, 0.2))
		if err != nil {
			return err
		}
		s.log("+%v: %d bound burst pods deleted", time.Since(begin).Round(time.Millisecond), n)
	}
	return sleepUntil(ctx, begin.Add(d))
}

// churn is the scenario of a controller that keeps replacing a pod beside
// pods that cannot be scheduled: 200 fail- pods ask for 6 CPUs, more than
// any node has, and a churn pod is deleted and created again every 500 ms.
// Each deletion of the bound churn pod is an AssignedPodDelete that moves
// all 200 out of unschedulablePods (NodeResourcesFit's hint answers Queue
// for a deleted pod that requested CPU), so they are retried over and over,
// and their event series hide every failure after the third. A seed varies
// the count by up to 10% and the period by up to 100 ms.
func (s *scenario) churn(ctx context.Context, d time.Duration) error {
	failing, period := s.vary(200, 0.1), s.jitter(500*time.Millisecond, 100*time.Millisecond)
	begin := time.Now()
	if err := s.createPods(ctx, "fail-", failing, "6", nil, false); err != nil {
		return err
	}
	s.log("+%v: %d fail pods; the churn pod is replaced every %v", time.Since(begin).Round(time.Millisecond), failing, period)
	const name = "churn-0"
	replaced := 0
	for tick := time.Duration(0); tick < d; tick += period {
		if err := sleepUntil(ctx, begin.Add(tick)); err != nil {
			return err
		}
		err := s.client.CoreV1().Pods(ns).Delete(ctx, name, *metav1.NewDeleteOptions(0))
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if err := s.createPods(ctx, "churn-", 1, "100m", nil, false); err != nil {
			return err
		}
		replaced++
	}
	s.log("+%v: the churn pod was created %d times", time.Since(begin).Round(time.Millisecond), replaced)
	return nil
}

// deleteSomeBound deletes up to n bound pods whose names start with prefix,
// eight at a time, and returns how many it deleted.
func (s *scenario) deleteSomeBound(ctx context.Context, prefix string, n int) (int, error) {
	pods, err := s.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName!="})
	if err != nil {
		return 0, err
	}
	var names []string
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Name, prefix) && len(names) < n {
			names = append(names, p.Name)
		}
	}
	return len(names), s.deleteNames(ctx, names)
}
