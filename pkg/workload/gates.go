package workload

import (
	"fmt"
	"sort"
	"strings"
)

// gateSpec is what a command must know of a feature gate to refuse a
// setting before a cluster starts.
type gateSpec struct {
	Default bool
	Locked  bool
}

// CheckGate says whether kube-scheduler GatesVersion accepts gate=value,
// with the words of its own feature gate: an unknown gate, or a gate locked
// to its default, is an error. knownGates is generated (`make update-gates`) from
// the version perf/go.mod requires.
func CheckGate(gate string, value bool) error {
	spec, ok := knownGates[gate]
	if !ok {
		return fmt.Errorf("unrecognized feature gate: %s", gate)
	}
	if spec.Locked && value != spec.Default {
		return fmt.Errorf("cannot set feature gate %s to %t, feature is locked to %t", gate, value, spec.Default)
	}
	return nil
}

// KnownGates lists the gates CheckGate knows, sorted, with their default
// and whether it is locked.
func KnownGates() []GateInfo {
	out := make([]GateInfo, 0, len(knownGates))
	for n, s := range knownGates {
		out = append(out, GateInfo{Name: n, Default: s.Default, Locked: s.Locked})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// GateInfo is one feature gate.
type GateInfo struct {
	Name    string
	Default bool
	Locked  bool
}

// FormatGates writes gates as --feature-gates takes them: Name=bool pairs,
// sorted by name, joined by commas.
func FormatGates(gates map[string]bool) string {
	names := make([]string, 0, len(gates))
	for k := range gates {
		names = append(names, k)
	}
	sort.Strings(names)
	for i, k := range names {
		names[i] = fmt.Sprintf("%s=%t", k, gates[k])
	}
	return strings.Join(names, ",")
}
