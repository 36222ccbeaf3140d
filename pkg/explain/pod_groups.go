package explain

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

// PodGroup is what explain says of a pod-group member's group (v1.37 with
// GenericWorkload, where the queue holds the group as one entity).
type PodGroup struct {
	// Name is the PodGroup (the pod's spec.schedulingGroup.podGroupName).
	Name string `json:"name"`
	// Observed is whether the PodGroup object exists: until the scheduler
	// observes it, its members wait in incompletePodGroupPods.
	Observed bool `json:"observed"`
	// PendingMembers are the group's pods not yet bound.
	PendingMembers int `json:"pendingMembers"`
	// MinCount is the gang policy's minimum, 0 for the basic policy; the
	// group's cycles fail until that many members exist.
	MinCount int32 `json:"minCount,omitempty"`
	// WaitingFor is how many more members a gang needs (MinCount less the
	// pending members), 0 when it has enough.
	WaitingFor int32 `json:"waitingFor,omitempty"`
	// GatedBy are the members whose scheduling gates hold the whole group.
	GatedBy []string `json:"gatedBy,omitempty"`
	// MaxBackoff is the group's maximum backoff: the pods' times √(members
	// queued).
	MaxBackoff string `json:"maxBackoff,omitempty"`
}

// podGroupName is the pod's PodGroup, or "".
func podGroupName(p *corev1.Pod) string {
	if g := p.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil {
		return *g.PodGroupName
	}
	return ""
}

// GroupsQueued reports whether the scheduler queues pods by group: v1.37
// with GenericWorkload (earlier versions queue members one by one).
func GroupsQueued(in Input) bool {
	if in.version() < queue.V1_37 {
		return false
	}
	return in.Metrics != nil && in.Metrics.GenericWorkload != nil && *in.Metrics.GenericWorkload
}

// podGroupIndex is the pending members of each group, by namespace/name.
type podGroupIndex struct {
	members map[string][]*podFacts
	objects map[string]*schedulingv1beta1.PodGroup
	// listed is whether PodGroups were read at all.
	listed bool
}

func indexPodGroups(order []*podFacts, in Input) *podGroupIndex {
	ix := &podGroupIndex{members: map[string][]*podFacts{}, objects: map[string]*schedulingv1beta1.PodGroup{}, listed: in.PodGroups != nil}
	for _, f := range order {
		if f.state != StatePending {
			continue
		}
		if g := podGroupName(f.pod); g != "" {
			k := f.pod.Namespace + "/" + g
			ix.members[k] = append(ix.members[k], f)
		}
	}
	for _, pg := range in.PodGroups {
		ix.objects[pg.Namespace+"/"+pg.Name] = pg
	}
	return ix
}

// followGroupRetries treats the failed members of each group that is not
// gated as the group's entity is treated: a failed group goes back whole to
// the error heap (it carries no rejector plugins), is never parked, and is
// retried when its √n backoff completes, as an error pod is. Its members'
// failures are followed from the last visible one, as an error pod's are,
// so that a group whose event series hides its later cycles is placed in
// the error heap rather than taken to be ready; the queue counts then weigh
// them with the other pods.
func (ix *podGroupIndex) followGroupRetries(in Input, ob *observer) {
	for k, members := range ix.members {
		if _, observed := ix.objects[k]; ix.listed && !observed {
			continue // incompletePodGroupPods
		}
		gated := false
		for _, m := range members {
			gated = gated || len(m.gates) > 0
		}
		if gated {
			continue
		}
		cfg := in.Config
		cfg.PodMaxBackoff = queue.GroupMaxBackoff(in.Config.PodMaxBackoff, len(members))
		for _, m := range members {
			if m.failure == nil || m.category != catFitFailed && m.category != catErrorBackingOff {
				continue
			}
			grace := popToFailure
			if !ob.activeEmpty {
				grace = max(readyGrace, ob.activeWait)
			}
			m.cycle = extrapolateErrors(m.failure.Time, max(m.failure.Count, 1), grace, ob.activeWait, in.Now, cfg, ob.grid)
			m.category = catErrorBackingOff
			m.movedAt, m.movedBy, m.outOfParking = time.Time{}, "", 0
			if m.cycle.hidden > 0 {
				m.evidence = append(m.evidence, fmt.Sprintf("the event series hides later cycles of the group: %d more estimated from its backoff's rhythm, the last at about %s",
					m.cycle.hidden, m.cycle.lastFailure.Format(time.RFC3339)))
			}
		}
	}
}

// explainPodGroupMember rewrites a member's answer from its group's state:
// v1.37 queues, pops and backs off the group as a whole.
func explainPodGroupMember(e Explanation, f *podFacts, in Input, ix *podGroupIndex, pl placement) Explanation {
	name := podGroupName(f.pod)
	k := f.pod.Namespace + "/" + name
	members := ix.members[k]
	pg := &PodGroup{Name: name, PendingMembers: len(members)}
	e.PodGroup = pg
	obj, observed := ix.objects[k]
	pg.Observed = observed
	if observed && obj.Spec.SchedulingPolicy.Gang != nil {
		pg.MinCount = obj.Spec.SchedulingPolicy.Gang.MinCount
		pg.WaitingFor = max(pg.MinCount-int32(len(members)), 0)
	}
	for _, m := range members {
		if len(m.gates) > 0 {
			pg.GatedBy = append(pg.GatedBy, m.pod.Name)
		}
	}
	sort.Strings(pg.GatedBy)
	size := max(len(members), 1)
	groupMax := queue.GroupMaxBackoff(in.Config.PodMaxBackoff, size)
	pg.MaxBackoff = groupMax.String()
	e.Alternatives = nil

	switch {
	case ix.listed && !observed:
		e.Queue, e.Confidence = queue.LocationIncomplete, 0.95
		e.Summary = fmt.Sprintf("its PodGroup %s does not exist: it waits in incompletePodGroupPods until the scheduler observes it", k)
		e.Reasons = []string{fmt.Sprintf("spec.schedulingGroup.podGroupName %s names no PodGroup in namespace %s", name, f.pod.Namespace)}
		e.NextRetry = &NextRetry{Note: "when the PodGroup is created"}
		return e
	case len(pg.GatedBy) > 0:
		e.Queue, e.Confidence = queue.LocationGated, 0.95
		e.Summary = fmt.Sprintf("gated: member(s) %s of pod group %s have scheduling gates, and one gated member holds the whole group", strings.Join(pg.GatedBy, ", "), name)
		e.Reasons = []string{"scheduling gates on " + strings.Join(pg.GatedBy, ", ")}
		e.NextRetry = &NextRetry{Triggers: []string{queue.PodGatesEliminated(true).Label()}, Note: "when the last member's last gate is removed"}
		return e
	}
	if !ix.listed {
		e.Evidence = append(e.Evidence, "PodGroups could not be read: the group is taken to exist")
	}
	if f.failure == nil {
		e.Summary = fmt.Sprintf("waiting in activeQ with its pod group %s (%d pod(s)), which is popped and tried as a whole", name, size)
		e.NextRetry = activeRetryGroup(in.Now)
		if pg.WaitingFor > 0 {
			e.Summary += fmt.Sprintf("; the gang needs %d more pod(s) (minCount %d), so its cycles fail until they exist", pg.WaitingFor, pg.MinCount)
		}
		e.Queue, e.Confidence = queue.LocationActive, 0.8
		return e
	}
	// A failed group goes back whole: to activeQ after a success with
	// members left, else to backoff — in the error heap, since the group
	// itself carries no rejector plugins — never to unschedulablePods.
	e.Plugins = nil
	if f.fit != nil {
		e.Plugins = f.fit.Plugins()
	}
	c := f.cycle
	if c == nil {
		// Not followed (a member that is not pending in the group's cycle).
		c = &errorCycle{failures: max(f.failure.Count, 1), lastFailure: f.failure.Time}
		c.popEarliest, c.popLatest = pl.grid.completion(queue.BackoffExpiry(f.failure.Time, 0, c.failures, in.Config.PodInitialBackoff, groupMax, pl.grid.pfb))
		f.dist = errorPrior(&podFacts{cycle: c}, in.Now)
	}
	e.Queue, e.Confidence, e.Alternatives = f.dist.best(locations(true))
	d := queue.CalculateBackoffDuration(in.Config.PodInitialBackoff, groupMax, c.failures)
	if e.Queue == queue.LocationErrorBackoff {
		earliest, latest := c.popEarliest, c.popLatest.Add(popSlack(pl))
		if !in.Now.Before(c.popLatest) {
			// Popped since, and failed again out of sight: the next cycle.
			cfg := in.Config
			cfg.PodMaxBackoff = groupMax
			earliest, latest = c.nextCycle(in.Now, cfg, pl.grid)
			latest = latest.Add(popSlack(pl))
		}
		e.Summary = fmt.Sprintf("its pod group %s (%d pod(s)) failed and backs off as a whole until %s; a group backs off in the error heap, so it is never popped early, even with SchedulerPopFromBackoffQ on and activeQ empty",
			name, size, earliest.Format(time.RFC3339))
		e.NextRetry = &NextRetry{Estimate: windowEstimate(earliest, latest, pl), Earliest: &earliest, Latest: &latest,
			Note: fmt.Sprintf("group backoff %s after failure %d (initial %s, max %s × √%d = %s)", d, c.failures, in.Config.PodInitialBackoff, in.Config.PodMaxBackoff, size, groupMax)}
	} else {
		e.Summary = fmt.Sprintf("its pod group %s (%d pod(s)) failed and its backoff has ended: back in activeQ, tried again as a whole (a failed group is never parked in unschedulablePods)", name, size)
		e.NextRetry = activeRetryGroup(in.Now)
		if e.Queue == queue.LocationInFlight {
			e.NextRetry = activeRetry(in.Now, 0, pl, true)
		}
	}
	if pg.WaitingFor > 0 {
		e.Summary += fmt.Sprintf("; the gang needs %d more pod(s) (minCount %d)", pg.WaitingFor, pg.MinCount)
	}
	return e
}

func activeRetryGroup(now time.Time) *NextRetry {
	return &NextRetry{Earliest: &now, Note: "when activeQ reaches the group"}
}
