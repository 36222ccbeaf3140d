package explain

import (
	"sort"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

// Confidence is calibrated: of the answers explain gives with confidence p,
// about p are right. The placement's own odds (the priors fitted to the
// queue counts) are a model's; how often answers at each of its odds were
// right was measured against the scheduler's own queue on training runs
// (perf/explainacc, make explain-calibrate, seeds kept apart from the runs
// the results report), per queue named, and the map from one to the other,
// monotone (isotonic), is fittedCalibration. The other places keep their
// share of what is left.

// CalibrationStep maps the model's odds below Below to the share of answers
// that were right, P.
type CalibrationStep struct {
	Below float64
	P     float64
}

// maxConfidence caps a calibrated confidence: however often an answer was
// right in the training runs, explain reasons from what is visible and
// never claims certainty.
const maxConfidence = 0.99

// calibrate maps raw, the model's odds for an answer naming loc, to the
// calibrated confidence; raw itself where no step was fitted for loc.
func calibrate(table map[string][]CalibrationStep, loc queue.Location, raw float64) float64 {
	steps := table[loc.Word()]
	if len(steps) == 0 {
		return raw
	}
	i := sort.Search(len(steps), func(i int) bool { return raw < steps[i].Below })
	if i == len(steps) {
		i = len(steps) - 1
	}
	return min(steps[i].P, maxConfidence)
}

// calibrateAll rewrites each pending answer's confidence through table,
// and scales its alternatives to share what is left, none above the answer.
func calibrateAll(es []Explanation, table map[string][]CalibrationStep) {
	for i := range es {
		e := &es[i]
		if e.State != StatePending || len(table) == 0 {
			continue
		}
		raw := e.Confidence
		p := round2(calibrate(table, e.Queue, raw))
		e.Confidence = p
		rest := 0.0
		for _, a := range e.Alternatives {
			rest += a.Probability
		}
		alts := e.Alternatives[:0]
		for _, a := range e.Alternatives {
			if rest > 0 {
				a.Probability = round2(min((1-p)*a.Probability/rest, p))
			}
			if a.Probability >= 0.01 {
				alts = append(alts, a)
			}
		}
		e.Alternatives = alts
		if len(alts) == 0 {
			e.Alternatives = nil
		}
	}
}

// FitCalibration fits the calibration map of one queue's answers: raws are
// the model's odds of each answer, right whether it was. The map is
// isotonic (pool adjacent violators over the answers sorted by odds), each
// step's share pulled toward its mean odds as if shrink more answers had
// been right at those odds: a step that rests on few answers stays near
// the model's own.
func FitCalibration(raws []float64, right []bool, shrink float64) []CalibrationStep {
	type block struct {
		lo, hi     float64 // odds covered
		n, correct float64
		sumRaw     float64
	}
	idx := make([]int, len(raws))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return raws[idx[a]] < raws[idx[b]] })
	var blocks []block
	for _, i := range idx {
		c := 0.0
		if right[i] {
			c = 1
		}
		r := raws[i]
		if n := len(blocks); n > 0 && blocks[n-1].hi == r {
			blocks[n-1].n++
			blocks[n-1].correct += c
			blocks[n-1].sumRaw += r
		} else {
			blocks = append(blocks, block{lo: r, hi: r, n: 1, correct: c, sumRaw: r})
		}
		// Pool while the last block's share is below the one before.
		for len(blocks) > 1 {
			a, b := blocks[len(blocks)-2], blocks[len(blocks)-1]
			if a.correct/a.n <= b.correct/b.n {
				break
			}
			blocks = append(blocks[:len(blocks)-2], block{lo: a.lo, hi: b.hi, n: a.n + b.n, correct: a.correct + b.correct, sumRaw: a.sumRaw + b.sumRaw})
		}
	}
	var steps []CalibrationStep
	prev := 0.0
	for i, b := range blocks {
		p := (b.correct + shrink*b.sumRaw/b.n) / (b.n + shrink)
		p = max(p, prev) // shrinking may undo the order by a hair
		prev = p
		below := 2.0 // the last step covers every odds above
		if i+1 < len(blocks) {
			below = (b.hi + blocks[i+1].lo) / 2
		}
		steps = append(steps, CalibrationStep{Below: below, P: p})
	}
	return steps
}
