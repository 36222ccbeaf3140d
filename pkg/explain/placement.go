package explain

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

// The places a pod rejected by plugins, or backing off after errors, may be.
const (
	locUnschedulable = iota
	locBackoff       // backoffQ, or errorBackoffQ for an error pod
	locActive
	locInFlight
	nLoc
)

// dist is a probability for each place.
type dist [nLoc]float64

func (d dist) normalized() dist {
	sum := 0.0
	for _, p := range d {
		sum += p
	}
	if sum == 0 {
		return d
	}
	for i := range d {
		d[i] /= sum
	}
	return d
}

// locations names the places, for a pod rejected by plugins or one failing
// with errors.
func locations(errorPod bool) [nLoc]queue.Location {
	backoff := queue.LocationBackoff
	if errorPod {
		backoff = queue.LocationErrorBackoff
	}
	return [nLoc]queue.Location{queue.LocationUnschedulable, backoff, queue.LocationActive, queue.LocationInFlight}
}

// placement is what the queue metrics and the pods together say.
type placement struct {
	// inFlight are the ready pods taken to be in flight.
	inFlight map[*podFacts]bool
	// fitNote says how sure the placement of pods rejected by plugins is.
	fitNote string
	// grid is when the backoff flush runs.
	grid flushGrid
	// perPod is about how long the scheduler takes per pod; rateMeasured:
	// from the attempt rate between two scrapes, not from the events.
	perPod       time.Duration
	rateMeasured bool
	// backingOff is how many pods backoffQ holds (scheduler_pending_pods),
	// 0 when unknown: when their backoffs complete, the older of them go
	// ahead of younger pods in activeQ.
	backingOff int
}

// Priors: where a pod rejected by plugins is, before the queue metrics are
// taken into account.
var (
	// No node added since the failure: unschedulablePods, unless an event
	// explain cannot see (a pod deleted, a node updated) moved it.
	priorParked = dist{0.9, 0.07, 0.02, 0.01}
	// Nodes unknown.
	priorParkedNoNodes = dist{0.8, 0.15, 0.03, 0.02}
	// Moved by a NodeAdd and still backing off.
	priorMovedBackingOff = dist{0.05, 0.85, 0.05, 0.05}
	// Moved by a NodeAdd, with PopFromBackoffQ and activeQ empty: popped
	// early, so in flight, or failed again (its event not seen yet), or
	// still in backoffQ if the scheduler is busy.
	priorMovedPopped = dist{0.3, 0.4, 0.1, 0.2}
	// Moved by a NodeAdd, backoff over: activeQ, popped, or failed again.
	priorMovedReady = dist{0.3, 0.1, 0.4, 0.2}
)

// priorRetried: moved, retried since, and failed again out of sight (the
// same message, so the same event series), or about to be.
var priorRetried = dist{0.75, 0.15, 0.05, 0.05}

// settle is how long after it may be popped a moved pod is taken to be
// being retried; after that it has most likely failed again.
const settle = 1500 * time.Millisecond

// fitPrior is where a pod rejected by plugins may be, from its own evidence.
func fitPrior(f *podFacts, in Input, grid flushGrid, activeEmpty bool) dist {
	pfb := grid.pfb
	switch {
	case in.Nodes == nil && f.movedAt.IsZero():
		return priorParkedNoNodes
	case f.movedAt.IsZero():
		return priorParked
	}
	lo, hi := fitBackoffWindow(f, in.Config, grid)
	// When it may be popped: at once with PopFromBackoffQ and an empty
	// activeQ, else when its backoff completes.
	poppable := maxTime(f.movedAt, hi)
	if pfb && activeEmpty {
		poppable = f.movedAt
	}
	switch {
	case in.Now.Sub(poppable) > settle:
		return priorRetried
	case !in.Now.Before(hi):
		return priorMovedReady
	case pfb && activeEmpty:
		return priorMovedPopped
	case !in.Now.Before(lo):
		// In the flush's second: either.
		var d dist
		for i := range d {
			d[i] = (priorMovedReady[i] + priorMovedBackingOff[i]) / 2
		}
		return d
	default:
		return priorMovedBackingOff
	}
}

// fitBackoffWindow is when the backoff of a pod rejected by plugins
// completes, counted from its last failure, visible or estimated.
func fitBackoffWindow(f *podFacts, cfg Config, grid flushGrid) (earliest, latest time.Time) {
	last := maxTime(f.failure.Time, f.retriedAt)
	return grid.completion(queue.BackoffExpiry(last, f.fitCount+f.hiddenFits, 0, cfg.PodInitialBackoff, cfg.PodMaxBackoff, grid.pfb))
}

// errorPrior is where a pod backing off after errors may be: the
// extrapolation is less sure the more failures it had to infer, and inside
// the window in which the flush moves it to activeQ, the later the likelier
// it has moved. Every error pod waits for the same flush, so the queue
// metrics (how many pods backoffQ holds) settle which side of it they are.
func errorPrior(f *podFacts, now time.Time) dist {
	c := f.cycle
	if !now.Before(c.popLatest) {
		return priorErrorRetried
	}
	x := min(0.05+0.01*float64(c.hidden), 0.4)
	if w := c.popLatest.Sub(c.popEarliest); w > 0 && !now.Before(c.popEarliest) {
		x = max(x, min(float64(now.Sub(c.popEarliest))/float64(w), 0.95))
	}
	return dist{0, 1 - x, x / 2, x / 2}
}

// priorErrorRetried is where an error pod past its pop may be: being
// retried, or — an error is quick to come — failed again already, its event
// not written yet.
var priorErrorRetried = dist{0, 0.2, 0.4, 0.4}

// priorReady is where a pod that is ready to be popped (never tried, or
// past its error backoff) may be.
var priorReady = dist{0, 0, 0.8, 0.2}

// place reconciles each pod's evidence with scheduler_pending_pods: the
// metrics tell how many pods each sub-queue holds, the pods' own evidence
// which of them are likely where. The pods' priors are fitted to the counts
// of unschedulablePods, backoffQ and activeQ, the rest being in flight
// (iterative proportional fitting). Ready pods are popped in activeQ order
// (priority, then time), so the first of them are the ones in flight.
func place(pods []*podFacts, in Input, grid flushGrid, activeEmpty bool) placement {
	pl := placement{inFlight: map[*podFacts]bool{}, grid: grid}
	var fitted, ready []*podFacts
	nFit := 0
	for _, f := range pods {
		switch f.category {
		case catFitFailed:
			f.dist = fitPrior(f, in, grid, activeEmpty)
			nFit++
		case catErrorBackingOff:
			f.dist = errorPrior(f, in.Now)
		case catReady:
			f.dist = priorReady
			ready = append(ready, f)
		default:
			continue
		}
		fitted = append(fitted, f)
	}
	m := in.Metrics
	if m != nil {
		pl.backingOff = int(m.Pending[queue.LabelBackoff])
		inFlight := -1
		if m.InFlight != nil {
			inFlight = int(*m.InFlight)
		}
		fit(fitted, int(m.Pending[queue.LabelUnschedulable]), int(m.Pending[queue.LabelBackoff]), int(m.Pending[queue.LabelActive]), inFlight)
	}
	capParked(fitted)
	var inU, inB, readyInFlight float64
	for _, f := range fitted {
		switch f.category {
		case catFitFailed:
			inU += f.dist[locUnschedulable]
			inB += f.dist[locBackoff]
		case catReady:
			readyInFlight += f.dist[locInFlight]
		}
	}
	switch {
	case nFit > 0 && m != nil:
		pl.fitNote = fmt.Sprintf("the queue metrics put about %.0f of the %d pods rejected by plugins in unschedulablePods and %.0f in backoffQ", inU, nFit, inB)
	case nFit > 0:
		pl.fitNote = "without the queue metrics, a pod rejected by plugins may be parked in unschedulablePods or, moved by a cluster event, wait in backoffQ"
	}

	// Ready pods are popped in activeQ order (priority, then time).
	sort.SliceStable(ready, func(i, j int) bool {
		pi, pj := priority(ready[i].pod), priority(ready[j].pod)
		if pi != pj {
			return pi > pj
		}
		ti, tj := readySince(ready[i]), readySince(ready[j])
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return createdBefore(ready[i].pod, ready[j].pod)
	})
	if m == nil {
		return pl
	}
	k := int(readyInFlight + 0.5)
	for i, f := range ready {
		if i < k {
			pl.inFlight[f] = true
		} else {
			f.ahead = i - k
		}
	}
	return pl
}

// fit scales the pods' distributions so that, summed, they put u pods in
// unschedulablePods, b in backoffQ (both heaps) and a in activeQ, the rest
// in flight, keeping each pod's odds between places otherwise.
//
// inFlight (-1: unknown) is the scheduler's own, lagging count of pods in
// flight. Pods the counts leave over beyond it are taken to be on their way
// to activeQ: the API server has them, the scheduler has not seen them yet.
func fit(pods []*podFacts, u, b, a, inFlight int) {
	n := len(pods)
	if n == 0 {
		return
	}
	u = min(u, n)
	b = min(b, n-u)
	a = min(a, n-u-b)
	i := n - u - b - a
	if inFlight >= 0 && i > inFlight+1 {
		a, i = a+i-(inFlight+1), inFlight+1
	}
	target := dist{float64(u), float64(b), float64(a), float64(i)}
	for iter := 0; iter < 100; iter++ {
		var sum dist
		for _, f := range pods {
			for i := range sum {
				sum[i] += f.dist[i]
			}
		}
		var scale dist
		done := true
		for i := range scale {
			switch {
			case sum[i] > 0:
				scale[i] = target[i] / sum[i]
			case target[i] == 0:
				scale[i] = 0
			default:
				scale[i] = 1 // no pod can be there: leave it
			}
			if d := scale[i] - 1; sum[i] > 0 && (d > 1e-3 || d < -1e-3) {
				done = false
			}
		}
		if done {
			break
		}
		for _, f := range pods {
			d := f.dist
			for i := range d {
				d[i] *= scale[i]
			}
			if d = d.normalized(); d != (dist{}) {
				f.dist = d // else no place left for it: keep its odds
			}
		}
	}
}

// best returns the likeliest place and the others in order.
func (d dist) best(locs [nLoc]queue.Location) (queue.Location, float64, []Alternative) {
	idx := []int{locUnschedulable, locBackoff, locActive, locInFlight}
	sort.SliceStable(idx, func(i, j int) bool { return d[idx[i]] > d[idx[j]] })
	var alts []Alternative
	for _, i := range idx[1:] {
		if d[i] >= 0.01 {
			alts = append(alts, Alternative{locs[i], round2(d[i])})
		}
	}
	return locs[idx[0]], round2(d[idx[0]]), alts
}

func round2(p float64) float64 { return float64(int(p*100+0.5)) / 100 }

// createdBefore orders pods that the seconds of their creationTimestamp
// cannot: a burst creates hundreds in one second, which the scheduler queues
// in the order it sees them, the order of their creation in etcd. The
// resourceVersion of a pod not updated since tells it (kube-apiserver's are
// etcd revisions); where either is not a number, neither is first.
func createdBefore(a, b *corev1.Pod) bool {
	ra, errA := strconv.ParseUint(a.ResourceVersion, 10, 64)
	rb, errB := strconv.ParseUint(b.ResourceVersion, 10, 64)
	return errA == nil && errB == nil && ra < rb
}
