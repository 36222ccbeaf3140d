package queue

// unschedulablePods holds pods that wait for a cluster event (or the leftover
// flush), and gated pods. Upstream keeps a map and walks it in Go's random
// order; this one walks in a deterministic order (a slice with swap-remove),
// which only matters for pods that tie in every ordering.
type unschedulablePods struct {
	// slot[id] is the pod's index in pods plus one; 0 means absent.
	slot []int32
	pods []*QueuedPodInfo

	unschedulableRecorder, gatedRecorder MetricRecorder
	metrics                              Metrics
}

func newUnschedulablePods(metrics Metrics) *unschedulablePods {
	return &unschedulablePods{
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
			if gatedBefore {
				u.gatedRecorder.Dec()
				u.unschedulableRecorder.Inc()
			} else {
				u.gatedRecorder.Inc()
				u.unschedulableRecorder.Dec()
			}
		}
		u.pods[i] = p
		return
	}
	if p.Gated() {
		u.gatedRecorder.Inc()
	} else {
		u.unschedulableRecorder.Inc()
	}
	u.metrics.Incoming(LabelUnschedulable, event)
	if n := int(p.id) + 1; n > len(u.slot) {
		u.slot = append(u.slot, make([]int32, max(n-len(u.slot), len(u.slot)/2))...)
	}
	u.pods = append(u.pods, p)
	u.slot[p.id] = int32(len(u.pods))
}

// reserveIDs makes room for IDs below n.
func (u *unschedulablePods) reserveIDs(n int) {
	if n > len(u.slot) {
		u.slot = append(u.slot, make([]int32, n-len(u.slot))...)
	}
}

func (u *unschedulablePods) index(id int32) int {
	if int(id) >= len(u.slot) {
		return -1
	}
	return int(u.slot[id]) - 1
}

// delete removes the pod with this ID; gated says which gauge to decrement.
func (u *unschedulablePods) delete(id int32, gated bool) {
	i := u.index(id)
	if i < 0 {
		return
	}
	if gated {
		u.gatedRecorder.Dec()
	} else {
		u.unschedulableRecorder.Dec()
	}
	last := len(u.pods) - 1
	if i != last {
		u.pods[i] = u.pods[last]
		u.slot[u.pods[i].id] = int32(i + 1)
	}
	u.pods[last] = nil
	u.pods = u.pods[:last]
	u.slot[id] = 0
}

func (u *unschedulablePods) get(id int32) *QueuedPodInfo {
	if i := u.index(id); i >= 0 {
		return u.pods[i]
	}
	return nil
}

func (u *unschedulablePods) len() int { return len(u.pods) }
