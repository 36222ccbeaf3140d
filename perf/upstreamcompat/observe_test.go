package upstreamcompat

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	v1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler"
	internalqueue "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	schedperf "k8s.io/kubernetes/test/integration/scheduler_perf"
	"k8s.io/kubernetes/test/utils/client-go/ktesting"
)

const (
	// sampleInterval is how often the observer reads the queue: the
	// lengths of its sub-queues, the incoming-pods counters and, only while
	// the queue looks stuck, each backoffQ pod's record.
	sampleInterval = 20 * time.Millisecond
	// stallAfter is how long activeQ may stay empty, with nothing in
	// flight and a pod in podBackoffQ, before the observer reports a stall:
	// with SchedulerPopFromBackoffQ on, Pop hands out backoffQ's head as
	// soon as activeQ is empty, so anything beyond a few milliseconds is
	// a missed wakeup (kubernetes#130976).
	stallAfter = time.Second
)

// observer watches the scheduler of one workload run by upstream's harness.
// It starts in the harness' PreRunFn (before etcd and the scheduler exist),
// begins sampling when it learns the scheduler at the workload's first
// createNodes (the harness' NodeUpdateFn is the only hook that hands it out;
// the incoming counters it reads count from the workload's start all the
// same), and stops in the PreRunFn's cleanup.
type observer struct {
	name           string
	popFromBackoff bool
	start          time.Time
	stopCh         chan struct{}
	done           chan struct{}

	mu    sync.Mutex
	sched *scheduler.Scheduler
	lat   *latencies
	sum   summary
}

// summary is what the observer saw over the whole workload.
type summary struct {
	samples int
	// emptyActiveFullBackoff counts samples in which activeQ was empty and
	// backoffQ was not: the condition KEP-5142 is about.
	emptyActiveFullBackoff int
	maxBackoff             int
	maxUnschedulable       int
	// incoming is queue_incoming_pods_total by "queue/event", at its
	// highest (the harness resets the registry when a workload ends).
	incoming map[string]float64
	stalls   []stall
	// latency is latencies.report: per namespace.
	latency []string
}

// stall is a stretch in which the scheduler did not pop a backoffQ it
// should have popped.
type stall struct {
	at, lasted time.Duration
	backoffQ   int
}

func newObserver(name string, popFromBackoff bool) *observer {
	return &observer{
		name:           name,
		popFromBackoff: popFromBackoff,
		start:          time.Now(),
		stopCh:         make(chan struct{}),
		done:           make(chan struct{}),
		sum:            summary{incoming: map[string]float64{}},
	}
}

// createNodesRan is called after each createNodes op: the first call hands
// over the scheduler and starts the latency informer, which stops with the
// workload's context.
func (o *observer) createNodesRan(tCtx ktesting.TContext, s *scheduler.Scheduler) {
	at := time.Now()
	o.mu.Lock()
	lat := o.lat
	o.mu.Unlock()
	if lat == nil {
		lat = startLatencies(tCtx.Client(), tCtx.Done())
	}
	lat.createNodesRan(at)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lat = lat
	if o.sched == nil {
		o.sched = s
	}
}

func (o *observer) scheduler() *scheduler.Scheduler {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.sched
}

func (o *observer) run() {
	defer close(o.done)
	ticker := time.NewTicker(sampleInterval)
	defer ticker.Stop()
	var suspectSince time.Time
	var suspectBackoff int
	for {
		select {
		case <-o.stopCh:
			return
		case now := <-ticker.C:
			suspect, backoffQ := o.sample()
			switch {
			case suspect && suspectSince.IsZero():
				suspectSince, suspectBackoff = now, backoffQ
			case suspect:
				suspectBackoff = max(suspectBackoff, backoffQ)
			case !suspectSince.IsZero():
				o.endSuspect(suspectSince, now, suspectBackoff)
				suspectSince = time.Time{}
			}
		}
	}
}

func (o *observer) endSuspect(since, now time.Time, backoffQ int) {
	if now.Sub(since) < stallAfter {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sum.stalls = append(o.sum.stalls, stall{at: since.Sub(o.start), lasted: now.Sub(since), backoffQ: backoffQ})
}

// sample reads the queue once, once the scheduler is known (which also
// means its metrics are registered). The queue lengths come from the
// PriorityQueue itself: the harness resets the metrics registry between
// workloads, after which the pending_pods gauges the registry hands out are
// no longer the ones the queue updates. sample reports whether the queue
// looks stalled (only possible with the gate on): activeQ empty, no pod in
// flight, and a pod in podBackoffQ (not the error heap, which Pop never
// reads), together with that podBackoffQ length.
func (o *observer) sample() (suspect bool, backoffQ int) {
	sched := o.scheduler()
	if sched == nil {
		return false, 0
	}
	pq, ok := sched.SchedulingQueue.(*internalqueue.PriorityQueue)
	if !ok {
		return false, 0
	}
	active := len(pq.PodsInActiveQ())
	backoff := pq.PodsInBackoffQ()
	unsched := len(pq.UnschedulablePods())
	inFlight := len(pq.InFlightPods())
	incoming := incomingPods()

	o.mu.Lock()
	s := &o.sum
	s.samples++
	if active == 0 && len(backoff) > 0 {
		s.emptyActiveFullBackoff++
	}
	s.maxBackoff = max(s.maxBackoff, len(backoff))
	s.maxUnschedulable = max(s.maxUnschedulable, unsched)
	for k, v := range incoming {
		s.incoming[k] = max(s.incoming[k], v)
	}
	o.mu.Unlock()

	if !o.popFromBackoff || active > 0 || inFlight > 0 || len(backoff) == 0 {
		return false, 0
	}
	n := 0
	for _, pod := range backoff {
		if pInfo, ok := pq.GetPod(pod.Name, pod.Namespace, pod.Spec.SchedulingGroup); ok && (pInfo.UnschedulablePlugins.Len() > 0 || pInfo.PendingPlugins.Len() > 0) {
			n++
		}
	}
	return n > 0, n
}

// stop ends sampling; the workload's context has been cancelled by then,
// so the latency informer is stopping too.
func (o *observer) stop() summary {
	close(o.stopCh)
	<-o.done
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.lat != nil {
		o.lat.shutdown()
		o.sum.latency = o.lat.report()
	}
	return o.sum
}

// incomingPods reads scheduler_queue_incoming_pods_total by "queue/event".
func incomingPods() map[string]float64 {
	vec := metrics.SchedulerQueueIncomingPods
	if vec == nil || vec.CounterVec == nil {
		return nil
	}
	ch := make(chan prometheus.Metric, 64)
	go func() {
		vec.CounterVec.Collect(ch)
		close(ch)
	}()
	out := map[string]float64{}
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			continue
		}
		var queue, event string
		for _, l := range pb.GetLabel() {
			switch l.GetName() {
			case "queue":
				queue = l.GetValue()
			case "event":
				event = l.GetValue()
			}
		}
		out[queue+"/"+event] += pb.GetCounter().GetValue()
	}
	return out
}

// String is the one-line summary the tests log for each workload.
func (s summary) String() string {
	var b strings.Builder
	attempts := 0.0
	toBackoff := 0.0
	for k, v := range s.incoming {
		if strings.HasPrefix(k, "active/") {
			attempts += v
		}
		if strings.HasPrefix(k, "backoff/") {
			toBackoff += v
		}
	}
	frac := 0.0
	if s.samples > 0 {
		frac = float64(s.emptyActiveFullBackoff) / float64(s.samples)
	}
	fmt.Fprintf(&b, "into activeQ %.0f (PopFromBackoffQ %.0f, BackoffComplete %.0f), into backoffQ %.0f; max backoffQ %d, unschedulablePods %d (with gated); activeQ empty with backoffQ non-empty in %.0f%% of %d samples",
		attempts, s.incoming["active/PopFromBackoffQ"], s.incoming["active/BackoffComplete"], toBackoff,
		s.maxBackoff, s.maxUnschedulable, 100*frac, s.samples)
	if len(s.stalls) == 0 {
		b.WriteString("; no stall")
	}
	for _, st := range s.stalls {
		fmt.Fprintf(&b, "; STALL at +%.1fs for %.1fs with %d pods in podBackoffQ, activeQ empty, nothing in flight", st.at.Seconds(), st.lasted.Seconds(), st.backoffQ)
	}
	return b.String()
}

// incomingDetail lists every non-zero incoming counter, sorted.
func (s summary) incomingDetail() string {
	keys := make([]string, 0, len(s.incoming))
	for k, v := range s.incoming {
		if v > 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%.0f", k, s.incoming[k])
	}
	return strings.Join(parts, " ")
}

// observers hands upstream's harness the hooks that start an observer per
// workload, and keeps what they saw.
type observers struct {
	mu      sync.Mutex
	current *observer
	ran     []string
	reports []string
	stalls  []string
}

func (obs *observers) options() []schedperf.SchedulerPerfOption {
	return []schedperf.SchedulerPerfOption{
		schedperf.WithPreRunFn(func(tCtx ktesting.TContext, w *schedperf.Workload) (func(), error) {
			// The harness has set the workload's gates by now.
			o := newObserver(tCtx.Name(), utilfeature.DefaultFeatureGate.Enabled(features.SchedulerPopFromBackoffQ))
			obs.mu.Lock()
			obs.current = o
			obs.ran = append(obs.ran, w.Name)
			obs.mu.Unlock()
			go o.run()
			return func() {
				s := o.stop()
				obs.mu.Lock()
				defer obs.mu.Unlock()
				r := fmt.Sprintf("%s (SchedulerPopFromBackoffQ=%t): %s\n\tincoming: %s", o.name, o.popFromBackoff, s, s.incomingDetail())
				for _, l := range s.latency {
					r += "\n\t" + l
				}
				obs.reports = append(obs.reports, r)
				if len(s.stalls) > 0 {
					obs.stalls = append(obs.stalls, o.name+": "+s.String())
				}
				obs.current = nil
			}, nil
		}),
		schedperf.WithNodeUpdateFn(func(tCtx ktesting.TContext, s *scheduler.Scheduler, _ *schedperf.Workload, _ *v1.NodeList) error {
			obs.mu.Lock()
			o := obs.current
			obs.mu.Unlock()
			if o != nil {
				o.createNodesRan(tCtx, s)
			}
			return nil
		}),
	}
}

func (obs *observers) workloadsRun() []string {
	obs.mu.Lock()
	defer obs.mu.Unlock()
	return append([]string(nil), obs.ran...)
}

// report is one line per workload run: what the observer saw.
func (obs *observers) report() []string {
	obs.mu.Lock()
	defer obs.mu.Unlock()
	return append([]string(nil), obs.reports...)
}

func (obs *observers) stallsSeen() []string {
	obs.mu.Lock()
	defer obs.mu.Unlock()
	return append([]string(nil), obs.stalls...)
}
