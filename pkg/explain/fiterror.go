package explain

import (
	"sort"
	"strconv"
	"strings"
)

// Failure messages the scheduler writes (FailedScheduling events and the
// PodScheduled condition), v1.36.3.
const (
	// noNodesAvailable is ErrNoNodesAvailable: an error, not a FitError, so
	// the pod goes to the error backoff heap.
	noNodesAvailable = "no nodes available to schedule pods"
	// skipDeleting is logged for pods being deleted.
	skipDeleting = "skip schedule deleting pod"
)

// reasonPlugins maps the node reasons of in-tree Filter plugins to the plugin
// that writes them. Prefixes match "Insufficient <resource>".
var reasonPlugins = []struct {
	prefix, plugin string
}{
	{"Insufficient ", "NodeResourcesFit"},
	{"Too many pods", "NodeResourcesFit"},
	{"node(s) had untolerated taint", "TaintToleration"},
	{"node(s) had taints that the pod didn't tolerate", "TaintToleration"},
	{"node(s) didn't match Pod's node affinity/selector", "NodeAffinity"},
	{"node(s) didn't match scheduler-enforced node affinity", "NodeAffinity"},
	{"node(s) were unschedulable", "NodeUnschedulable"},
	{"node(s) didn't have free ports for the requested pod ports", "NodePorts"},
	{"node(s) didn't match the requested node name", "NodeName"},
	{"node(s) didn't match pod topology spread constraints", "PodTopologySpread"},
	{"node(s) didn't satisfy existing pods anti-affinity rules", "InterPodAffinity"},
	{"node(s) didn't match pod affinity rules", "InterPodAffinity"},
	{"node(s) didn't match pod anti-affinity rules", "InterPodAffinity"},
	{"node(s) didn't find available persistent volumes to bind", "VolumeBinding"},
	{"node(s) didn't match PersistentVolume's node affinity", "VolumeBinding"},
	{"node(s) did not have enough free storage", "VolumeBinding"},
	{"node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)", "VolumeBinding"},
	{"pod has unbound immediate PersistentVolumeClaims", "VolumeBinding"},
	{"node(s) had no available volume zone", "VolumeZone"},
	{"node(s) had no available disk", "VolumeRestrictions"},
	{"node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode", "VolumeRestrictions"},
	{"node(s) exceed max volume count", "NodeVolumeLimits"},
	{"node(s) didn't match Pod's required features", "NodeDeclaredFeatures"},
}

// PluginForReason names the in-tree plugin that writes a node reason, or ""
// for a reason this package does not know (an out-of-tree plugin).
func PluginForReason(reason string) string {
	for _, r := range reasonPlugins {
		if strings.HasPrefix(reason, r.prefix) {
			return r.plugin
		}
	}
	return ""
}

// FitError is a parsed "0/N nodes are available: …" message.
type FitError struct {
	NumAllNodes int
	// PreFilterMsg is set when a PreFilter plugin rejected the pod.
	PreFilterMsg string
	// Reasons is the node-reason histogram.
	Reasons []NodeReason
	// PostFilterMsg is what came after (preemption's verdict).
	PostFilterMsg string
}

// NodeReason is one "<count> <reason>" entry.
type NodeReason struct {
	Count  int    `json:"count"`
	Reason string `json:"reason"`
	Plugin string `json:"plugin,omitempty"`
}

// ParseFitError parses a FitError message; ok is false for other messages.
// It reads "0/N nodes are available: …" by hand: it runs once per event,
// and as regular expressions it was a tenth of explain's time at 5,000 pods.
// TestParseFitErrorMatchesPattern holds it to the pattern it replaces.
func ParseFitError(msg string) (fe FitError, ok bool) {
	const head, mid = "0/", " nodes are available:"
	s := strings.TrimSpace(msg)
	if !strings.HasPrefix(s, head) {
		return fe, false
	}
	s = s[len(head):]
	n := leadingDigits(s)
	if n == 0 || !strings.HasPrefix(s[n:], mid) {
		return fe, false
	}
	fe.NumAllNodes, _ = strconv.Atoi(s[:n])
	body := strings.TrimLeft(s[n+len(mid):], " \t\n\f\r")
	if strings.Contains(body, "\n") {
		return FitError{}, false
	}
	// The filter part ends at the first ". " (or the final "."); preemption's
	// message follows.
	filter, post := body, ""
	if i := strings.Index(body, ". "); i >= 0 {
		filter, post = body[:i], strings.TrimSpace(body[i+2:])
	} else {
		filter = strings.TrimSuffix(body, ".")
	}
	fe.PostFilterMsg = post
	parts := strings.Split(filter, ", ")
	var entries []string
	for _, p := range parts {
		if _, _, ok := countEntry(p); ok || len(entries) == 0 {
			entries = append(entries, p)
		} else {
			// A reason that itself contains ", ".
			entries[len(entries)-1] += ", " + p
		}
	}
	for _, e := range entries {
		count, reason, ok := countEntry(e)
		if !ok {
			fe.PreFilterMsg = filter
			fe.Reasons = nil
			return fe, true
		}
		n, _ := strconv.Atoi(count)
		fe.Reasons = append(fe.Reasons, NodeReason{Count: n, Reason: reason, Plugin: PluginForReason(reason)})
	}
	return fe, true
}

// countEntry splits "<count> <reason>": digits, one space, and a reason of
// at least one character.
func countEntry(e string) (count, reason string, ok bool) {
	n := leadingDigits(e)
	if n == 0 || len(e) < n+2 || e[n] != ' ' {
		return "", "", false
	}
	return e[:n], e[n+1:], true
}

// leadingDigits is how many ASCII digits s starts with.
func leadingDigits(s string) int {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

// Plugins returns the rejecting plugins the message names, sorted; unknown
// reasons are left out (see UnknownReasons).
func (fe FitError) Plugins() []string {
	seen := map[string]bool{}
	if fe.PreFilterMsg != "" {
		if p := PluginForReason(fe.PreFilterMsg); p != "" {
			seen[p] = true
		}
	}
	for _, r := range fe.Reasons {
		if r.Plugin != "" {
			seen[r.Plugin] = true
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// UnknownReasons returns the reasons no known plugin writes.
func (fe FitError) UnknownReasons() []string {
	var out []string
	if fe.PreFilterMsg != "" && PluginForReason(fe.PreFilterMsg) == "" {
		out = append(out, fe.PreFilterMsg)
	}
	for _, r := range fe.Reasons {
		if r.Plugin == "" {
			out = append(out, r.Reason)
		}
	}
	return out
}
