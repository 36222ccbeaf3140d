package explain

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

// TestFitCalibration: the map is monotone in the model's odds (pooling the
// odds whose answers were right less often than lower odds'), and a step
// resting on few answers stays near the model's own odds.
func TestFitCalibration(t *testing.T) {
	var raws []float64
	var right []bool
	add := func(raw float64, n, correct int) {
		for i := 0; i < n; i++ {
			raws = append(raws, raw)
			right = append(right, i < correct)
		}
	}
	add(0.5, 100, 40)   // right 40%
	add(0.6, 100, 30)   // 30%: below 0.5's, pooled with it (35%)
	add(0.8, 1000, 990) // 99%
	steps := FitCalibration(raws, right, 0)
	want := []CalibrationStep{{Below: 0.7, P: 0.35}, {Below: 2, P: 0.99}}
	if diff := cmp.Diff(want, steps, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })); diff != "" {
		t.Errorf("steps (-want, +got):\n%s", diff)
	}
	// Shrunk by 20 answers at the odds: (70 + 20·0.55) / 220.
	if got := FitCalibration(raws, right, 20)[0].P; math.Abs(got-81.0/220) > 1e-9 {
		t.Errorf("shrunk first step %v, want %v", got, 81.0/220)
	}
}

// TestCalibrateAll: the answer's confidence goes through the table of its
// queue, capped at maxConfidence, and the alternatives share what is left,
// none above the answer; a queue without a table keeps the model's odds.
func TestCalibrateAll(t *testing.T) {
	table := map[string][]CalibrationStep{
		"unschedulablePods": {{Below: 0.7, P: 0.5}, {Below: 2, P: 1}},
		"backoffQ":          {{Below: 2, P: 0.3}},
	}
	es := []Explanation{
		{Name: "sure", State: StatePending, Queue: queue.LocationUnschedulable, Confidence: 0.9,
			Alternatives: []Alternative{{queue.LocationBackoff, 0.08}, {queue.LocationActive, 0.02}}},
		{Name: "unsure", State: StatePending, Queue: queue.LocationUnschedulable, Confidence: 0.6,
			Alternatives: []Alternative{{queue.LocationBackoff, 0.4}}},
		{Name: "rarely right", State: StatePending, Queue: queue.LocationBackoff, Confidence: 0.7,
			Alternatives: []Alternative{{queue.LocationUnschedulable, 0.3}}},
		{Name: "untabled", State: StatePending, Queue: queue.LocationGated, Confidence: 0.99},
		{Name: "bound", State: StateBound},
	}
	calibrateAll(es, table)
	want := []Explanation{
		{Name: "sure", State: StatePending, Queue: queue.LocationUnschedulable, Confidence: 0.99,
			Alternatives: []Alternative{{queue.LocationBackoff, 0.01}}},
		{Name: "unsure", State: StatePending, Queue: queue.LocationUnschedulable, Confidence: 0.5,
			Alternatives: []Alternative{{queue.LocationBackoff, 0.5}}},
		{Name: "rarely right", State: StatePending, Queue: queue.LocationBackoff, Confidence: 0.3,
			Alternatives: []Alternative{{queue.LocationUnschedulable, 0.3}}},
		{Name: "untabled", State: StatePending, Queue: queue.LocationGated, Confidence: 0.99},
		{Name: "bound", State: StateBound},
	}
	if diff := cmp.Diff(want, es); diff != "" {
		t.Errorf("(-want, +got):\n%s", diff)
	}
}
