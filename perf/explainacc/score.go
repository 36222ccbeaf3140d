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

	// Calibration groups the placements by the confidence explain stated.
	Calibration []*Bucket `json:"calibration"`

	// NextRetry is by the ground truth's queue.
	NextRetry map[groundtruth.QueueName]*RetryStats `json:"nextRetry"`

	// ReadP50 and ReadMax are how long explain's reading took; PollGaps
	// how far apart the reads of the queue that find pops were (p50, p99,
	// max).
	ReadP50, ReadMax time.Duration
	PollGaps         [3]time.Duration

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

// Bucket is one confidence range [Low, High).
type Bucket struct {
	Low, High        float64
	N, Correct       int
	SumConfidence    float64
	StatedMean       float64 `json:"statedMean"`
	ObservedAccuracy float64 `json:"observedAccuracy"`
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

// Confidence buckets.
var bucketEdges = []float64{0, 0.5, 0.7, 0.8, 0.9, 0.95, 1.0001}

// NewResult returns an empty result, for Score or for Merge to fill.
func NewResult(name string, pfb bool) *Result {
	res := &Result{
		Name: name, PopFromBackoffQ: pfb,
		Placement: map[groundtruth.QueueName]*Placement{}, Confusion: map[string]int{}, MisplacedBy: map[string]int{}, NextRetry: map[groundtruth.QueueName]*RetryStats{},
	}
	for i := 0; i+1 < len(bucketEdges); i++ {
		res.Calibration = append(res.Calibration, &Bucket{Low: bucketEdges[i], High: bucketEdges[i+1]})
	}
	return res
}

// Score runs infer on every sample of r and compares.
func Score(r *Recording, infer InferFunc) *Result {
	if infer == nil {
		infer = explain.Infer
	}
	res := NewResult(r.Name, r.PopFromBackoffQ)
	res.Samples, res.Duration = len(r.Samples), r.End.Sub(r.Start).Round(time.Second).String()
	var reads []time.Duration
	for _, s := range r.Samples {
		if !s.Done.IsZero() {
			reads = append(reads, s.Done.Sub(s.Start))
		}
	}
	res.ReadP50, res.ReadMax, res.PollGaps = percentile(reads, 0.5), percentile(reads, 1), r.PollGaps
	for i, s := range r.Samples {
		for _, e := range infer(r.Input(i)) {
			if e.State != explain.StatePending {
				continue
			}
			// The truth is the queue when explain began reading (its Now);
			// a pod that moved before the calls were answered may be in
			// either place.
			key := e.Namespace + "/" + e.Name
			truth, inBefore := s.Before[key]
			after, inAfter := s.Mid[key]
			if !inBefore && !inAfter {
				res.NotQueued++
				continue
			}
			if !inBefore {
				truth = after
			}
			pl := res.Placement[truth.Queue]
			if pl == nil {
				pl = &Placement{}
				res.Placement[truth.Queue] = pl
			}
			pl.N++
			moving := inBefore && inAfter && truth.Queue != after.Queue
			if moving {
				pl.Moving++
			}
			got := groundtruth.QueueName(e.Queue)
			correct := got == truth.Queue || moving && got == after.Queue
			if correct {
				pl.Correct++
			}
			covered := correct
			for _, a := range e.Alternatives {
				q := groundtruth.QueueName(a.Queue)
				if q == truth.Queue || moving && q == after.Queue {
					covered = true
				}
			}
			if covered {
				pl.Covered++
			}
			if correct {
				res.Confusion[string(got)+"→"+string(got)]++
			} else {
				res.Confusion[string(truth.Queue)+"→"+string(got)]++
				kind, _, _ := strings.Cut(e.Name, "-")
				res.MisplacedBy[kind+": "+string(truth.Queue)+"→"+string(got)]++
			}
			for _, b := range res.Calibration {
				if e.Confidence >= b.Low && e.Confidence < b.High {
					b.N++
					b.SumConfidence += e.Confidence
					if correct {
						b.Correct++
					}
				}
			}
			scoreRetry(res, r, s, key, truth, e)
		}
	}
	for _, b := range res.Calibration {
		if b.N > 0 {
			b.StatedMean = b.SumConfidence / float64(b.N)
			b.ObservedAccuracy = ratio(b.Correct, b.N)
		}
	}
	for _, rs := range res.NextRetry {
		rs.finish()
	}
	return res
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
	pops := r.Pops[key]
	i := truth.Attempts
	if truth.Queue == groundtruth.InFlight {
		i--
	}
	if i >= 0 && i < len(pops) {
		pop = pops[i]
	}
	var d time.Duration
	switch {
	case !pop.IsZero():
		d = distance(pop, earliest, latest)
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
		popText := "none by the end"
		if !pop.IsZero() {
			popText = pop.Sub(s.Now).Round(time.Millisecond).String()
		}
		rs.worst = append(rs.worst, worstRetry{d, fmt.Sprintf("%s at %s (explain: %s, attempts %d): window [%s, %s], popped %s",
			key, s.Now.Format("15:04:05.000"), e.Queue, e.Attempts, offset(earliest, s.Now), offset(latest, s.Now), popText)})
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
	for i := range r.PollGaps {
		r.PollGaps[i] = max(r.PollGaps[i], o.PollGaps[i])
	}
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
	for i, b := range o.Calibration {
		r.Calibration[i].N += b.N
		r.Calibration[i].Correct += b.Correct
		r.Calibration[i].SumConfidence += b.SumConfidence
		if r.Calibration[i].N > 0 {
			r.Calibration[i].StatedMean = r.Calibration[i].SumConfidence / float64(r.Calibration[i].N)
			r.Calibration[i].ObservedAccuracy = ratio(r.Calibration[i].Correct, r.Calibration[i].N)
		}
	}
	for q, rs := range o.NextRetry {
		if r.NextRetry[q] == nil {
			r.NextRetry[q] = &RetryStats{}
		}
		t := r.NextRetry[q]
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
		fmt.Fprintf(w, "explain's reading took %s at the median, %s at most; the queue was read for pops every %s at the median, %s at p99, %s at most.\n\n",
			dur(r.ReadP50), dur(r.ReadMax), dur(r.PollGaps[0]), dur(r.PollGaps[1]), dur(r.PollGaps[2]))
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
	fmt.Fprintf(w, "| stated confidence | pod-samples | mean stated | observed accuracy |\n|---|---:|---:|---:|\n")
	for _, b := range r.Calibration {
		if b.N == 0 {
			continue
		}
		fmt.Fprintf(w, "| [%.2f, %.2f) | %d | %.2f | %s |\n", b.Low, math.Min(b.High, 1), b.N, b.StatedMean, pct(b.ObservedAccuracy))
	}
	fmt.Fprintf(w, "\n| next retry, by queue | scored | p50 error | p90 error | max error | inside window | p50 window width | unbounded | censored |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, q := range queueOrder {
		rs := r.NextRetry[q]
		if rs == nil {
			continue
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %d | %d |\n", q, rs.N, dur(rs.P50), dur(rs.P90), dur(rs.Max), pct(rs.WithinWindowRate), dur(rs.WidthP50), rs.Unbounded, rs.Censored)
	}
	fmt.Fprintln(w)
	if r.Verbose {
		for _, q := range queueOrder {
			if rs := r.NextRetry[q]; rs != nil && len(rs.Worst) > 0 {
				fmt.Fprintf(w, "Largest next-retry errors, %s:\n", q)
				for _, s := range rs.Worst {
					fmt.Fprintf(w, "- %s\n", s)
				}
				fmt.Fprintln(w)
			}
		}
	}
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
