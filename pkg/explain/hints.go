package explain

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/klog/v2"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

// nodeAddMoves reports whether kube-scheduler v1.36.3 moves a pod that the
// plugins rejected out of unschedulablePods when node is added: whether one
// of them registers NodeAdd and its queueing hint answers Queue for this
// node. Hints are approximated from the objects: a plugin this package does
// not model answers Queue when it registers NodeAdd, as upstream does for a
// plugin without a hint.
func nodeAddMoves(pod *corev1.Pod, plugins []string, node *corev1.Node) bool {
	for _, pl := range plugins {
		registered := false
		for _, ev := range queue.DefaultPluginEvents[pl] {
			if ev.Resource == queue.ResourceNode && ev.ActionType&queue.Add != 0 {
				registered = true
			}
		}
		if !registered {
			continue
		}
		switch pl {
		case "NodeResourcesFit":
			if fitsEmptyNode(pod, node) {
				return true
			}
		case "NodeAffinity":
			if matchesNodeAffinity(pod, node) {
				return true
			}
		case "TaintToleration":
			if toleratesNode(pod, node) {
				return true
			}
		case "NodeUnschedulable":
			if !node.Spec.Unschedulable || toleratesUnschedulable(pod) {
				return true
			}
		case "NodeName":
			if pod.Spec.NodeName == "" || pod.Spec.NodeName == node.Name {
				return true
			}
		default:
			return true
		}
	}
	return false
}

// nodesAddedAfter returns the nodes created after t, when the pod failed
// with a message that counted numAllNodes nodes (-1: unknown). Creation
// times have whole seconds: a node created in t's second counts as added
// after t when the message counted fewer nodes than existed by the end of
// that second.
func nodesAddedAfter(nodes []*corev1.Node, t time.Time, numAllNodes int) []*corev1.Node {
	sec := t.Truncate(time.Second)
	var after, same []*corev1.Node
	before := 0
	for _, n := range nodes {
		c := n.CreationTimestamp.Time.Truncate(time.Second)
		switch {
		case c.After(sec):
			after = append(after, n)
		case c.Equal(sec):
			same = append(same, n)
		default:
			before++
		}
	}
	if len(same) > 0 && (numAllNodes < 0 || before+len(same) > numAllNodes) {
		after = append(after, same...)
	}
	return after
}

// fitsEmptyNode is NodeResourcesFit's check against a node without pods:
// every resource the pod requests fits the node's allocatable.
func fitsEmptyNode(pod *corev1.Pod, node *corev1.Node) bool {
	alloc := node.Status.Allocatable
	if q, ok := alloc[corev1.ResourcePods]; ok && q.Value() < 1 {
		return false
	}
	for name, req := range podRequests(pod) {
		if req.IsZero() {
			continue
		}
		have, ok := alloc[name]
		if !ok || have.Cmp(req) < 0 {
			return false
		}
	}
	return true
}

// podRequests is what the pod asks for: its containers' requests added up,
// or the largest init container's if that is more, plus the overhead.
func podRequests(pod *corev1.Pod) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, c := range pod.Spec.Containers {
		for name, q := range c.Resources.Requests {
			sum := out[name]
			sum.Add(q)
			out[name] = sum
		}
	}
	for _, c := range pod.Spec.InitContainers {
		for name, q := range c.Resources.Requests {
			if cur, ok := out[name]; !ok || q.Cmp(cur) > 0 {
				out[name] = q.DeepCopy()
			}
		}
	}
	for name, q := range pod.Spec.Overhead {
		sum := out[name]
		sum.Add(q)
		out[name] = sum
	}
	if pod.Spec.Resources != nil {
		for name, q := range pod.Spec.Resources.Requests {
			out[name] = q.DeepCopy()
		}
	}
	return out
}

// matchesNodeAffinity checks the pod's nodeSelector and required node
// affinity against the node.
func matchesNodeAffinity(pod *corev1.Pod, node *corev1.Node) bool {
	if len(pod.Spec.NodeSelector) > 0 && !labels.SelectorFromSet(pod.Spec.NodeSelector).Matches(labels.Set(node.Labels)) {
		return false
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if matchesTerm(term, node) {
			return true
		}
	}
	return false
}

func matchesTerm(term corev1.NodeSelectorTerm, node *corev1.Node) bool {
	if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
		return false
	}
	for _, r := range term.MatchExpressions {
		if !matchesRequirement(r, node.Labels) {
			return false
		}
	}
	for _, r := range term.MatchFields {
		if r.Key != "metadata.name" || !matchesRequirement(r, map[string]string{r.Key: node.Name}) {
			return false
		}
	}
	return true
}

func matchesRequirement(r corev1.NodeSelectorRequirement, set map[string]string) bool {
	op := map[corev1.NodeSelectorOperator]selection.Operator{
		corev1.NodeSelectorOpIn: selection.In, corev1.NodeSelectorOpNotIn: selection.NotIn,
		corev1.NodeSelectorOpExists: selection.Exists, corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
		corev1.NodeSelectorOpGt: selection.GreaterThan, corev1.NodeSelectorOpLt: selection.LessThan,
	}[r.Operator]
	if op == "" {
		return false
	}
	req, err := labels.NewRequirement(r.Key, op, r.Values)
	if err != nil {
		return false
	}
	return req.Matches(labels.Set(set))
}

// toleratesNode: the pod tolerates every NoSchedule and NoExecute taint of
// the node.
func toleratesNode(pod *corev1.Pod, node *corev1.Node) bool {
	for i := range node.Spec.Taints {
		taint := &node.Spec.Taints[i]
		if taint.Effect != corev1.TaintEffectNoSchedule && taint.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		tolerated := false
		for j := range pod.Spec.Tolerations {
			if pod.Spec.Tolerations[j].ToleratesTaint(klog.Background(), taint, true) {
				tolerated = true
				break
			}
		}
		if !tolerated {
			return false
		}
	}
	return true
}

func toleratesUnschedulable(pod *corev1.Pod) bool {
	taint := &corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}
	for i := range pod.Spec.Tolerations {
		if pod.Spec.Tolerations[i].ToleratesTaint(klog.Background(), taint, true) {
			return true
		}
	}
	return false
}
