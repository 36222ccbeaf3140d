package embedded

import (
	"encoding/json"
	"net"
	"net/http"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/kubectl-schedq/kubectl-schedq/perf/groundtruth"
)

// inFlightRecorder remembers the QueuedPodInfo of each pod the scheduler pops,
// so that the ground truth can give the attempts and timestamp of in-flight
// pods too: the queue itself keeps only the *v1.Pod of a pod in flight. It
// wraps Scheduler.NextEntity and changes nothing of what it returns; a popped
// pod group is recorded member by member.
//
// With recordPops it also logs when each pod was popped (Options.RecordPops).
type inFlightRecorder struct {
	sched *scheduler.Scheduler
	mu    sync.Mutex
	pods  map[types.UID]*framework.QueuedPodInfo
	pops  groundtruth.Pops
}

// inFlightPruneAt is the size above which popped records of pods no longer in
// flight are dropped.
const inFlightPruneAt = 1024

func newInFlightRecorder(sched *scheduler.Scheduler, recordPops bool) *inFlightRecorder {
	r := &inFlightRecorder{sched: sched, pods: map[types.UID]*framework.QueuedPodInfo{}}
	if recordPops {
		r.pops = groundtruth.Pops{}
	}
	next := sched.NextEntity
	sched.NextEntity = func(logger klog.Logger) (framework.QueuedEntityInfo, error) {
		entity, err := next(logger)
		if entity != nil {
			now := time.Now()
			entity.ForEachPodInfo(func(pInfo *framework.QueuedPodInfo) bool {
				if pInfo.Pod != nil {
					r.record(pInfo, now)
				}
				return true
			})
		}
		return entity, err
	}
	return r
}

func (r *inFlightRecorder) record(pInfo *framework.QueuedPodInfo, poppedAt time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pods[pInfo.Pod.UID] = pInfo
	if r.pops != nil {
		uid := string(pInfo.Pod.UID)
		r.pops[uid] = append(r.pops[uid], poppedAt.Round(0))
	}
	if len(r.pods) > inFlightPruneAt {
		r.pruneLocked(r.sched.SchedulingQueue.InFlightPods())
	}
}

func (r *inFlightRecorder) pruneLocked(inFlight []*v1.Pod) {
	keep := make(map[types.UID]bool, len(inFlight))
	for _, p := range inFlight {
		keep[p.UID] = true
	}
	for uid := range r.pods {
		if !keep[uid] {
			delete(r.pods, uid)
		}
	}
}

// popLog returns a copy of the pops so far.
func (r *inFlightRecorder) popLog() groundtruth.Pops {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(groundtruth.Pops, len(r.pops))
	for uid, ts := range r.pops {
		out[uid] = append([]time.Time(nil), ts...)
	}
	return out
}

// get returns the popped record of an in-flight pod.
func (r *inFlightRecorder) get(uid types.UID) (*framework.QueuedPodInfo, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.pods[uid]
	return p, ok
}

// podGroupKeyType is fwk.PodGroupKeyType: a PodGroup without a parent is
// its own root entity.
const podGroupKeyType = "podgroup"

// queueSnapshot reads every pod the scheduling queue holds, through the
// queue's own accessors. The sub-queues are read one after the other, not
// atomically: a pod moving meanwhile is reported once, in the first place it
// was seen (in flight, active, backoff, unschedulable, incomplete and pending
// group members, in that order).
func queueSnapshot(sched *scheduler.Scheduler, rec *inFlightRecorder) groundtruth.Queue {
	q := sched.SchedulingQueue
	seen := map[string]bool{}
	out := groundtruth.Queue{Pods: []groundtruth.Pod{}}
	add := func(pod *v1.Pod, name groundtruth.QueueName, pInfo *framework.QueuedPodInfo) {
		key := pod.Namespace + "/" + pod.Name
		if seen[key] {
			return
		}
		seen[key] = true
		gp := groundtruth.Pod{Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID), Queue: name}
		if pInfo != nil {
			gp.Attempts = pInfo.Attempts
			gp.Timestamp = pInfo.Timestamp
			if name == groundtruth.Backoff || name == groundtruth.ErrorBackoff {
				gp.BackoffExpiresAt = pInfo.BackoffExpiration
			}
		}
		out.Pods = append(out.Pods, gp)
	}

	inFlight := q.InFlightPods()
	for _, pod := range inFlight {
		pInfo, _ := rec.get(pod.UID)
		add(pod, groundtruth.InFlight, pInfo)
	}
	for _, pod := range q.PodsInActiveQ() {
		pInfo, _ := q.GetPod(pod.Name, pod.Namespace, pod.Spec.SchedulingGroup)
		add(pod, groundtruth.Active, pInfo)
	}
	for _, pod := range q.PodsInBackoffQ() {
		pInfo, ok := q.GetPod(pod.Name, pod.Namespace, pod.Spec.SchedulingGroup)
		name := groundtruth.Backoff
		// backoffQueue.add puts an entity without rejector plugins into
		// entityErrorBackoffQ. A pod-group member is in its group's entity,
		// which carries plugins of its own (none: a group always backs off
		// in the error heap), not the member's.
		var entity interface {
			GetUnschedulablePlugins() sets.Set[string]
			GetPendingPlugins() sets.Set[string]
		}
		if ok {
			entity = pInfo
		}
		if g := pod.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil {
			if pg, found := q.GetPodGroup(*g.PodGroupName, pod.Namespace, podGroupKeyType); found {
				entity, ok = pg, true
			}
		}
		if ok && entity.GetUnschedulablePlugins().Len() == 0 && entity.GetPendingPlugins().Len() == 0 {
			name = groundtruth.ErrorBackoff
		}
		add(pod, name, pInfo)
	}
	for _, pod := range q.UnschedulablePods() {
		pInfo, ok := q.GetPod(pod.Name, pod.Namespace, pod.Spec.SchedulingGroup)
		name := groundtruth.Unschedulable
		if ok && pInfo.Gated() {
			name = groundtruth.Gated
		}
		add(pod, name, pInfo)
	}

	// Members outside any entity: their PodGroup not observed yet, or
	// waiting for their group's next cycle.
	for _, pod := range q.IncompletePodGroupPodsPods() {
		pInfo, _ := q.GetPod(pod.Name, pod.Namespace, pod.Spec.SchedulingGroup)
		add(pod, groundtruth.Incomplete, pInfo)
	}
	for _, pod := range q.PendingPodGroupPods() {
		pInfo, _ := q.GetPod(pod.Name, pod.Namespace, pod.Spec.SchedulingGroup)
		add(pod, groundtruth.Pending, pInfo)
	}

	rec.mu.Lock()
	if len(rec.pods) > len(inFlight) {
		rec.pruneLocked(q.InFlightPods())
	}
	rec.mu.Unlock()
	out.Sort()
	return out
}

// queueServer serves the ground truth on a loopback port.
type queueServer struct {
	srv  *http.Server
	done chan struct{}
}

func serveQueue(ln net.Listener, snapshot func() groundtruth.Queue, pops func() groundtruth.Pops) *queueServer {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+groundtruth.Path, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(snapshot())
	})
	mux.HandleFunc("GET "+groundtruth.PopsPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(pops())
	})
	s := &queueServer{srv: &http.Server{Handler: mux}, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s
}

func (s *queueServer) stop() {
	s.srv.Close()
	<-s.done
}
