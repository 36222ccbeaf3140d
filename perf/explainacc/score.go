package explainacc

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/perf/groundtruth"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
)

// InferFunc is explain.Infer, or a variant being evaluated.
type InferFunc func(explain.Input) []explain.Explanation

// Result is the score of one recording.
type Result struct {
	Name            string `json:"name"`
	PopFromBackoffQ bool   `json:"popFromBackoffQ"`
	Samples         int    `json:"samples"`
	Duration        string `json:"duration"`

	// Placement is by the ground truth's queue.
	Placement map[groundtruth.QueueName]*Placement `json:"placement"`
	// Confusion counts (ground truth → explain's answer).
	Confusion map[string]int `json:"confusion"`
	// MisplacedBy counts the wrong answers by the pod's name up to its
	// first dash (the scenario's pod kinds) and ground truth → answer.
	MisplacedBy map[string]int `json:"misplacedBy"`
	// NotQueued counts pending pods that were in neither ground-truth
	// snapshot (created but not yet queued, or bound but not yet listed as
	// such): not scored.
	NotQueued int `json:"notQueued"`

	// Calibration groups the placements by the queue explain named (and
	// all together, under "all") and the confidence it stated.
	Calibration map[string]*Calibration `json:"calibration"`

	// NextRetry is the distance from the actual next pop to explain's
	// window, Estimate to its estimate; both by the ground truth's queue.
	NextRetry map[groundtruth.QueueName]*RetryStats `json:"nextRetry"`
	Estimate  map[groundtruth.QueueName]*RetryStats `json:"estimate"`

	// Attempts compares the attempts explain shows with the scheduler's
	// own count.
	Attempts AttemptStats `json:"attempts"`

	// ReadP50 and ReadMax are how long explain's reading took.
	ReadP50, ReadMax time.Duration
	// Load is the lowest load average at a run's start and the highest at
	// a run's end (1 min).
	Load [2]float64

	// Verbose makes WriteText list the largest next-retry errors.
	Verbose bool `json:"-"`
}

// Placement counts explain's answers for pods in one queue.
type Placement struct {
	N       int `json:"n"`
	Correct int `json:"correct"`
	// Moving are the pods whose place changed while explain read its
	// input: right if explain names either place.
	Moving int `json:"moving"`
	// Covered counts answers whose queue or alternatives hold the truth.
	Covered int `json:"covered"`
}

// Accuracy is Correct/N.
func (p Placement) Accuracy() float64 { return ratio(p.Correct, p.N) }

// calibrationBins is how many equal bins of stated confidence the
// calibration has: the reliability diagram's bars, and the expected
// calibration error's terms.
const calibrationBins = 10

// Calibration counts answers by stated confidence.
type Calibration struct {
	Bins [calibrationBins]Bin `json:"bins"`
}

// Bin is the answers stated at a confidence in [i/10, (i+1)/10) (the last
// bin includes 1).
type Bin struct {
	N             int     `json:"n"`
	Correct       int     `json:"correct"`
	SumConfidence float64 `json:"sumConfidence"`
}

func (c *Calibration) add(conf float64, correct bool) {
	i := min(max(int(conf*calibrationBins), 0), calibrationBins-1)
	b := &c.Bins[i]
	b.N++
	b.SumConfidence += conf
	if correct {
		b.Correct++
	}
}

func (c *Calibration) merge(o *Calibration) {
	for i := range c.Bins {
		c.Bins[i].N += o.Bins[i].N
		c.Bins[i].Correct += o.Bins[i].Correct
		c.Bins[i].SumConfidence += o.Bins[i].SumConfidence
	}
}

// Total is every answer counted.
func (c *Calibration) Total() (n, correct int) {
	for _, b := range c.Bins {
		n += b.N
		correct += b.Correct
	}
	return n, correct
}

// ECE is the expected calibration error: over the bins, the gap between
// the mean stated confidence and the share right, weighted by the answers
// in each bin.
func (c *Calibration) ECE() float64 {
	n, _ := c.Total()
	if n == 0 {
		return math.NaN()
	}
	e := 0.0
	for _, b := range c.Bins {
		if b.N > 0 {
			e += float64(b.N) / float64(n) * math.Abs(b.SumConfidence/float64(b.N)-float64(b.Correct)/float64(b.N))
		}
	}
	return e
}

// High is the answers stated at 90% or more, and how many were right.
func (c *Calibration) High() (n, correct int) {
	b := c.Bins[calibrationBins-1]
	return b.N, b.Correct
}

// AttemptStats compares the attempts explain shows with the scheduler's
// count (the pops so far, less the one under way for a pod in flight: the
// attempts that ended), per pod-sample.
type AttemptStats struct {
	N int `json:"n"`
	// Within are the values shown as a count or an estimate within ±20% of
	// the scheduler's count.
	Within int `json:"within"`
	// Bound are values marked as lower bounds (≥) that are at or below the
	// scheduler's count; BoundBroken those above it.
	Bound       int `json:"bound"`
	BoundBroken int `json:"boundBroken"`
	// Off are values shown as a count or an estimate more than 20% off:
	// Under below the scheduler's count, the rest above.
	Off   int `json:"off"`
	Under int `json:"under"`
	// Estimated and Bounds count the values shown as estimates (~) and as
	// lower bounds (≥).
	Estimated int `json:"estimated"`
	// looseness is the scheduler's count over a lower bound, for each
	// bound: how far below it the bound is.
	looseness []float64
	worst     []worstRetry
}

// Good is the share of values within ±20% or honestly marked as lower
// bounds.
func (a *AttemptStats) Good() float64 { return ratio(a.Within+a.Bound, a.N) }

func (a *AttemptStats) merge(o *AttemptStats) {
	a.N += o.N
	a.Within += o.Within
	a.Bound += o.Bound
	a.BoundBroken += o.BoundBroken
	a.Off += o.Off
	a.Under += o.Under
	a.Estimated += o.Estimated
	a.looseness = append(a.looseness, o.looseness...)
	a.worst = append(a.worst, o.worst...)
}

// within20 reports whether shown is within ±20% of truth.
func within20(shown, truth int) bool {
	return math.Abs(float64(shown-truth)) <= 0.2*float64(truth)
}

// RetryStats are the next-retry errors of one queue.
type RetryStats struct {
	// Errors are the distances from the actual next pop to explain's window
	// (0 inside it), one per pod and sample.
	Errors []time.Duration `json:"-"`
	// Widths are the windows' widths (Latest−Earliest), finite ones only.
	Widths []time.Duration `json:"-"`
	// Censored are windows with no pop before the run ended and no end
	// before it either: they cannot be scored.
	Censored int `json:"censored"`
	// Unbounded are scored windows without a Latest.
	Unbounded int `json:"unbounded"`

	// Worst are the largest errors, described.
	Worst []string `json:"worst,omitempty"`
	worst []worstRetry

	P50, P90, Max    time.Duration
	WidthP50         time.Duration
	N                int
	WithinWindowRate float64
}

// NewResult returns an empty result, for Score or for Merge to fill.
func NewResult(name string, pfb bool) *Result {
	return &Result{
		Name: name, PopFromBackoffQ: pfb,
		Placement: map[groundtruth.QueueName]*Placement{}, Confusion: map[string]int{}, MisplacedBy: map[string]int{},
		Calibration: map[string]*Calibration{},
		NextRetry:   map[groundtruth.QueueName]*RetryStats{}, Estimate: map[groundtruth.QueueName]*RetryStats{},
		Load: [2]float64{math.Inf(1), 0},
	}
}

// calibration returns the counts of answers naming class.
func (r *Result) calibration(class string) *Calibration {
	c := r.Calibration[class]
	if c == nil {
		c = &Calibration{}
		r.Calibration[class] = c
	}
	return c
}

// Score runs infer on every sample of r and compares.
func Score(r *Recording, infer InferFunc) *Result {
	if infer == nil {
		infer = explain.Infer
	}
	res := NewResult(r.Name, r.PopFromBackoffQ)
	res.Samples, res.Duration = len(r.Samples), r.End.Sub(r.Start).Round(time.Second).String()
	res.Load = r.Load
	var reads []time.Duration
	for _, s := range r.Samples {
		if !s.Done.IsZero() {
			reads = append(reads, s.Done.Sub(s.Start))
		}
	}
	res.ReadP50, res.ReadMax = percentile(reads, 0.5), percentile(reads, 1)
	eachAnswer(r, infer, func(a answer) {
		if a.notQueued {
			res.NotQueued++
			return
		}
		e, truth := a.e, a.truth
		pl := res.Placement[truth.Queue]
		if pl == nil {
			pl = &Placement{}
			res.Placement[truth.Queue] = pl
		}
		pl.N++
		if a.moving {
			pl.Moving++
		}
		got := groundtruth.QueueName(e.Queue)
		if a.correct {
			pl.Correct++
		}
		covered := a.correct
		for _, alt := range e.Alternatives {
			q := groundtruth.QueueName(alt.Queue)
			if q == truth.Queue || a.moving && q == a.after.Queue {
				covered = true
			}
		}
		if covered {
			pl.Covered++
		}
		if a.correct {
			res.Confusion[string(got)+"→"+string(got)]++
		} else {
			res.Confusion[string(truth.Queue)+"→"+string(got)]++
			kind, _, _ := strings.Cut(e.Name, "-")
			res.MisplacedBy[kind+": "+string(truth.Queue)+"→"+string(got)]++
		}
		res.calibration(e.Queue.Word()).add(e.Confidence, a.correct)
		res.calibration("all").add(e.Confidence, a.correct)
		scoreRetry(res, r, a.s, a.key, truth, e)
		scoreAttempts(&res.Attempts, a.s, a.key, truth, e)
	})
	for _, rs := range res.NextRetry {
		rs.finish()
	}
	for _, rs := range res.Estimate {
		rs.finish()
	}
	return res
}

// answer is one pending pod's answer at one sample, with the ground truth:
// the queue when explain began reading (its Now), and a little later, when
// its calls had been answered; a pod that moved meanwhile (moving) may be
// in either place. notQueued: the pod was in neither (created and not yet
// queued, or bound and not yet listed as such): not scored.
type answer struct {
	s            Sample
	key          string
	e            explain.Explanation
	truth, after Place
	moving       bool
	correct      bool
	notQueued    bool
}

// eachAnswer runs infer on every sample of r and hands fn each pending
// pod's answer.
func eachAnswer(r *Recording, infer InferFunc, fn func(answer)) {
	r.indexLastSeen()
	for i, s := range r.Samples {
		for _, e := range infer(r.Input(i)) {
			if e.State != explain.StatePending {
				continue
			}
			key := e.Namespace + "/" + e.Name
			truth, inBefore := s.Before[key]
			after, inAfter := s.Mid[key]
			if !inBefore && !inAfter {
				fn(answer{s: s, key: key, e: e, notQueued: true})
				continue
			}
			if !inBefore {
				truth = after
			}
			moving := inBefore && inAfter && truth.Queue != after.Queue
			got := groundtruth.QueueName(e.Queue)
			correct := got == truth.Queue || moving && got == after.Queue
			fn(answer{s: s, key: key, e: e, truth: truth, after: after, moving: moving, correct: correct})
		}
	}
}

// CalibrationSamples runs explain without its calibration
// (explain.InferUncalibrated) on every sample of r and hands fn, for each
// pending pod's answer, the queue named, the model's odds and whether the
// answer was right: what make explain-calibrate fits the calibration on.
func CalibrationSamples(r *Recording, fn func(class string, raw float64, right bool)) {
	eachAnswer(r, explain.InferUncalibrated, func(a answer) {
		if !a.notQueued {
			fn(a.e.Queue.Word(), a.e.Confidence, a.correct)
		}
	})
}

// scoreAttempts compares the attempts explain shows with the scheduler's
// count: the pops so far, less the one under way for a pod in flight.
func scoreAttempts(a *AttemptStats, s Sample, key string, truth Place, e explain.Explanation) {
	want := truth.Attempts
	if truth.Queue == groundtruth.InFlight {
		want--
	}
	if want < 0 {
		return
	}
	a.N++
	shown := e.Attempts
	kind := explain.AttemptsCounted
	if e.AttemptsCount != nil {
		kind = e.AttemptsCount.Kind
	}
	switch kind {
	case explain.AttemptsAtLeast:
		if shown <= want {
			a.Bound++
			if shown > 0 {
				a.looseness = append(a.looseness, float64(want)/float64(shown))
			}
			return
		}
		a.BoundBroken++
	default:
		if kind == explain.AttemptsEstimated {
			a.Estimated++
		}
		if within20(shown, want) {
			a.Within++
			return
		}
		a.Off++
		if shown < want {
			a.Under++
		}
	}
	a.worst = append(a.worst, worstRetry{time.Duration(abs(shown - want)), fmt.Sprintf("%s at %s (%s): shows %s, the scheduler counts %d",
		key, s.Now.Format("15:04:05.000"), truth.Queue, explain.FormatAttempts(e), want)})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// scoreRetry compares the next-retry window with the pod's actual next pop:
// for a pod in flight, the pop that put it there; for any other, the pop
// after the ones the ground truth had counted.
func scoreRetry(res *Result, r *Recording, s Sample, key string, truth Place, e explain.Explanation) {
	if e.NextRetry == nil || truth.Queue == groundtruth.Gated {
		return // gated pods wait for a person, not a time
	}
	rs := res.NextRetry[truth.Queue]
	if rs == nil {
		rs = &RetryStats{}
		res.NextRetry[truth.Queue] = rs
	}
	earliest, latest := s.Now, time.Time{}
	if e.NextRetry.Earliest != nil {
		earliest = *e.NextRetry.Earliest
	}
	if e.NextRetry.Latest != nil {
		latest = *e.NextRetry.Latest
	}
	// The ground truth's attempts count the pops so far: a pod in flight is
	// in its Attempts-th, any other waits for the next.
	var pop time.Time
	pops := r.Pops[truth.UID]
	i := truth.Attempts
	if truth.Queue == groundtruth.InFlight {
		i--
	}
	if i >= 0 && i < len(pops) {
		pop = pops[i]
	}
	if e.NextRetry.Estimate != nil {
		scoreEstimate(res, r, s, key, truth, e, pop)
	}
	var d time.Duration
	switch {
	case !pop.IsZero():
		d = distance(pop, earliest, latest)
	case r.leftUnpopped(truth.UID):
		rs.Censored++
		return
	case !latest.IsZero() && latest.Before(r.End):
		d = r.End.Sub(latest) // at least this late
	default:
		rs.Censored++
		return
	}
	if latest.IsZero() {
		rs.Unbounded++
	} else {
		rs.Widths = append(rs.Widths, latest.Sub(earliest))
	}
	rs.Errors = append(rs.Errors, d)
	if d > 0 {
		rs.worst = append(rs.worst, worstRetry{d, fmt.Sprintf("%s at %s (explain: %s, attempts %s): window [%s, %s], popped %s",
			key, s.Now.Format("15:04:05.000"), e.Queue, explain.FormatAttempts(e), offset(earliest, s.Now), offset(latest, s.Now), popText(pop, s.Now))})
	}
}

// popText writes when the pod was popped, relative to now.
func popText(pop, now time.Time) string {
	if pop.IsZero() {
		return "none by the end"
	}
	return pop.Sub(now).Round(time.Millisecond).String()
}

// scoreEstimate compares the next-try estimate with the actual next pop.
func scoreEstimate(res *Result, r *Recording, s Sample, key string, truth Place, e explain.Explanation, pop time.Time) {
	rs := res.Estimate[truth.Queue]
	if rs == nil {
		rs = &RetryStats{}
		res.Estimate[truth.Queue] = rs
	}
	est := *e.NextRetry.Estimate
	var d time.Duration
	switch {
	case !pop.IsZero():
		d = pop.Sub(est)
		if d < 0 {
			d = -d
		}
	case r.leftUnpopped(truth.UID):
		rs.Censored++
		return
	case est.Before(r.End):
		d = r.End.Sub(est) // at least this late
	default:
		rs.Censored++
		return
	}
	rs.Errors = append(rs.Errors, d)
	if d > 0 {
		rs.worst = append(rs.worst, worstRetry{d, fmt.Sprintf("%s at %s (explain: %s, attempts %s): estimate %s, popped %s",
			key, s.Now.Format("15:04:05.000"), e.Queue, explain.FormatAttempts(e), offset(est, s.Now), popText(pop, s.Now))})
	}
}

type worstRetry struct {
	d    time.Duration
	text string
}

// offset writes t relative to now.
func offset(t, now time.Time) string {
	if t.IsZero() {
		return "∞"
	}
	return "now" + fmt.Sprintf("%+v", t.Sub(now).Round(time.Millisecond))
}

func distance(t, earliest, latest time.Time) time.Duration {
	switch {
	case t.Before(earliest):
		return earliest.Sub(t)
	case !latest.IsZero() && t.After(latest):
		return t.Sub(latest)
	}
	return 0
}

func (rs *RetryStats) finish() {
	sort.SliceStable(rs.worst, func(i, j int) bool { return rs.worst[i].d > rs.worst[j].d })
	rs.Worst = rs.Worst[:0]
	for _, w := range rs.worst[:min(len(rs.worst), 5)] {
		rs.Worst = append(rs.Worst, fmt.Sprintf("%s late: %s", dur(w.d), w.text))
	}
	rs.N = len(rs.Errors)
	rs.P50, rs.P90, rs.Max = percentile(rs.Errors, 0.5), percentile(rs.Errors, 0.9), percentile(rs.Errors, 1)
	rs.WidthP50 = percentile(rs.Widths, 0.5)
	in := 0
	for _, d := range rs.Errors {
		if d == 0 {
			in++
		}
	}
	rs.WithinWindowRate = ratio(in, rs.N)
}

// percentile is the nearest-rank q-quantile (0 for no values).
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(i, 0)]
}

func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// Total sums the placements.
func (r *Result) Total() Placement {
	var t Placement
	for _, p := range r.Placement {
		t.N += p.N
		t.Correct += p.Correct
		t.Moving += p.Moving
		t.Covered += p.Covered
	}
	return t
}

// Merge adds o's counts and errors into r (for several runs of one setting).
func (r *Result) Merge(o *Result) {
	r.Samples += o.Samples
	r.ReadP50, r.ReadMax = max(r.ReadP50, o.ReadP50), max(r.ReadMax, o.ReadMax)
	r.Load = [2]float64{min(r.Load[0], o.Load[0]), max(r.Load[1], o.Load[1])}
	r.NotQueued += o.NotQueued
	for q, p := range o.Placement {
		if r.Placement[q] == nil {
			r.Placement[q] = &Placement{}
		}
		r.Placement[q].N += p.N
		r.Placement[q].Correct += p.Correct
		r.Placement[q].Moving += p.Moving
		r.Placement[q].Covered += p.Covered
	}
	for k, v := range o.Confusion {
		r.Confusion[k] += v
	}
	for k, v := range o.MisplacedBy {
		r.MisplacedBy[k] += v
	}
	for class, c := range o.Calibration {
		r.calibration(class).merge(c)
	}
	mergeRetries(r.NextRetry, o.NextRetry)
	mergeRetries(r.Estimate, o.Estimate)
	r.Attempts.merge(&o.Attempts)
}

func mergeRetries(into, from map[groundtruth.QueueName]*RetryStats) {
	for q, rs := range from {
		if into[q] == nil {
			into[q] = &RetryStats{}
		}
		t := into[q]
		t.Errors = append(t.Errors, rs.Errors...)
		t.Widths = append(t.Widths, rs.Widths...)
		t.Censored += rs.Censored
		t.Unbounded += rs.Unbounded
		t.worst = append(t.worst, rs.worst...)
		t.finish()
	}
}

// queueOrder is the order of the report's rows.
var queueOrder = []groundtruth.QueueName{groundtruth.Active, groundtruth.InFlight, groundtruth.Backoff, groundtruth.ErrorBackoff, groundtruth.Unschedulable, groundtruth.Gated, groundtruth.Incomplete, groundtruth.Pending}

// WriteText writes the result as a few Markdown tables.
func (r *Result) WriteText(w io.Writer) {
	over := ""
	if r.Duration != "" {
		over = " over " + r.Duration
	}
	fmt.Fprintf(w, "### %s, SchedulerPopFromBackoffQ=%v (%d samples%s)\n\n", r.Name, r.PopFromBackoffQ, r.Samples, over)
	if r.ReadMax > 0 {
		fmt.Fprintf(w, "explain's reading took %s at the median, %s at most; load average (1 min) %.1f at the start, %.1f at the end.\n\n",
			dur(r.ReadP50), dur(r.ReadMax), r.Load[0], r.Load[1])
	}
	fmt.Fprintf(w, "| queue (ground truth) | pod-samples | correct | accuracy | moving while read | truth among alternatives |\n|---|---:|---:|---:|---:|---:|\n")
	for _, q := range queueOrder {
		p := r.Placement[q]
		if p == nil {
			continue
		}
		fmt.Fprintf(w, "| %s | %d | %d | %s | %d | %s |\n", q, p.N, p.Correct, pct(p.Accuracy()), p.Moving, pct(ratio(p.Covered, p.N)))
	}
	t := r.Total()
	fmt.Fprintf(w, "| **all** | %d | %d | **%s** | %d | %s |\n\n", t.N, t.Correct, pct(t.Accuracy()), t.Moving, pct(ratio(t.Covered, t.N)))
	if r.NotQueued > 0 {
		fmt.Fprintf(w, "%d pod-samples were pending in the API but in no ground-truth snapshot (not scored).\n\n", r.NotQueued)
	}
	var wrong []string
	for k, v := range r.Confusion {
		if a, b, _ := strings.Cut(k, "→"); a != b {
			wrong = append(wrong, fmt.Sprintf("%s %d", k, v))
		}
	}
	sort.Strings(wrong)
	if len(wrong) > 0 {
		fmt.Fprintf(w, "Misplaced (truth→explain): %s.\n\n", strings.Join(wrong, ", "))
		var by []string
		for k, v := range r.MisplacedBy {
			by = append(by, fmt.Sprintf("%s %d", k, v))
		}
		sort.Strings(by)
		fmt.Fprintf(w, "By pod kind: %s.\n\n", strings.Join(by, ", "))
	}
	r.writeReliability(w, "all")
	fmt.Fprintf(w, "\n| next retry, by queue | scored | p50 error | p90 error | max error | inside window | p50 window width | unbounded | censored | estimate scored | estimate p50 error | estimate p90 error |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, q := range queueOrder {
		rs, es := r.NextRetry[q], r.Estimate[q]
		if rs == nil && es == nil {
			continue
		}
		if rs == nil {
			rs = &RetryStats{}
		}
		est := "| 0 | – | –"
		if es != nil && es.N > 0 {
			est = fmt.Sprintf("| %d | %s | %s", es.N, dur(es.P50), dur(es.P90))
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %d | %d %s |\n", q, rs.N, dur(rs.P50), dur(rs.P90), dur(rs.Max), pct(rs.WithinWindowRate), dur(rs.WidthP50), rs.Unbounded, rs.Censored, est)
	}
	fmt.Fprintln(w)
	a := &r.Attempts
	if a.N > 0 {
		fmt.Fprintf(w, "Attempts against the scheduler's count (%d pod-samples): %s within ±20%%, %s marked as a lower bound (≥) and at or below it, so %s right; %s shown as counted or estimated and more than 20%% off (%d under, %d over), %d lower bounds above it. %d were estimates (~).",
			a.N, pct(ratio(a.Within, a.N)), pct(ratio(a.Bound, a.N)), pct(a.Good()), pct(ratio(a.Off, a.N)), a.Under, a.Off-a.Under, a.BoundBroken, a.Estimated)
		if len(a.looseness) > 0 {
			fmt.Fprintf(w, " The scheduler's count was %.1f× the lower bound at the median, %.1f× at p90.", quantile(a.looseness, 0.5), quantile(a.looseness, 0.9))
		}
		fmt.Fprintf(w, "\n\n")
	}
	if r.Verbose {
		for _, q := range queueOrder {
			if rs := r.NextRetry[q]; rs != nil && len(rs.Worst) > 0 {
				fmt.Fprintf(w, "Largest next-retry errors, %s:\n", q)
				for _, s := range rs.Worst {
					fmt.Fprintf(w, "- %s\n", s)
				}
				fmt.Fprintln(w)
			}
			if rs := r.Estimate[q]; rs != nil && len(rs.Worst) > 0 {
				fmt.Fprintf(w, "Largest next-try estimate errors, %s:\n", q)
				for _, s := range rs.Worst {
					fmt.Fprintf(w, "- %s\n", s)
				}
				fmt.Fprintln(w)
			}
		}
		sort.SliceStable(a.worst, func(i, j int) bool { return a.worst[i].d > a.worst[j].d })
		if len(a.worst) > 0 {
			fmt.Fprintf(w, "Largest attempt errors:\n")
			for _, x := range a.worst[:min(len(a.worst), 8)] {
				fmt.Fprintf(w, "- %s\n", x.text)
			}
			fmt.Fprintln(w)
		}
	}
}

// writeReliability writes the reliability diagram of class as a table:
// per bin of stated confidence, the answers and the share right.
func (r *Result) writeReliability(w io.Writer, class string) {
	c := r.Calibration[class]
	if c == nil {
		return
	}
	fmt.Fprintf(w, "| stated confidence | pod-samples | mean stated | observed accuracy |\n|---|---:|---:|---:|\n")
	for i, b := range c.Bins {
		if b.N == 0 {
			continue
		}
		hi := ")"
		if i == calibrationBins-1 {
			hi = "]"
		}
		fmt.Fprintf(w, "| [%.1f, %.1f%s | %d | %.3f | %s |\n", float64(i)/calibrationBins, float64(i+1)/calibrationBins, hi, b.N, b.SumConfidence/float64(b.N), pct(ratio(b.Correct, b.N)))
	}
	n, correct := c.Total()
	hn, hc := c.High()
	fmt.Fprintf(w, "\nExpected calibration error %s over %d answers (%s right); answers stated at 90%% or more: %s right of %d.\n", pts(c.ECE()), n, pct(ratio(correct, n)), pct(ratio(hc, hn)), hn)
}

// WriteCalibration writes the calibration per class of answer: the
// expected calibration error and the accuracy of answers stated at 90% or
// more, for version.
func (r *Result) WriteCalibration(w io.Writer, version string) {
	fmt.Fprintf(w, "### Calibration, kube-scheduler %s, %s\n\n", version, r.Name)
	fmt.Fprintf(w, "| answer | answers | right | ECE | stated ≥ 90%% | right at ≥ 90%% |\n|---|---:|---:|---:|---:|---:|\n")
	classes := make([]string, 0, len(r.Calibration))
	for k := range r.Calibration {
		if k != "all" {
			classes = append(classes, k)
		}
	}
	sort.Strings(classes)
	for _, k := range append(classes, "all") {
		c := r.Calibration[k]
		n, correct := c.Total()
		hn, hc := c.High()
		name := k
		if k == "all" {
			name = "**all**"
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %d | %s |\n", name, n, pct(ratio(correct, n)), pts(c.ECE()), hn, pct(ratio(hc, hn)))
	}
	fmt.Fprintln(w)
	r.writeReliability(w, "all")
	fmt.Fprintln(w)
}

// pts writes a share as percentage points.
func pts(f float64) string {
	if math.IsNaN(f) {
		return "–"
	}
	return fmt.Sprintf("%.1f pts", 100*f)
}

// quantile is the nearest-rank q-quantile of fs.
func quantile(fs []float64, q float64) float64 {
	s := append([]float64(nil), fs...)
	sort.Float64s(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(i, 0)]
}

func pct(f float64) string {
	if math.IsNaN(f) {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*f)
}

func dur(d time.Duration) string {
	return d.Round(time.Millisecond).String()
}

// SummaryLine is one line about a scored recording: what ran, its placement
// overall and by queue, its attempts and its next-try estimates.
func SummaryLine(r *Recording, res *Result) string {
	var b strings.Builder
	t := res.Total()
	fmt.Fprintf(&b, "%s %s gate=%v seed=%d load=%.0f–%.0f samples=%d pod-samples=%d placed=%s", r.KubeVersion, r.Name, r.PopFromBackoffQ, r.Seed, r.Load[0], r.Load[1], res.Samples, t.N, pct(t.Accuracy()))
	for _, q := range queueOrder {
		if p := res.Placement[q]; p != nil {
			fmt.Fprintf(&b, " %s=%s/%d", q, pct(p.Accuracy()), p.N)
		}
	}
	fmt.Fprintf(&b, " attempts=%s (under %d, over %d)", pct(res.Attempts.Good()), res.Attempts.Under, res.Attempts.Off-res.Attempts.Under)
	for _, q := range []groundtruth.QueueName{groundtruth.Active, groundtruth.Backoff, groundtruth.ErrorBackoff} {
		if e := res.Estimate[q]; e != nil && e.N > 0 {
			fmt.Fprintf(&b, " est-%s-p90=%s", q, dur(e.P90))
		}
	}
	c := res.Calibration["all"]
	if c != nil {
		hn, hc := c.High()
		fmt.Fprintf(&b, " ECE=%s ≥90%%=%s/%d", pts(c.ECE()), pct(ratio(hc, hn)), hn)
	}
	return b.String()
}
