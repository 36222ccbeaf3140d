// Package status is the model behind `kubectl schedq status`: what the
// live scheduler's queue is doing, from one or two metricscrape snapshots,
// and the signals an operator should look at. Pure: values in, values out;
// the command does the scraping and the printing.
package status

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

// SchedulerStatus is what `status` shows; -o json|yaml prints it as is.
type SchedulerStatus struct {
	metav1.TypeMeta `json:",inline"`

	// Time is when the (second) snapshot was taken.
	Time metav1.Time `json:"time"`
	// Source says where the metrics came from.
	Source metricscrape.Origin `json:"source"`
	// Scheduler is the scheduler's identity.
	Scheduler SchedulerIdentity `json:"scheduler"`
	// FeatureGates are the gates that change the queue, as the scheduler
	// reports them.
	FeatureGates []FeatureGateStatus `json:"featureGates"`
	// Pending is scheduler_pending_pods.
	Pending PendingPods `json:"pending"`
	// QueuedEntities is scheduler_queued_entities (v1.37), by queue and type.
	QueuedEntities []QueuedEntities `json:"queuedEntities,omitempty"`
	// RateWindow is the time the rates are measured over; absent when there
	// are no rates (a file).
	RateWindow *metav1.Duration `json:"rateWindow,omitempty"`
	// RatesReset is set when a counter went down in the window.
	RatesReset bool `json:"ratesReset,omitempty"`
	// Incoming is scheduler_queue_incoming_pods_total, busiest first.
	Incoming []IncomingPods `json:"incoming"`
	// Attempts is scheduler_schedule_attempts_total by result.
	Attempts []ScheduleAttempts `json:"attempts"`
	// Scheduled summarises the pods bound so far.
	Scheduled ScheduledPods `json:"scheduled"`
	// Signals are the conditions worth a look.
	Signals []Signal `json:"signals"`
	// Error is set on a --watch frame whose scrape failed; the rest is the
	// last good picture.
	Error string `json:"error,omitempty"`
	// Warnings name the series whose values look wrong, and the source.
	Warnings []string `json:"warnings,omitempty"`

	snapshot *metricscrape.Snapshot
}

// SchedulerIdentity says which scheduler answered.
type SchedulerIdentity struct {
	Version string `json:"version,omitempty"`
	// Model is the queue model whose names and rules read the metrics: the
	// scheduler's minor version, or the current release when the version
	// is unknown (ModelNote then says why).
	Model     string   `json:"model"`
	ModelNote string   `json:"modelNote,omitempty"`
	GitCommit string   `json:"gitCommit,omitempty"`
	GoVersion string   `json:"goVersion,omitempty"`
	Platform  string   `json:"platform,omitempty"`
	Profiles  []string `json:"profiles,omitempty"`
	// Leader is leader_election_master_status, when reported.
	Leader *bool `json:"leader,omitempty"`
}

// FeatureGateStatus is one gate.
type FeatureGateStatus struct {
	Name    string `json:"name"`
	Enabled bool   `json:"enabled"`
	Stage   string `json:"stage,omitempty"`
}

// PendingPods is scheduler_pending_pods by queue, in upstream's words.
// IncompletePodGroupPods and PendingPodGroupPods are v1.37's (pod-group
// members waiting for their group), absent where the scheduler has no such
// queue.
type PendingPods struct {
	Active                 int64  `json:"activeQ"`
	Backoff                int64  `json:"backoffQ"`
	Unschedulable          int64  `json:"unschedulablePods"`
	Gated                  int64  `json:"gated"`
	IncompletePodGroupPods *int64 `json:"incompletePodGroupPods,omitempty"`
	PendingPodGroupPods    *int64 `json:"pendingPodGroupPods,omitempty"`
	Total                  int64  `json:"total"`
}

// QueuedEntities is one series of v1.37's scheduler_queued_entities: the
// entities (pods, or pod groups queued whole) of one type in one queue.
type QueuedEntities struct {
	Queue string `json:"queue"`
	Type  string `json:"type"`
	Count int64  `json:"count"`
}

// IncomingPods is one (queue, event) series of scheduler_queue_incoming_pods_total.
type IncomingPods struct {
	// Queue is upstream's word for the queue label (queue.QueueWord):
	// activeQ, backoffQ or unschedulablePods.
	Queue string `json:"queue"`
	Event string `json:"event"`
	Total int64  `json:"total"`
	// PerSecond is the rate over the window; absent without rates.
	PerSecond *float64 `json:"perSecond,omitempty"`
}

// ScheduleAttempts is one result of scheduler_schedule_attempts_total.
type ScheduleAttempts struct {
	Result    string   `json:"result"`
	Total     int64    `json:"total"`
	PerSecond *float64 `json:"perSecond,omitempty"`
}

// ScheduledPods summarises the SLI and attempts histograms.
type ScheduledPods struct {
	// Pods is how many pods were bound since the scheduler started.
	Pods int64 `json:"pods"`
	// SLIp50 and SLIp99 estimate scheduler_pod_scheduling_sli_duration_seconds'
	// quantiles over all attempt counts: from the first activeQ entry to bound.
	SLIp50 *metav1.Duration `json:"sliP50,omitempty"`
	SLIp99 *metav1.Duration `json:"sliP99,omitempty"`
	// MeanAttempts is scheduler_pod_scheduling_attempts' mean.
	MeanAttempts float64 `json:"meanAttempts"`
}

// Signal is a condition worth an operator's look.
type Signal struct {
	// Name is stable, for scripts: BackoffQWaitsWhileActiveQEmpty,
	// PopFromBackoffQWhileActiveQBusy, NoPodScheduled, NotLeader, RatesReset.
	Name string `json:"name"`
	// Severity is Warning or Info.
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// The signal names.
const (
	SignalBackoffQWaitsWhileActiveQEmpty  = "BackoffQWaitsWhileActiveQEmpty"
	SignalPopFromBackoffQWhileActiveQBusy = "PopFromBackoffQWhileActiveQBusy"
	SignalNoPodScheduled                  = "NoPodScheduled"
	SignalNotLeader                       = "NotLeader"
	SignalRatesReset                      = "RatesReset"

	SeverityWarning = "Warning"
	SeverityInfo    = "Info"
)

// SchedulerStatusAPIVersion and SchedulerStatusKind identify -o json|yaml output.
const (
	SchedulerStatusAPIVersion = "schedq.kubectl-schedq.io/v1alpha1"
	SchedulerStatusKind       = "SchedulerStatus"
)

// NewSchedulerStatus builds the status from a snapshot and, when prev is
// not nil, the rates since prev.
func NewSchedulerStatus(prev, cur *metricscrape.Snapshot) (*SchedulerStatus, error) {
	st := &SchedulerStatus{
		TypeMeta: metav1.TypeMeta{APIVersion: SchedulerStatusAPIVersion, Kind: SchedulerStatusKind},
		Time:     metav1.NewTime(cur.Time),
		Source:   cur.Origin,
		Scheduler: SchedulerIdentity{
			Version:   cur.Build.GitVersion,
			GitCommit: cur.Build.GitCommit,
			GoVersion: cur.Build.GoVersion,
			Platform:  cur.Build.Platform,
			Profiles:  cur.Profiles,
			Leader:    cur.Leader,
		},
		FeatureGates: []FeatureGateStatus{},
		Pending: PendingPods{
			IncompletePodGroupPods: countIfReported(cur.Pending, metricscrape.QueueIncomplete),
			PendingPodGroupPods:    countIfReported(cur.Pending, metricscrape.QueuePending),
			Active:                 count(cur.Pending[metricscrape.QueueActive]),
			Backoff:                count(cur.Pending[metricscrape.QueueBackoff]),
			Unschedulable:          count(cur.Pending[metricscrape.QueueUnschedulable]),
			Gated:                  count(cur.Pending[metricscrape.QueueGated]),
			Total:                  count(cur.PendingTotal()),
		},
		Incoming: []IncomingPods{},
		Attempts: []ScheduleAttempts{},
		Signals:  []Signal{},
		Warnings: cur.Warnings,
		snapshot: cur,
	}
	if v, err := cur.SchedulerVersion(); err == nil {
		st.Scheduler.Model = v.String()
	} else {
		st.Scheduler.Model = queue.DefaultVersion.String()
		st.Scheduler.ModelNote = err.Error() + "; read as " + queue.DefaultVersion.String()
	}
	for k, n := range cur.QueuedEntities {
		st.QueuedEntities = append(st.QueuedEntities, QueuedEntities{Queue: queue.QueueWord(k.Queue), Type: k.Type, Count: count(n)})
	}
	sort.Slice(st.QueuedEntities, func(i, j int) bool {
		a, b := st.QueuedEntities[i], st.QueuedEntities[j]
		if a.Queue != b.Queue {
			return a.Queue < b.Queue
		}
		return a.Type < b.Type
	})
	for _, g := range metricscrape.QueueGates {
		if fg, ok := cur.FeatureGates[g]; ok {
			st.FeatureGates = append(st.FeatureGates, FeatureGateStatus{Name: g, Enabled: fg.Enabled, Stage: fg.Stage})
		}
	}

	var rates *metricscrape.Rates
	if prev != nil {
		var err error
		if rates, err = metricscrape.NewRates(prev, cur); err != nil {
			return nil, err
		}
		st.RateWindow = &metav1.Duration{Duration: rates.Window}
		st.RatesReset = rates.Reset
	}
	for _, k := range cur.IncomingKeys() {
		in := IncomingPods{Queue: queue.QueueWord(k.Queue), Event: k.Event, Total: count(cur.Incoming[k])}
		if rates != nil {
			in.PerSecond = rate(rates.Incoming[k])
		}
		st.Incoming = append(st.Incoming, in)
	}
	sort.SliceStable(st.Incoming, func(i, j int) bool {
		a, b := st.Incoming[i], st.Incoming[j]
		if a.PerSecond != nil && b.PerSecond != nil && *a.PerSecond != *b.PerSecond {
			return *a.PerSecond > *b.PerSecond
		}
		return a.Total > b.Total
	})
	for _, r := range metricscrape.Results {
		a := ScheduleAttempts{Result: r, Total: count(cur.Attempts[r])}
		if rates != nil {
			a.PerSecond = rate(rates.Attempts[r])
		}
		st.Attempts = append(st.Attempts, a)
	}

	var sli metricscrape.Histogram
	for _, h := range cur.SLI {
		sli = mergeHistograms(sli, h)
	}
	st.Scheduled.Pods = count(sli.Count)
	if p := sli.Quantile(0.5); !math.IsNaN(p) {
		st.Scheduled.SLIp50 = &metav1.Duration{Duration: seconds(p)}
	}
	if p := sli.Quantile(0.99); !math.IsNaN(p) {
		st.Scheduled.SLIp99 = &metav1.Duration{Duration: seconds(p)}
	}
	st.Scheduled.MeanAttempts = math.Round(cur.PodSchedulingAttempts.Mean()*100) / 100

	st.Signals = signals(prev, cur, rates)
	return st, nil
}

// countIfReported is pending[q] when the scheduler reported queue q.
func countIfReported(pending map[string]float64, q string) *int64 {
	v, ok := pending[q]
	if !ok {
		return nil
	}
	n := count(v)
	return &n
}

// signals finds the conditions KEP-5142 names for operators, and a few
// that make the others unreliable.
func signals(prev, cur *metricscrape.Snapshot, rates *metricscrape.Rates) []Signal {
	out := []Signal{}
	active := cur.Pending[metricscrape.QueueActive]
	backoff := cur.Pending[metricscrape.QueueBackoff]
	pfb, pfbKnown := cur.GateEnabled(metricscrape.GateSchedulerPopFromBackoffQ)

	if cur.Leader != nil && !*cur.Leader {
		out = append(out, Signal{Name: SignalNotLeader, Severity: SeverityWarning,
			Message: "this scheduler is not the leader: its queue is idle; read the Lease holder's metrics instead"})
	}
	if rates != nil && rates.Reset {
		out = append(out, Signal{Name: SignalRatesReset, Severity: SeverityInfo,
			Message: "a counter went down during the window: the scheduler restarted or another one took the lead; rates count from zero"})
	}

	// 1. activeQ empty while backoffQ holds pods.
	if active == 0 && backoff > 0 {
		persisted := prev != nil && prev.Pending[metricscrape.QueueActive] == 0 && prev.Pending[metricscrape.QueueBackoff] > 0
		sev := SeverityInfo
		var msg string
		switch {
		case pfbKnown && pfb:
			msg = fmt.Sprintf("activeQ is empty while backoffQ holds %s: with SchedulerPopFromBackoffQ on the scheduler pops them at once, "+
				"except pods backing off after errors (never popped early)", pods(backoff))
			if persisted {
				sev = SeverityWarning
				msg += "; it lasted across both scrapes, so these are error backoffs or Pop missed a wakeup (kubernetes#130976)"
			}
		case pfbKnown && !pfb:
			msg = fmt.Sprintf("activeQ is empty while backoffQ holds %s: with SchedulerPopFromBackoffQ off they wait out their backoff (1-10 s by default) while the scheduler idles", pods(backoff))
			if persisted {
				sev = SeverityWarning
			}
		default:
			msg = fmt.Sprintf("activeQ is empty while backoffQ holds %s", pods(backoff))
		}
		out = append(out, Signal{Name: SignalBackoffQWaitsWhileActiveQEmpty, Severity: sev, Message: msg})
	}

	if rates == nil {
		return out
	}
	// 2. PopFromBackoffQ rising while activeQ is not empty.
	if popRate := rates.Incoming[metricscrape.QueueEvent{Queue: metricscrape.QueueActive, Event: metricscrape.EventPopFromBackoffQ}]; popRate > 0 && active > 0 {
		out = append(out, Signal{Name: SignalPopFromBackoffQWhileActiveQBusy, Severity: SeverityInfo,
			Message: fmt.Sprintf("%s/s popped from backoffQ before their backoff ended while activeQ holds %s: activeQ runs dry between scrapes; "+
				"if unschedulable attempts are high too, backoffQ pods are retried early and fail again", FormatRate(popRate), pods(active))})
	}
	// 3. No scheduled attempts while pods are pending.
	waiting := active + backoff + cur.Pending[metricscrape.QueueUnschedulable]
	if rates.Attempts[metricscrape.ResultScheduled] == 0 && waiting > 0 {
		failed := rates.Attempts[metricscrape.ResultUnschedulable] + rates.Attempts[metricscrape.ResultError]
		var msg, sev string
		switch {
		case failed > 0:
			sev = SeverityWarning
			msg = fmt.Sprintf("no pod scheduled in the last %s while %s wait; every attempt failed (%s/s unschedulable, %s/s error)",
				FormatWindow(rates.Window), pods(waiting), FormatRate(rates.Attempts[metricscrape.ResultUnschedulable]), FormatRate(rates.Attempts[metricscrape.ResultError]))
		case active > 0:
			sev = SeverityWarning
			msg = fmt.Sprintf("no scheduling attempt in the last %s although activeQ holds %s: is this scheduler the leader, or is it stuck?",
				FormatWindow(rates.Window), pods(active))
		default:
			sev = SeverityInfo
			msg = fmt.Sprintf("no pod scheduled in the last %s while %s wait in backoffQ or unschedulablePods for their backoff or a cluster event",
				FormatWindow(rates.Window), pods(waiting))
		}
		out = append(out, Signal{Name: SignalNoPodScheduled, Severity: sev, Message: msg})
	}
	return out
}

func mergeHistograms(a, b metricscrape.Histogram) metricscrape.Histogram {
	out := metricscrape.Histogram{Count: a.Count + b.Count, Sum: a.Sum + b.Sum}
	byBound := map[float64]float64{}
	for _, bk := range a.Buckets {
		byBound[bk.UpperBound] += bk.CumulativeCount
	}
	for _, bk := range b.Buckets {
		byBound[bk.UpperBound] += bk.CumulativeCount
	}
	for bound, n := range byBound {
		out.Buckets = append(out.Buckets, metricscrape.Bucket{UpperBound: bound, CumulativeCount: n})
	}
	sort.Slice(out.Buckets, func(i, j int) bool { return out.Buckets[i].UpperBound < out.Buckets[j].UpperBound })
	return out
}

func count(v float64) int64 { return int64(math.Round(v)) }

func rate(v float64) *float64 {
	r := math.Round(v*100) / 100
	return &r
}

func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond)
}

func pods(n float64) string {
	if count(n) == 1 {
		return "1 pod"
	}
	return fmt.Sprintf("%d pods", count(n))
}

// FormatRate prints a rate with at most two decimals.
func FormatRate(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// FormatWindow prints a rate window to a tenth of a second.
func FormatWindow(d time.Duration) string {
	return d.Round(100 * time.Millisecond).String()
}

// DeepCopy copies the status.
func (s *SchedulerStatus) DeepCopy() *SchedulerStatus {
	if s == nil {
		return nil
	}
	out := *s
	out.Scheduler.Profiles = append([]string(nil), s.Scheduler.Profiles...)
	if s.Scheduler.Leader != nil {
		l := *s.Scheduler.Leader
		out.Scheduler.Leader = &l
	}
	out.FeatureGates = append([]FeatureGateStatus(nil), s.FeatureGates...)
	if s.RateWindow != nil {
		w := *s.RateWindow
		out.RateWindow = &w
	}
	out.Incoming = make([]IncomingPods, len(s.Incoming))
	for i, in := range s.Incoming {
		out.Incoming[i] = in
		if in.PerSecond != nil {
			r := *in.PerSecond
			out.Incoming[i].PerSecond = &r
		}
	}
	out.Attempts = make([]ScheduleAttempts, len(s.Attempts))
	for i, a := range s.Attempts {
		out.Attempts[i] = a
		if a.PerSecond != nil {
			r := *a.PerSecond
			out.Attempts[i].PerSecond = &r
		}
	}
	if s.Scheduled.SLIp50 != nil {
		d := *s.Scheduled.SLIp50
		out.Scheduled.SLIp50 = &d
	}
	if s.Scheduled.SLIp99 != nil {
		d := *s.Scheduled.SLIp99
		out.Scheduled.SLIp99 = &d
	}
	out.Signals = append([]Signal(nil), s.Signals...)
	out.Warnings = append([]string(nil), s.Warnings...)
	return &out
}

// DeepCopyObject implements runtime.Object.
func (s *SchedulerStatus) DeepCopyObject() runtime.Object { return s.DeepCopy() }

// Snapshot is the snapshot the status was built from, for the next one's
// rates (nil for a status read back from JSON).
func (s *SchedulerStatus) Snapshot() *metricscrape.Snapshot { return s.snapshot }
