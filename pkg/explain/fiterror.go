package explain

import (
	"regexp"
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

var fitErrorRE = regexp.MustCompile(`^0/(\d+) nodes are available:\s*(.*)$`)
var countRE = regexp.MustCompile(`^(\d+) (.+)$`)

// ParseFitError parses a FitError message; ok is false for other messages.
func ParseFitError(msg string) (fe FitError, ok bool) {
	m := fitErrorRE.FindStringSubmatch(strings.TrimSpace(msg))
	if m == nil {
		return fe, false
	}
	fe.NumAllNodes, _ = strconv.Atoi(m[1])
	body := m[2]
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
		if countRE.MatchString(p) || len(entries) == 0 {
			entries = append(entries, p)
		} else {
			// A reason that itself contains ", ".
			entries[len(entries)-1] += ", " + p
		}
	}
	for _, e := range entries {
		c := countRE.FindStringSubmatch(e)
		if c == nil {
			fe.PreFilterMsg = filter
			fe.Reasons = nil
			return fe, true
		}
		n, _ := strconv.Atoi(c[1])
		fe.Reasons = append(fe.Reasons, NodeReason{Count: n, Reason: c[2], Plugin: PluginForReason(c[2])})
	}
	return fe, true
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
