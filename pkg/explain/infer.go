package explain

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

// FailedSchedulingReason is the reason of the scheduler's failure events.
const FailedSchedulingReason = "FailedScheduling"

// Condition reasons of PodScheduled=False.
const (
	reasonUnschedulable  = "Unschedulable"
	reasonSchedulerError = "SchedulerError"
	reasonGated          = "SchedulingGated"
)

// Failure kinds.
const (
	FailureUnschedulable = "unschedulable"
	FailureError         = "error"
)

// podFacts is what is visible about one pod.
type podFacts struct {
	pod      *corev1.Pod
	state    State
	gates    []string
	failure  *Failure
	fit      *FitError
	evidence []string
	// category decides placement.
	category category
	// cycle is where an error pod is in its retry cycle.
	cycle *errorCycle
	// fitCount is how many times plugins rejected the pod (the events'
	// count: at least this many), which sets its backoff.
	fitCount int
	// movedAt is when a node was added that moves the pod out of
	// unschedulablePods (its plugins' hints answer Queue) after its last
	// failure; movedBy names it.
	movedAt time.Time
	movedBy string
	// retriedAt is when the pod is estimated to have last failed, out of
	// sight, after the events' last failure; hiddenFits counts those
	// failures.
	retriedAt  time.Time
	hiddenFits int
	// outOfParking is the share of the time since its last failure that
	// the pod spent out of unschedulablePods, moved by other pods' binding
	// failures and retried: the chance that it is out at any instant,
	// whatever the queue counts said at the scrape's.
	outOfParking float64
	// dist is where the pod may be, for pods rejected by plugins and pods
	// backing off after errors.
	dist dist
	// ahead is how many pods activeQ pops before this ready one.
	ahead int
	// hiddenSpan is how long, in all, the pod's failures could have gone
	// unwritten: after each series' last written failure, until the pod's
	// next event began (the pod changed: a new event) or, for the latest,
	// until now. A pod moved over and over shows a new event now and then
	// and hides most of its failures in the series between them.
	hiddenSpan time.Duration
	// attempts says how the attempts were found, when they were not
	// counted from the events; hiddenAttempts is the estimate of those the
	// events hide.
	attempts       *AttemptsCount
	hiddenAttempts int
}

type category int

const (
	catNotPending category = iota
	catGated
	catFitFailed
	catErrorBackingOff
	catReady // never failed, or an error whose backoff completed: activeQ or in flight
)

// Infer explains every pod of in.Pods, its confidence calibrated
// (calibration.go).
func Infer(in Input) []Explanation {
	out := InferUncalibrated(in)
	calibrateAll(out, fittedCalibration)
	return out
}

// InferUncalibrated is Infer with the model's own odds as the confidence:
// what the calibration is fitted on.
func InferUncalibrated(in Input) []Explanation {
	if in.Config == (Config{}) {
		in.Config = DefaultConfig()
	}
	schedulerName := in.SchedulerName
	if schedulerName == "" {
		schedulerName = corev1.DefaultSchedulerName
	}
	pfb, pfbKnown := true, false
	if in.Metrics != nil && in.Metrics.PopFromBackoffQ != nil {
		pfb, pfbKnown = *in.Metrics.PopFromBackoffQ, true
	}
	events := indexEvents(in.Events)
	perPod, fastest := pace(events)
	rateMeasured := in.Metrics != nil && in.Metrics.AttemptRate != nil && *in.Metrics.AttemptRate > 0
	if rateMeasured {
		perPod = max(time.Duration(float64(time.Second) / *in.Metrics.AttemptRate), time.Millisecond)
		fastest = perPod
	}
	ob := &observer{in: in, schedulerName: schedulerName, pfb: pfb,
		activeEmpty: in.Metrics != nil && in.Metrics.Pending[queue.LabelActive] == 0,
		grid:        learnGrid(pfb, afterFlush(events))}
	if in.Metrics != nil {
		ob.activeWait = min(time.Duration(in.Metrics.Pending[queue.LabelActive])*perPod, in.Config.PodMaxBackoff)
	}

	all := in.PendingPods
	if all == nil {
		all = in.Pods
	}
	facts := map[string]*podFacts{}
	var order []*podFacts
	observe := func(p *corev1.Pod) *podFacts {
		k := p.Namespace + "/" + p.Name
		if f, ok := facts[k]; ok {
			return f
		}
		f := ob.observePod(p, events[k])
		facts[k] = f
		order = append(order, f)
		return f
	}
	for _, p := range all {
		observe(p)
	}
	for _, p := range in.Pods {
		observe(p)
	}

	var groups *podGroupIndex
	if GroupsQueued(in) {
		groups = indexPodGroups(order, in)
		groups.followGroupRetries(in, ob)
	}
	applyPodDeletes(order, podDeletes(order), in.Now)
	shareHidden(order, countHidden(in, events, facts), fastest)
	pl := place(order, in, ob.grid, ob.activeEmpty)
	pl.perPod = perPod
	pl.rateMeasured = rateMeasured

	out := make([]Explanation, 0, len(in.Pods))
	for _, p := range in.Pods {
		f := facts[p.Namespace+"/"+p.Name]
		e := explainPod(f, pl, in, pfb, pfbKnown)
		if groups != nil && f.state == StatePending && podGroupName(p) != "" {
			e = explainPodGroupMember(e, f, in, groups, pl)
		}
		out = append(out, e)
	}
	return out
}

type eventSummary struct {
	first, last time.Time
	count       int
	message     string
	uid         string
	// fit: the message is a FitError (plugins rejected the pod).
	fit bool
	// series: an events.k8s.io series (count ≥ 2). Its count and last time
	// are written when the second failure is recorded and then only every
	// 30 minutes: later failures of the series are out of sight.
	series bool
}

func indexEvents(evs []corev1.Event) map[string][]eventSummary {
	out := map[string][]eventSummary{}
	for _, e := range evs {
		if e.Reason != FailedSchedulingReason || e.InvolvedObject.Kind != "" && e.InvolvedObject.Kind != "Pod" {
			continue
		}
		_, isFit := ParseFitError(e.Message)
		s := eventSummary{message: e.Message, uid: string(e.InvolvedObject.UID), count: 1, fit: isFit}
		if int(e.Count) > s.count {
			s.count = int(e.Count)
		}
		for _, t := range []time.Time{e.FirstTimestamp.Time, e.EventTime.Time, e.LastTimestamp.Time} {
			s.first = minTime(s.first, t)
			s.last = maxTime(s.last, t)
		}
		if e.Series != nil {
			if int(e.Series.Count) > s.count {
				s.count = int(e.Series.Count)
			}
			s.last = maxTime(s.last, e.Series.LastObservedTime.Time)
			s.series = true
		}
		k := e.InvolvedObject.Namespace + "/" + e.InvolvedObject.Name
		out[k] = append(out[k], s)
	}
	return out
}

// afterFlush are the error failures that followed a backoff flush: every
// one of a pod's errors but its first (popped on creation), as far as the
// events show them.
func afterFlush(events map[string][]eventSummary) []time.Time {
	var out []time.Time
	for _, evs := range events {
		var errs []eventSummary
		for _, e := range evs {
			if !e.fit {
				errs = append(errs, e)
			}
		}
		if len(errs) == 0 {
			continue
		}
		sort.Slice(errs, func(i, j int) bool { return errs[i].first.Before(errs[j].first) })
		for i, e := range errs {
			if i > 0 {
				out = append(out, e.first)
			}
			if e.series {
				out = append(out, e.last)
			}
		}
	}
	return out
}

func minTime(a, b time.Time) time.Time {
	if a.IsZero() || !b.IsZero() && b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func podScheduledCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodScheduled {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// observer reads what is visible of each pod.
type observer struct {
	in            Input
	schedulerName string
	pfb           bool
	// activeEmpty says the metrics show an empty activeQ: a pod whose
	// backoff completed cannot be waiting there.
	activeEmpty bool
	// activeWait is how long a pod entering activeQ now waits for its
	// turn: the pods the metrics put there, at the scheduler's pace.
	activeWait time.Duration
	grid       flushGrid
}

func (ob *observer) observePod(p *corev1.Pod, evs []eventSummary) *podFacts {
	schedulerName, now, cfg, activeEmpty := ob.schedulerName, ob.in.Now, ob.in.Config, ob.activeEmpty
	f := &podFacts{pod: p, state: StatePending, category: catNotPending}
	switch {
	case p.DeletionTimestamp != nil:
		f.state = StateDeleting
		return f
	case p.Spec.NodeName != "":
		f.state = StateBound
		return f
	case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
		f.state = StateFinished
		return f
	}
	name := p.Spec.SchedulerName
	if name == "" {
		name = corev1.DefaultSchedulerName
	}
	if name != schedulerName && !slices.Contains(ob.in.Profiles, name) || ob.in.NotServed != "" {
		f.state = StateOtherScheduler
		return f
	}
	for _, g := range p.Spec.SchedulingGates {
		f.gates = append(f.gates, g.Name)
	}
	if len(f.gates) > 0 {
		f.category = catGated
		f.evidence = append(f.evidence, fmt.Sprintf("spec.schedulingGates: %s", strings.Join(f.gates, ", ")))
		return f
	}

	// The last failure: the condition carries the latest message, events the
	// times and the (lagging) count.
	cond := podScheduledCondition(p)
	var fail *Failure
	var mine []eventSummary
	for _, e := range evs {
		if e.uid != "" && p.UID != "" && e.uid != string(p.UID) {
			continue // an earlier pod of the same name
		}
		mine = append(mine, e)
		if fail == nil {
			fail = &Failure{FirstTime: e.first, Message: e.message}
		}
		fail.Count += e.count
		fail.FirstTime = minTime(fail.FirstTime, e.first)
		if !e.last.Before(fail.Time) {
			fail.Time = e.last
			fail.Message = e.message
		}
	}
	// The latest events: how many errors in a row (the error backoff counts
	// them; a rejection by plugins resets it), and whether the latest event
	// is a series, whose later failures are out of sight.
	sort.SliceStable(mine, func(i, j int) bool { return mine[i].last.Before(mine[j].last) })
	consecutiveErrors, lagging, fitCount := 0, false, 0
	if n := len(mine); n > 0 {
		lagging = mine[n-1].series
	}
	for i, e := range mine {
		if !e.series {
			continue
		}
		end := now
		if i+1 < len(mine) {
			end = mine[i+1].first
		}
		if end.After(e.last) {
			f.hiddenSpan += end.Sub(e.last)
		}
	}
	inErrors := true
	for i := len(mine) - 1; i >= 0; i-- {
		if mine[i].fit {
			inErrors = false
			fitCount += mine[i].count
		} else if inErrors {
			consecutiveErrors += mine[i].count
		}
	}
	if fail != nil {
		f.evidence = append(f.evidence, fmt.Sprintf("%d FailedScheduling event(s), last at %s", fail.Count, fail.Time.Format(time.RFC3339)))
	}
	if cond != nil && cond.Status == corev1.ConditionFalse && cond.Reason != reasonGated {
		if fail == nil {
			fail = &Failure{Count: 1, Time: cond.LastTransitionTime.Time, FirstTime: cond.LastTransitionTime.Time}
		}
		if cond.Message != "" {
			fail.Message = cond.Message
		}
		fail.Time = maxTime(fail.Time, cond.LastTransitionTime.Time)
		f.evidence = append(f.evidence, fmt.Sprintf("condition PodScheduled=False, reason %s", cond.Reason))
	}
	if fail == nil {
		f.category = catReady
		f.evidence = append(f.evidence, "no FailedScheduling event and no PodScheduled=False condition: never failed")
		return f
	}
	f.failure = fail
	fe, isFit := ParseFitError(fail.Message)
	switch {
	case cond != nil && cond.Reason == reasonSchedulerError, !isFit:
		// No rejector plugins: the error backoff heap, never popped early.
		fail.Kind = FailureError
		// How long a pod past its pop may still be being retried: a
		// moment (its scheduling cycle and binding call), or, with
		// activeQ busy and the events current, a while in activeQ.
		grace := popToFailure
		if !lagging && !activeEmpty {
			grace = max(readyGrace, ob.activeWait)
		}
		f.cycle = extrapolateErrors(fail.Time, max(consecutiveErrors, 1), grace, ob.activeWait, now, cfg, ob.grid)
		if f.cycle.hidden > 0 {
			f.evidence = append(f.evidence, fmt.Sprintf("the event series hides later failures: %d more estimated from the error backoff's rhythm, the last at about %s",
				f.cycle.hidden, f.cycle.lastFailure.Format(time.RFC3339)))
		}
		// Backing off, moved by the flush, being retried or failed again:
		// the queue metrics settle which.
		f.category = catErrorBackingOff
	default:
		fail.Kind = FailureUnschedulable
		f.fit = &fe
		f.category = catFitFailed
		f.fitCount = max(fitCount, 1)
		if ob.in.Nodes != nil {
			plugins := fe.Plugins()
			for _, n := range nodesAddedAfter(ob.in.Nodes, fail.Time, fe.NumAllNodes) {
				if nodeAddMoves(p, plugins, n) && (f.movedAt.IsZero() || n.CreationTimestamp.Time.Before(f.movedAt)) {
					f.movedAt, f.movedBy = n.CreationTimestamp.Time, n.Name
				}
			}
			if !f.movedAt.IsZero() {
				f.evidence = append(f.evidence, fmt.Sprintf("node %s was added at %s, after the last failure, and %s would let the pod try it: the NodeAdd moved it out of unschedulablePods",
					f.movedBy, f.movedAt.Format(time.RFC3339), strings.Join(plugins, ", ")))
			}
		}
	}
	return f
}

func priority(p *corev1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// readySince is the activeQ timestamp: creation, or the last failure.
func readySince(f *podFacts) time.Time {
	if f.cycle != nil {
		return f.cycle.lastFailure
	}
	if f.failure != nil {
		return f.failure.Time
	}
	return f.pod.CreationTimestamp.Time
}

// explainPod writes one pod's Explanation from what was found about it.
func explainPod(f *podFacts, pl placement, in Input, pfb, pfbKnown bool) Explanation {
	p := f.pod
	e := Explanation{Namespace: p.Namespace, Name: p.Name, State: f.state, Gates: f.gates, Priority: priority(p), Evidence: f.evidence}
	if e.Evidence == nil {
		e.Evidence = []string{}
	}
	if f.failure != nil {
		e.LastFailure = f.failure
		e.Attempts = f.failure.Count
	}
	switch f.state {
	case StateBound:
		e.Summary = fmt.Sprintf("bound to node %s: not in the scheduling queue", p.Spec.NodeName)
		e.Reasons = []string{}
		return e
	case StateDeleting:
		e.Summary = "being deleted: the scheduler drops it from the queue"
		e.Reasons = []string{}
		return e
	case StateFinished:
		e.Summary = fmt.Sprintf("phase %s: not in the scheduling queue", p.Status.Phase)
		e.Reasons = []string{}
		return e
	case StateOtherScheduler:
		e.Summary = fmt.Sprintf("handled by scheduler %q, not by this one", p.Spec.SchedulerName)
		if in.NotServed != "" && p.Spec.SchedulerName == orDefault(in.SchedulerName, corev1.DefaultSchedulerName) {
			e.Summary = fmt.Sprintf("handled by scheduler %q, which no kube-scheduler here serves (a scheduler of another kind, or none running): in no queue explain can see", p.Spec.SchedulerName)
		}
		e.Reasons = []string{}
		return e
	}
	metricsNote := ""
	if in.Metrics == nil {
		metricsNote = "without the scheduler's metrics (" + orDefault(in.MetricsMissing, "not available") + ") the queue counts cannot confirm this"
	}
	gateNote := ""
	if !pfbKnown {
		gateNote = "SchedulerPopFromBackoffQ assumed on (the v1.36 default)"
	}
	add := func(s string) {
		if s != "" {
			e.Evidence = append(e.Evidence, s)
		}
	}

	switch f.category {
	case catGated:
		e.Queue, e.Confidence = queue.LocationGated, 0.99
		e.Summary = fmt.Sprintf("gated by scheduling gates %s: the scheduler will not try it until they are removed", strings.Join(f.gates, ", "))
		e.Reasons = []string{"spec.schedulingGates is not empty: " + strings.Join(f.gates, ", ")}
		e.NextRetry = &NextRetry{Triggers: []string{queue.PodGatesEliminated(in.version() >= queue.V1_37).Label()}, Note: "when the last gate is removed"}
	case catErrorBackingOff:
		c := f.cycle
		e.Queue, e.Confidence, e.Alternatives = f.dist.best(locations(true))
		e.Attempts = max(e.Attempts, f.failure.Count+c.hidden)
		e.AttemptsCount = errorAttempts(f)
		e.Reasons = []string{f.failure.Message}
		now := in.Now
		if e.Queue == queue.LocationErrorBackoff {
			// The flush moves it to activeQ; it is popped next.
			earliest, latest := c.popEarliest, c.popLatest.Add(popSlack(pl))
			if !now.Before(c.popLatest) {
				// Popped since, and failed again out of sight: the next
				// cycle.
				earliest, latest = c.nextCycle(now, in.Config, pl.grid)
				latest = latest.Add(popSlack(pl))
			}
			e.Summary = fmt.Sprintf("failed with an error; backing off in errorBackoffQ until %s (never popped early)", earliest.Format(time.RFC3339))
			e.NextRetry = &NextRetry{Estimate: windowEstimate(earliest, latest, pl), Earliest: &earliest, Latest: &latest, Note: "error backoff: " + backoffNote(c.failures, in.Config)}
		} else {
			e.Summary = "failed with an error; the queue metrics say it is no longer backing off: about to be retried"
			e.NextRetry = activeRetry(now, 0, pl, e.Queue == queue.LocationInFlight)
		}
		add(metricsNote)
	case catReady:
		if pl.inFlight[f] {
			e.Queue, e.Confidence = queue.LocationInFlight, 0.7
			e.Alternatives = []Alternative{{queue.LocationActive, 0.3}}
			e.Summary = "being scheduled now (popped from activeQ, not yet bound or failed)"
		} else {
			e.Queue, e.Confidence = queue.LocationActive, 0.8
			e.Alternatives = []Alternative{{queue.LocationInFlight, 0.2}}
			e.Summary = "waiting in activeQ for its turn"
		}
		if in.Metrics == nil {
			e.Confidence -= 0.2
		}
		if f.failure != nil {
			e.Reasons = []string{f.failure.Message}
			e.Summary += "; its error backoff has completed"
			if f.cycle != nil {
				e.Attempts = max(e.Attempts, f.failure.Count+f.cycle.hidden)
				e.AttemptsCount = errorAttempts(f)
			}
		} else {
			e.Reasons = []string{"not tried yet"}
		}
		e.NextRetry = activeRetry(in.Now, f.ahead, pl, pl.inFlight[f])
		add(metricsNote)
	case catFitFailed:
		e.Queue, e.Confidence, e.Alternatives = f.dist.best(locations(false))
		e.Attempts = max(e.Attempts, f.fitCount) + f.hiddenAttempts
		e.AttemptsCount = f.attempts
		e.Plugins = f.fit.Plugins()
		e.NodeReasons = f.fit.Reasons
		e.Reasons = fitReasons(f.fit)
		e.Summary = fitSummary(e.Queue, f.fit, e.Plugins)
		e.NextRetry = fitNextRetry(f, e.Queue, e.Plugins, in, pl)
		if e.Confidence < 0.9 && pl.fitNote != "" {
			add(pl.fitNote + "; the visible evidence cannot tell which")
		}
		add(metricsNote)
	}
	add(gateNote)
	return e
}

func fitReasons(fe *FitError) []string {
	var out []string
	if fe.PreFilterMsg != "" {
		out = append(out, fe.PreFilterMsg)
	}
	for _, r := range fe.Reasons {
		s := fmt.Sprintf("%d/%d nodes: %s", r.Count, fe.NumAllNodes, r.Reason)
		if r.Plugin != "" {
			s += " (" + r.Plugin + ")"
		}
		out = append(out, s)
	}
	if fe.PostFilterMsg != "" {
		out = append(out, fe.PostFilterMsg)
	}
	if fe.NumAllNodes == 0 && len(out) == 0 {
		out = append(out, "no nodes")
	}
	return out
}

func fitSummary(loc queue.Location, fe *FitError, plugins []string) string {
	who := "plugins"
	if len(plugins) > 0 {
		who = strings.Join(plugins, ", ")
	}
	switch loc {
	case queue.LocationUnschedulable:
		return fmt.Sprintf("unschedulable (rejected by %s on %d node(s)); parked in unschedulablePods until a cluster event may help", who, fe.NumAllNodes)
	case queue.LocationBackoff:
		return fmt.Sprintf("rejected by %s; a cluster event moved it to backoffQ", who)
	default:
		return fmt.Sprintf("rejected by %s; a cluster event moved it on and it is about to be retried", who)
	}
}

func fitNextRetry(f *podFacts, loc queue.Location, plugins []string, in Input, pl placement) *NextRetry {
	grid := pl.grid
	pfb := grid.pfb
	nr := &NextRetry{}
	seen := map[string]bool{}
	for _, p := range plugins {
		for _, l := range queue.IncomingEventLabels(p, in.version()) {
			if !seen[l] {
				seen[l] = true
				nr.Triggers = append(nr.Triggers, l)
			}
		}
	}
	sort.Strings(nr.Triggers)
	if len(f.fit.UnknownReasons()) > 0 {
		nr.Note = "some reasons come from plugins this tool does not know; their events are not listed. "
	}
	switch loc {
	case queue.LocationBackoff:
		done, latest := fitBackoffWindow(f, in.Config, grid)
		now := in.Now
		switch {
		case !f.movedAt.IsZero() && f.movedBy == "":
			// Its failures since the last visible one are inferred from
			// other pods' binding failures, and so is when its backoff
			// restarted: at most the longest backoff ago.
			_, latest = grid.completion(queue.AlignToWindow(now.Add(in.Config.PodMaxBackoff), pfb))
			done = now
			nr.Note += "its backoff restarted after failures the event series hides: at most " + in.Config.PodMaxBackoff.String() + " from now; "
		case latest.Before(now):
			// The backoff the events show is over, yet the pod backs off:
			// it failed again since, out of sight, and backs off anew, for
			// at most the longest backoff.
			_, latest = grid.completion(queue.AlignToWindow(now.Add(in.Config.PodMaxBackoff), pfb))
			done = now
			nr.Note += "it failed again after its last visible failure (the event series hides it), so its backoff restarted: at most " + in.Config.PodMaxBackoff.String() + "; "
		}
		nr.Latest = maxTimePtr(latest.Add(popSlack(pl)), now)
		if pfb && in.Metrics != nil && in.Metrics.Pending[queue.LabelActive] == 0 {
			nr.PopFromBackoffQ = true
			nr.Earliest = &now
			est := now.Add(pl.perPod)
			nr.Estimate = &est
			nr.Note += "activeQ is empty and SchedulerPopFromBackoffQ is on: it can be popped before its backoff ends"
		} else {
			nr.Earliest = maxTimePtr(done, now)
			nr.Estimate = windowEstimate(*nr.Earliest, *nr.Latest, pl)
			nr.Note += "backoff " + backoffNote(f.fitCount, in.Config)
		}
		nr.Triggers = nil
	case queue.LocationActive, queue.LocationInFlight:
		a := activeRetry(in.Now, 0, pl, loc == queue.LocationInFlight)
		nr.Estimate, nr.Earliest, nr.Latest, nr.Note = a.Estimate, a.Earliest, a.Latest, nr.Note+a.Note
		nr.Triggers = nil
	default:
		// The leftover flush retries it podMaxInUnschedulablePods after its
		// last failure, at the next 30 s run.
		latest := maxTime(f.failure.Time, f.retriedAt).Add(in.Config.PodMaxInUnschedulablePods + queue.UnschedulablePodsFlushInterval)
		if latest.Before(in.Now) {
			// It has been flushed and failed again since; the event series
			// hides the newer failure time.
			latest = in.Now.Add(in.Config.PodMaxInUnschedulablePods + queue.UnschedulablePodsFlushInterval)
			nr.Note += "retried by the leftover flush at least once since the last visible failure; "
		}
		nr.Latest = &latest
		nr.Note += fmt.Sprintf("on one of the trigger events, or at the latest by the %s leftover flush", in.Config.PodMaxInUnschedulablePods)
	}
	return nr
}

func backoffNote(count int, cfg Config) string {
	return fmt.Sprintf("%s after failure %d (initial %s, max %s)", queue.CalculateBackoffDuration(cfg.PodInitialBackoff, cfg.PodMaxBackoff, count), count, cfg.PodInitialBackoff, cfg.PodMaxBackoff)
}

func maxTimePtr(a, b time.Time) *time.Time {
	t := maxTime(a, b)
	return &t
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
