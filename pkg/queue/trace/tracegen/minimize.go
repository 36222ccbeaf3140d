package tracegen

import "github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace"

// Minimize shrinks t while fails(t) holds, and returns the smallest trace it
// found: no single operation can be removed from it without fails turning
// false (delta debugging, ddmin). fails must return false for traces that
// are no longer valid — removing an op can, for example, leave a fail of a
// pod that is no longer in flight — typically by replaying the trace through
// the model and returning false on a replay error. t itself is not changed.
func Minimize(t *trace.Trace, fails func(*trace.Trace) bool) *trace.Trace {
	ops := t.Ops()
	try := func(ops []trace.Op) bool {
		renumber(ops)
		return fails(trace.New(t.Config, ops))
	}
	n := 2
	for len(ops) >= 2 {
		chunk := (len(ops) + n - 1) / n
		reduced := false
		for start := 0; start < len(ops); start += chunk {
			end := min(start+chunk, len(ops))
			// The complement: ops without [start, end).
			cand := make([]trace.Op, 0, len(ops)-(end-start))
			cand = append(append(cand, ops[:start]...), ops[end:]...)
			if try(cand) {
				ops = cand
				n = max(n-1, 2)
				reduced = true
				break
			}
		}
		if !reduced {
			if n >= len(ops) {
				break
			}
			n = min(2*n, len(ops))
		}
	}
	renumber(ops)
	return trace.New(t.Config, ops)
}

// renumber sets each op's Line as Encode would write it (header first).
func renumber(ops []trace.Op) {
	for i := range ops {
		ops[i].Line = i + 2
	}
}
