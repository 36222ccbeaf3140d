package queue

import "github.com/kubectl-schedq/kubectl-schedq/pkg/queue/internal/heap"

// unschedulablePods holds pods that wait for a cluster event (or the leftover
// flush), and gated pods. Upstream keeps a map and walks it in Go's random
// order; this one walks in a deterministic order (a slice with swap-remove),
// which only matters for pods that tie in every ordering. A pod that a move
// puts straight back keeps its place (keepPlace), so that the leftover
// flush's re-checks of gated pods leave the order as it was, whether they
// are run one by one or counted at once (RecheckSettledGated).
type unschedulablePods struct {
	// pos holds the pods' indices in pods, under tagUnschedulablePods.
	pos  *heap.Positions
	pods []*QueuedPodInfo

	unschedulableRecorder, gatedRecorder MetricRecorder
	metrics                              Metrics
}

func newUnschedulablePods(metrics Metrics, pos *heap.Positions) *unschedulablePods {
	return &unschedulablePods{
		pos:                   pos,
		unschedulableRecorder: metrics.Pending(LabelUnschedulable),
		gatedRecorder:         metrics.Pending(LabelGated),
		metrics:               metrics,
	}
}

// addOrUpdate inserts or replaces the pod. A new key counts in
// scheduler_queue_incoming_pods_total{unschedulable, event} and in the gauge
// of its gated state; an existing key moves one unit between the gauges when
// its gated state changed since gatedBefore (v1.36).
func (u *unschedulablePods) addOrUpdate(p *QueuedPodInfo, gatedBefore bool, event string) {
	if i := u.index(p.id); i >= 0 {
		if gated := p.Gated(); gated != gatedBefore {
			for n := p.Size(); n > 0; n-- {
				if gatedBefore {
					u.gatedRecorder.Dec()
					u.unschedulableRecorder.Inc()
				} else {
					u.gatedRecorder.Inc()
					u.unschedulableRecorder.Dec()
				}
			}
		}
		u.pods[i] = p
		return
	}
	rec := u.unschedulableRecorder
	if p.Gated() {
		rec = u.gatedRecorder
	}
	for n := p.Size(); n > 0; n-- {
		rec.Inc()
	}
	incoming(u.metrics, p, LabelUnschedulable, event)
	u.pos.Claim(p.id)
	u.pods = append(u.pods, p)
	u.pos.Set(p.id, tagUnschedulablePods, len(u.pods)-1)
}

func (u *unschedulablePods) index(id int32) int { return u.pos.Get(id, tagUnschedulablePods) }

// delete removes the pod with this ID; gated says which gauge to decrement.
func (u *unschedulablePods) delete(id int32, gated bool) {
	i := u.index(id)
	if i < 0 {
		return
	}
	rec := u.unschedulableRecorder
	if gated {
		rec = u.gatedRecorder
	}
	for n := u.pods[i].Size(); n > 0; n-- {
		rec.Dec()
	}
	last := len(u.pods) - 1
	if i != last {
		u.pods[i] = u.pods[last]
		u.pos.Set(u.pods[i].id, tagUnschedulablePods, i)
	}
	u.pods[last] = nil
	u.pods = u.pods[:last]
	u.pos.Clear(id)
}

// keepPlace puts the pod with this ID, which delete took from index i and
// addOrUpdate appended since, back at i: the order is then what it was
// before both. A pod not at the end is left where it is.
func (u *unschedulablePods) keepPlace(id int32, i int) {
	last := len(u.pods) - 1
	if i < 0 || i >= last || u.index(id) != last {
		return
	}
	u.pods[i], u.pods[last] = u.pods[last], u.pods[i]
	u.pos.Set(u.pods[i].id, tagUnschedulablePods, i)
	u.pos.Set(u.pods[last].id, tagUnschedulablePods, last)
}

func (u *unschedulablePods) get(id int32) *QueuedPodInfo {
	if i := u.index(id); i >= 0 {
		return u.pods[i]
	}
	return nil
}

func (u *unschedulablePods) len() int { return len(u.pods) }
