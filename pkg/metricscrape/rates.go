package metricscrape

import (
	"fmt"
	"time"
)

// Rates are the per-second increases of the counters between two snapshots.
type Rates struct {
	// Window is the time between the two snapshots.
	Window time.Duration
	// Incoming is scheduler_queue_incoming_pods_total per second by (queue, event).
	Incoming map[QueueEvent]float64
	// Attempts is scheduler_schedule_attempts_total per second by result.
	Attempts map[string]float64
	// Reset is set when a counter went down between the snapshots: the
	// scheduler restarted, or another one took the lead. Increases are then
	// counted from zero, as PromQL's rate() does.
	Reset bool
}

// NewRates compares two snapshots of the same scheduler, prev taken before
// cur. A series missing from prev counts from zero: kube-scheduler creates a
// labelled counter at its first increment.
func NewRates(prev, cur *Snapshot) (*Rates, error) {
	window := cur.Time.Sub(prev.Time)
	if window <= 0 {
		return nil, fmt.Errorf("snapshots at %s and %s: the second must be later", prev.Time.Format(time.RFC3339Nano), cur.Time.Format(time.RFC3339Nano))
	}
	r := &Rates{Window: window, Incoming: map[QueueEvent]float64{}, Attempts: map[string]float64{}}
	secs := window.Seconds()
	for k, v := range cur.Incoming {
		r.Incoming[k] = r.increase(prev.Incoming[k], v) / secs
	}
	for k, v := range cur.Attempts {
		r.Attempts[k] = r.increase(prev.Attempts[k], v) / secs
	}
	// A series that vanished also means the counters started over.
	for k := range prev.Incoming {
		if _, ok := cur.Incoming[k]; !ok {
			r.Reset = true
		}
	}
	for k := range prev.Attempts {
		if _, ok := cur.Attempts[k]; !ok {
			r.Reset = true
		}
	}
	return r, nil
}

func (r *Rates) increase(prev, cur float64) float64 {
	if cur < prev {
		r.Reset = true
		return cur
	}
	return cur - prev
}

// IncomingForEvent sums the incoming rate of an event over the queues.
func (r *Rates) IncomingForEvent(event string) float64 {
	var n float64
	for k, v := range r.Incoming {
		if k.Event == event {
			n += v
		}
	}
	return n
}

// AttemptsTotal is the attempt rate over all results.
func (r *Rates) AttemptsTotal() float64 {
	var n float64
	for _, v := range r.Attempts {
		n += v
	}
	return n
}
