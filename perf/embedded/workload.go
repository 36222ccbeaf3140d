package embedded

import "github.com/kubectl-schedq/kubectl-schedq/pkg/workload"

// What the control plane takes from pkg/workload, in a file of its own: a
// control plane built against another Kubernetes version (upstreamgen
// -controlplane), whose API packages pkg/workload does not build with,
// replaces this file with the same values written out.

// defaultSchedulerConfig is the scheduler configuration scheduler_perf runs
// with.
func defaultSchedulerConfig() []byte { return []byte(workload.DefaultSchedulerConfig) }

// formatGates writes gates as Name=true,Other=false, sorted.
func formatGates(gates map[string]bool) string { return workload.FormatGates(gates) }
