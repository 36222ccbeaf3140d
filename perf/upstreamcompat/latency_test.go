package upstreamcompat

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// latencies records, from its own informer, when each pod became ready to
// schedule (created, or its last scheduling gate removed) and when it was
// seen bound, and when nodes were added, so
// that the observer can report per-pod latency per namespace (upstream's
// harness has only per-second throughput and a barrier that polls once a
// second). Times are this process' clock at the informer event, so both
// ends carry the same watch delay.
type latencies struct {
	factory informers.SharedInformerFactory

	mu    sync.Mutex
	pods  map[types.UID]*podTimes
	nodes []time.Time // non-initial node adds, in arrival order
	// createNodesDone are the times upstream's NodeUpdateFn ran: each
	// createNodes op had created all its nodes by then.
	createNodesDone []time.Time
}

type podTimes struct {
	namespace string
	// ready is when the pod became schedulable: when it was created, or
	// when its last scheduling gate was removed. Zero if that happened
	// before the informer started.
	ready time.Time
	bound time.Time
}

// startLatencies starts the informer; it stops when stop is closed.
func startLatencies(client clientset.Interface, stop <-chan struct{}) *latencies {
	l := &latencies{
		factory: informers.NewSharedInformerFactory(client, 0),
		pods:    map[types.UID]*podTimes{},
	}
	_, _ = l.factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			pod, ok := obj.(*v1.Pod)
			if !ok {
				return
			}
			now := time.Now()
			l.mu.Lock()
			defer l.mu.Unlock()
			pt := &podTimes{namespace: pod.Namespace}
			if !initial && pod.Spec.NodeName == "" && len(pod.Spec.SchedulingGates) == 0 {
				pt.ready = now
			}
			if !initial && pod.Spec.NodeName != "" {
				pt.bound = now
			}
			l.pods[pod.UID] = pt
		},
		UpdateFunc: func(oldObj, newObj any) {
			oldPod, ok1 := oldObj.(*v1.Pod)
			newPod, ok2 := newObj.(*v1.Pod)
			if !ok1 || !ok2 || oldPod.Spec.NodeName != "" {
				return
			}
			now := time.Now()
			l.mu.Lock()
			defer l.mu.Unlock()
			pt := l.pods[newPod.UID]
			if pt == nil {
				return
			}
			if len(oldPod.Spec.SchedulingGates) > 0 && len(newPod.Spec.SchedulingGates) == 0 {
				pt.ready = now
			}
			if newPod.Spec.NodeName != "" && pt.bound.IsZero() {
				pt.bound = now
			}
		},
	})
	_, _ = l.factory.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(_ any, initial bool) {
			if initial {
				return
			}
			now := time.Now()
			l.mu.Lock()
			defer l.mu.Unlock()
			l.nodes = append(l.nodes, now)
		},
	})
	l.factory.Start(stop)
	l.factory.WaitForCacheSync(stop)
	return l
}

func (l *latencies) createNodesRan(at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.createNodesDone = append(l.createNodesDone, at)
}

// shutdown waits for the informer's goroutines; call it after stop closed.
func (l *latencies) shutdown() { l.factory.Shutdown() }

// lastNodeEvent is when the workload's last createNodes began to add nodes:
// the first node add seen since the previous createNodes finished, or, if
// the informer missed them (it starts at the first createNodes), that op's
// end.
func (l *latencies) lastNodeEvent() (time.Time, bool) {
	if len(l.createNodesDone) == 0 {
		return time.Time{}, false
	}
	end := l.createNodesDone[len(l.createNodesDone)-1]
	var prev time.Time
	if n := len(l.createNodesDone); n > 1 {
		prev = l.createNodesDone[n-2]
	}
	for _, t := range l.nodes {
		if t.After(prev) && !t.After(end) {
			return t, true
		}
	}
	return end, true
}

// report is one line per namespace with pods that got bound: the latency
// from ready (created, or ungated) to bound, and, for pods ready before the
// last createNodes began and bound after it, the time from that event to
// bound (the drain).
func (l *latencies) report() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	event, haveEvent := l.lastNodeEvent()
	type nsTimes struct{ sinceReady, sinceEvent []time.Duration }
	byNS := map[string]*nsTimes{}
	for _, pt := range l.pods {
		if pt.bound.IsZero() {
			continue
		}
		ns := byNS[pt.namespace]
		if ns == nil {
			ns = &nsTimes{}
			byNS[pt.namespace] = ns
		}
		if !pt.ready.IsZero() {
			ns.sinceReady = append(ns.sinceReady, pt.bound.Sub(pt.ready))
		}
		if haveEvent && pt.bound.After(event) && (pt.ready.IsZero() || pt.ready.Before(event)) {
			ns.sinceEvent = append(ns.sinceEvent, pt.bound.Sub(event))
		}
	}
	names := make([]string, 0, len(byNS))
	for ns := range byNS {
		names = append(names, ns)
	}
	sort.Strings(names)
	var lines []string
	for _, name := range names {
		ns := byNS[name]
		var parts []string
		if len(ns.sinceReady) > 0 {
			parts = append(parts, "ready→bound "+percentiles(ns.sinceReady))
		}
		if len(ns.sinceEvent) > 0 {
			parts = append(parts, "last NodeAdd→bound "+percentiles(ns.sinceEvent))
		}
		if len(parts) > 0 {
			lines = append(lines, fmt.Sprintf("namespace %s: %s", name, strings.Join(parts, "; ")))
		}
	}
	return lines
}

// percentiles formats n, p50, p90, p99 and max, in milliseconds.
func percentiles(ds []time.Duration) string {
	slices.Sort(ds)
	at := func(p float64) float64 { // upstream's rule: element ceil(n·p)−1
		i := int(math.Ceil(float64(len(ds))*p)) - 1
		i = max(0, min(i, len(ds)-1))
		return float64(ds[i].Microseconds()) / 1000
	}
	return fmt.Sprintf("n=%d p50=%.0fms p90=%.0fms p99=%.0fms max=%.0fms", len(ds), at(0.5), at(0.9), at(0.99), at(1))
}
