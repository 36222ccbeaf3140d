package explain

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

// A pod that fails in its binding cycle had been assumed on a node; the
// scheduler forgets it and treats that as an AssignedPodDelete
// (handleBindingCycleError), which moves every pod whose rejecting plugins
// register it — NodeResourcesFit's hint answers Queue for any deleted
// scheduled pod — out of unschedulablePods. Pods failing their binding
// again and again (a webhook or a policy denying it) so retry the pods
// parked for want of resources each time.
var bindingCycleErrors = []string{"running Bind plugin", "running PreBind plugin", "running Permit plugin", "binding rejected"}

// failsInBindingCycle: the message is one of a failure after the pod was
// assumed.
func failsInBindingCycle(msg string) bool {
	for _, s := range bindingCycleErrors {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// movedByAssignedPodDelete: one of the plugins registers the deletion of an
// assigned pod.
func movedByAssignedPodDelete(plugins []string) bool {
	for _, pl := range plugins {
		for _, ev := range queue.DefaultPluginEvents[pl] {
			if ev.Resource == queue.ResourcePod && ev.ActionType&queue.Delete != 0 {
				return true
			}
		}
	}
	return false
}

// podDeletes are the times of the AssignedPodDelete events the pods' binding
// failures caused, visible or inferred, sorted.
func podDeletes(pods []*podFacts) []time.Time {
	var out []time.Time
	for _, f := range pods {
		if f.cycle == nil || f.failure == nil || !failsInBindingCycle(f.failure.Message) {
			continue
		}
		out = append(out, f.failure.Time)
		out = append(out, f.cycle.recent...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

// applyPodDeletes: a pod rejected by plugins that such a deletion moves,
// deleted after its last visible failure, was moved at the latest of them;
// those before it retried it, and its failures then are out of sight (the
// same message: the same event series).
func applyPodDeletes(pods []*podFacts, deletes []time.Time, now time.Time) {
	if len(deletes) == 0 {
		return
	}
	for _, f := range pods {
		if f.category != catFitFailed || !movedByAssignedPodDelete(f.fit.Plugins()) {
			continue
		}
		i := sort.Search(len(deletes), func(i int) bool { return deletes[i].After(f.failure.Time) })
		var after []time.Time
		for _, d := range deletes[i:] {
			if !d.After(now) {
				after = append(after, d)
			}
		}
		if len(after) == 0 {
			continue
		}
		last := after[len(after)-1]
		if last.After(f.movedAt) {
			f.movedAt, f.movedBy = last, ""
			f.retriedAt = time.Time{}
			if len(after) > 1 {
				// Retried after the one before, and failed again.
				f.retriedAt = after[len(after)-2].Add(popToFailure)
				f.hiddenFits = len(after) - 1
			}
			// Each move takes it out for about a retry; the moves recur.
			if span := now.Sub(f.failure.Time); span > 0 {
				f.outOfParking = min(float64(len(after))*float64(popToFailure)/float64(span), maxOutOfParking)
			}
			ev := fmt.Sprintf("%d binding failure(s) of other pods since its last failure, the last at about %s: each is an AssignedPodDelete (the scheduler forgets the assumed pod), which moves it out of unschedulablePods",
				len(after), last.Format(time.RFC3339))
			if len(after) > 1 {
				ev += fmt.Sprintf("; retried after each and parked again, so out of unschedulablePods about %.0f%% of the time", 100*f.outOfParking)
			}
			f.evidence = append(f.evidence, ev)
		}
	}
}

// maxOutOfParking bounds outOfParking: moved more often than once per retry,
// the pod is about as often out as in.
const maxOutOfParking = 0.5

// capParked keeps the pods that binding failures keep moving from being
// certain of unschedulablePods: the queue counts are of the scrape's
// instant, and at any instant such a pod is out for a retry with chance
// outOfParking. The rest goes to where a moved pod is (priorRetried's other
// places).
func capParked(pods []*podFacts) {
	for _, f := range pods {
		if f.category != catFitFailed || f.outOfParking == 0 || f.dist[locUnschedulable] <= 1-f.outOfParking {
			continue
		}
		keep := 1 - f.outOfParking
		var rest dist
		rest[locBackoff], rest[locActive], rest[locInFlight] = priorRetried[locBackoff], priorRetried[locActive], priorRetried[locInFlight]
		rest = rest.normalized()
		for i := range f.dist {
			f.dist[i] = rest[i] * f.outOfParking
		}
		f.dist[locUnschedulable] = keep
	}
}
