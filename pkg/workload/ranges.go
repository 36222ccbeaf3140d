package workload

import (
	"fmt"
	"math"
	"time"
)

// MaxCount bounds every count a workload gives (nodes, pods, namespaces):
// far above any workload upstream runs, and low enough that no count
// overflows what the runner adds up.
const MaxCount = math.MaxInt32

// countInRange checks a count bound from a param: a whole number from 0 to
// MaxCount (JSON numbers arrive as float64).
func countInRange(field, ref, key string, f float64) (int, error) {
	if math.IsNaN(f) || f < 0 || f > MaxCount {
		return 0, fmt.Errorf("%s %q: param %q is %g, out of range: want a count from 0 to %d", field, ref, key, f, MaxCount)
	}
	return int(f), nil
}

// durationInRange checks a duration bound from a param: 0 or more.
func durationInRange(field, ref, key string, d time.Duration) (time.Duration, error) {
	if d < 0 {
		return 0, fmt.Errorf("%s %q: param %q is %s, out of range: want a duration of 0s or more", field, ref, key, d)
	}
	return d, nil
}
