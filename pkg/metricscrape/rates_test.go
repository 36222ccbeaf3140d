package metricscrape

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNewRates(t *testing.T) {
	t0 := time.Unix(1000, 0)
	snap := func(at time.Duration, incoming map[QueueEvent]float64, attempts map[string]float64) *Snapshot {
		return &Snapshot{Time: t0.Add(at), Incoming: incoming, Attempts: attempts}
	}
	pop := QueueEvent{QueueActive, EventPopFromBackoffQ}
	nodeAdd := QueueEvent{QueueBackoff, "NodeAdd"}
	tests := []struct {
		name      string
		prev, cur *Snapshot
		want      *Rates
		wantErr   bool
	}{
		{
			name: "increase over two seconds",
			prev: snap(0, map[QueueEvent]float64{pop: 10}, map[string]float64{ResultScheduled: 100}),
			cur:  snap(2*time.Second, map[QueueEvent]float64{pop: 14, nodeAdd: 6}, map[string]float64{ResultScheduled: 101, ResultError: 1}),
			want: &Rates{Window: 2 * time.Second,
				Incoming: map[QueueEvent]float64{pop: 2, nodeAdd: 3},
				Attempts: map[string]float64{ResultScheduled: 0.5, ResultError: 0.5}},
		},
		{
			name: "counter reset counts from zero",
			prev: snap(0, map[QueueEvent]float64{pop: 50}, nil),
			cur:  snap(time.Second, map[QueueEvent]float64{pop: 4}, nil),
			want: &Rates{Window: time.Second, Incoming: map[QueueEvent]float64{pop: 4}, Attempts: map[string]float64{}, Reset: true},
		},
		{
			name: "vanished series is a reset",
			prev: snap(0, map[QueueEvent]float64{pop: 50}, nil),
			cur:  snap(time.Second, map[QueueEvent]float64{}, nil),
			want: &Rates{Window: time.Second, Incoming: map[QueueEvent]float64{}, Attempts: map[string]float64{}, Reset: true},
		},
		{
			name:    "same instant",
			prev:    snap(0, nil, nil),
			cur:     snap(0, nil, nil),
			wantErr: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NewRates(tc.prev, tc.cur)
			if tc.wantErr {
				if err == nil {
					t.Fatal("want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want, +got):\n%s", diff)
			}
		})
	}
}

func TestRates_helpers(t *testing.T) {
	r := &Rates{
		Incoming: map[QueueEvent]float64{{QueueActive, "NodeAdd"}: 1, {QueueBackoff, "NodeAdd"}: 2, {QueueActive, EventPopFromBackoffQ}: 5},
		Attempts: map[string]float64{ResultScheduled: 1, ResultUnschedulable: 2.5},
	}
	if got := r.IncomingForEvent("NodeAdd"); got != 3 {
		t.Errorf("IncomingForEvent(NodeAdd) = %v, want 3", got)
	}
	if got := r.AttemptsTotal(); got != 3.5 {
		t.Errorf("AttemptsTotal() = %v, want 3.5", got)
	}
}
