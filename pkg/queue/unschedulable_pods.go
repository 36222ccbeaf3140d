package queue

// unschedulablePods holds pods that wait for a cluster event (or the leftover
// flush), and gated pods. Upstream keeps a map and walks it in Go's random
// order; this one walks in a deterministic order (a slice with swap-remove),
// which only matters for pods that tie in every ordering.
type unschedulablePods struct {
	index map[string]int
	pods  []*QueuedPodInfo

	unschedulableRecorder, gatedRecorder MetricRecorder
	metrics                              Metrics
}

func newUnschedulablePods(metrics Metrics) *unschedulablePods {
	return &unschedulablePods{
		index:                 map[string]int{},
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
	k := p.key()
	if i, ok := u.index[k]; ok {
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
	u.index[k] = len(u.pods)
	u.pods = append(u.pods, p)
}

// delete removes the pod; gated says which gauge to decrement.
func (u *unschedulablePods) delete(pod *Pod, gated bool) {
	k := pod.Key()
	i, ok := u.index[k]
	if !ok {
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
		u.index[u.pods[i].key()] = i
	}
	u.pods[last] = nil
	u.pods = u.pods[:last]
	delete(u.index, k)
}

func (u *unschedulablePods) get(key string) *QueuedPodInfo {
	if i, ok := u.index[key]; ok {
		return u.pods[i]
	}
	return nil
}

func (u *unschedulablePods) len() int { return len(u.pods) }
