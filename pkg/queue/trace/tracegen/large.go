package tracegen

import "github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace"

// LargeSeed is the seed of the large benchmark traces.
const LargeSeed = 1

// Large returns the options of the large benchmark traces: 1,000,000
// operations over more than 100,000 pods, most scheduled on their first
// attempt, some failing (errors, pending plugins, events during flight), a
// few gated. Shapes:
//   - "churn": pods are scheduled about as fast as they arrive; the queue
//     stays shallow, so per-operation overhead dominates;
//   - "backlog": pods arrive faster than they are scheduled; activeQ grows to
//     about 166,000 pods, so heap depth counts.
func Large(shape string) (Options, bool) {
	w, ok := map[string]Weights{
		"churn":   {Add: 120, Pop: 330, Fail: 100, Done: 330, Event: 10, Activate: 5, Ungate: 5, Delete: 10},
		"backlog": {Add: 200, Pop: 200, Fail: 50, Done: 110, Event: 4, Activate: 5, Ungate: 5, Delete: 5},
	}[shape]
	if !ok {
		return Options{}, false
	}
	return Options{
		Ops:             1_000_000,
		MaxInFlight:     16,
		PopFromBackoffQ: true,
		Config:          &trace.Config{PopFromBackoffQ: true, PodInitialBackoffSeconds: 1, PodMaxBackoffSeconds: 10, PodMaxInUnschedulablePodsSeconds: 300},
		Plugins:         []string{"NodeAffinity", "NodeResourcesFit", "TaintToleration", "VolumeBinding"},
		Gated:           0.02,
		Weights:         &w,
		Time:            &Time{Small: 99, Medium: 1},
	}, true
}

// LargeShapes names the shapes Large knows.
var LargeShapes = []string{"churn", "backlog"}
