// Package runner executes one scheduler_perf workload (a
// workload.Selected) against a running cluster, the way upstream's
// WorkloadExecutor does (k8s.io/kubernetes v1.36.3,
// test/integration/scheduler_perf/executor.go), and measures it with the
// collectors of package collect.
//
// The cluster is anything with a REST config: an embedded control plane,
// a kind cluster or a named cluster (see package provider). The runner
// needs nothing inside the scheduler's process: it watches pods through its
// own informer and reads the scheduler's metrics through a MetricsReader.
//
// Differences from upstream, all deliberate:
//   - Every object the runner creates carries Options.Labels (a run label),
//     and every pod count, barrier and deletePods op is restricted to pods
//     with that label, so a run on a shared cluster touches and counts only
//     its own objects.
//   - Nodes are created by Options.Parallelism goroutines, not one.
//   - Histograms are deltas over the window (see collect.Histograms).
//   - Per-pod scheduling latency (create request → bind seen) is measured
//     for every measured namespace.
//   - Errors name the file, test case, workload and op (OpError).
package runner

import (
	"fmt"
	"io"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/collect"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// Cluster is where a workload runs.
type Cluster struct {
	// Name describes the cluster in messages.
	Name string
	// RESTConfig reaches kube-apiserver with rights to create nodes, pods
	// and whatever the workload's templates name.
	RESTConfig *rest.Config
	// Metrics reads the scheduler's metrics; nil measures without the queue
	// series and the histograms.
	Metrics MetricsReader
	// InProcess says the control plane runs in this process: the memory
	// collectors then measure it, as upstream's do.
	InProcess bool
}

// Options tune a run. The zero value runs as upstream does.
type Options struct {
	// Topic selects a workload's threshold by topic (upstream passes the
	// benchmark's topic, e.g. "misc"); a threshold without topics applies
	// whatever it is.
	Topic string
	// NamePrefix starts every data item's Name label; default
	// "BenchmarkPerfScheduling", so that Name reads
	// BenchmarkPerfScheduling/<test case>/<workload>/<window>.
	NamePrefix string
	// Labels are put on every object the run creates and select the pods
	// it counts. Default: RunLabelKey=<random id>.
	Labels map[string]string
	// Variant names the side of a comparison, for progress and the result.
	Variant string
	// NamespacePrefix, when set, is put before every namespace the workload
	// names (withNamespacePrefix): a run on a cluster others use gets
	// namespaces of its own. Windows keep the names the workload gives.
	NamespacePrefix string
	// Progress receives op progress; nil reports nothing.
	Progress Progress
	// Parallelism is how many goroutines create pods and nodes (upstream:
	// 30 for pods).
	Parallelism int
	// QPS and Burst limit the runner's own client (upstream: 5000/5000).
	QPS   float32
	Burst int
	// ThroughputErrorMargin is upstream's benchmark setting (30 %): a
	// throughput interval off by more is reported as a warning.
	ThroughputErrorMargin float64
	// QueueInterval is the queue series' sampling period; negative turns
	// the series off. Default collect.QueueInterval.
	QueueInterval time.Duration
	// Ledger, when set, records every object the run creates (besides
	// pods), for a provider that must clean up.
	Ledger *Ledger
	// ProfileDir is the directory a startCollectingProfile writes into
	// (upstream: -data-items-dir), as ProfileName names the file; empty
	// refuses the op.
	ProfileDir string
	// Warnings receives warnings (a throughput interval off by more than the
	// margin, a window without throughput samples); nil discards them.
	Warnings io.Writer
}

// RunLabelKey is the label every object a run creates carries, with the
// run's id as value.
const RunLabelKey = "schedq.kubectl-schedq.io/run"

// DefaultNamePrefix is upstream's top-level benchmark name.
const DefaultNamePrefix = "BenchmarkPerfScheduling"

func (o Options) withDefaults() Options {
	if o.NamePrefix == "" {
		o.NamePrefix = DefaultNamePrefix
	}
	if len(o.Labels) == 0 {
		o.Labels = map[string]string{RunLabelKey: NewRunID()}
	}
	if o.Parallelism <= 0 {
		o.Parallelism = 30
	}
	if o.QPS <= 0 {
		o.QPS = 5000
	}
	if o.Burst <= 0 {
		o.Burst = 5000
	}
	if o.ThroughputErrorMargin == 0 {
		o.ThroughputErrorMargin = 30
	}
	if o.QueueInterval == 0 {
		o.QueueInterval = collect.QueueInterval
	}
	if o.Progress == nil {
		o.Progress = nopProgress{}
	}
	if o.Warnings == nil {
		o.Warnings = io.Discard
	}
	return o
}

// Result is what a workload run measured. It is JSON, so that a child
// process can hand it to its parent.
type Result struct {
	// Path, TestCase and Workload name the workload.
	Path     string `json:"path"`
	TestCase string `json:"testCase"`
	Workload string `json:"workload"`
	// Cluster is Cluster.Name.
	Cluster string `json:"cluster"`
	// Variant is Options.Variant: the side of a comparison
	// ("SchedulerPopFromBackoffQ=true"), empty otherwise.
	Variant string `json:"variant,omitempty"`
	// NamespacePrefix is Options.NamespacePrefix: the run's namespaces are
	// the workload's with it in front.
	NamespacePrefix string `json:"namespacePrefix,omitempty"`
	// FeatureGates are the gates the control plane ran with, as the caller
	// reports them; SchedulerGates are the scheduler's own report
	// (kubernetes_feature_enabled) of the queue gates, when it has metrics.
	FeatureGates     map[string]bool `json:"featureGates,omitempty"`
	EmulationVersion string          `json:"emulationVersion,omitempty"`
	SchedulerGates   map[string]bool `json:"schedulerGates,omitempty"`
	SchedulerVersion string          `json:"schedulerVersion,omitempty"`
	// Configuration is how the provider set the cluster up, as it read it
	// back after the start (the embedded provider: etcd's command line,
	// kube-apiserver's /flagz, …); nil when the provider does not say.
	Configuration *Configuration `json:"configuration,omitempty"`

	Start    time.Time     `json:"start"`
	Duration time.Duration `json:"duration"`
	// StartupDuration is how long the provider took to bring the cluster
	// up; the caller sets it.
	StartupDuration time.Duration `json:"startupDuration,omitempty"`

	// DataItems are the perf-dash items of every window, thresholds
	// applied; Name labels are not yet filled (collect.FillLabels).
	DataItems []collect.DataItem `json:"dataItems"`
	// ThresholdErrors are the threshold checks that failed; the workload
	// ran to its end anyway, as upstream's.
	ThresholdErrors []string `json:"thresholdErrors,omitempty"`
	// Windows are the measurement windows in order.
	Windows []Window `json:"windows"`
	// Queue is the queue time series over the whole workload.
	Queue collect.QueueSeries `json:"queue"`
	// Ops are the ops in order, with what each did.
	Ops []OpStat `json:"ops"`
	// Cleanup says what the provider removed after the run, and how long
	// it took, when it removed objects from a cluster it did not start.
	Cleanup string `json:"cleanup,omitempty"`
	// Warnings are what Options.Warnings received.
	Warnings []string `json:"warnings,omitempty"`
	// Profiles are the CPU profiles the workload's ops wrote, by name in
	// Options.ProfileDir.
	Profiles []string `json:"profiles,omitempty"`
	// Error is the reason the workload failed, empty if it did not.
	Error string `json:"error,omitempty"`
}

// Configuration is how a cluster is set up: settings by name (etcd's
// flags, kube-apiserver's, the scheduler client's QPS, …) and every feature
// gate the control plane's process reports, so that two runs, or a run and
// upstream's harness, can be set side by side.
type Configuration struct {
	Settings     map[string]string `json:"settings"`
	FeatureGates map[string]bool   `json:"featureGates,omitempty"`
}

// Window is one measurement window.
type Window struct {
	Name       string   `json:"name"`
	Namespaces []string `json:"namespaces"`
	// Start and End are seconds since Result.Start.
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	// Throughput is SchedulingThroughput's recorded intervals; their
	// seconds count from ThroughputStart (seconds since Result.Start).
	Throughput      []collect.RateSample `json:"throughput"`
	ThroughputStart float64              `json:"throughputStart"`
	// Latencies are per measured namespace.
	Latencies []collect.Latencies `json:"latencies"`
	// Bound counts pods seen bound in the window.
	Bound int `json:"bound"`
}

// OpStat is what one op did.
type OpStat struct {
	Index  int    `json:"index"`
	Opcode string `json:"opcode"`
	// Start and End are seconds since Result.Start.
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	// Namespace is the op's namespace, when it has one.
	Namespace string `json:"namespace,omitempty"`
	// Created counts objects created (pods, nodes, …).
	Created int `json:"created,omitempty"`
	// CreateSeconds is the time from the first create request to the last
	// response; CreateRate is Created/CreateSeconds.
	CreateSeconds float64 `json:"createSeconds,omitempty"`
	CreateRate    float64 `json:"createRate,omitempty"`
}

// OpError locates an op's failure.
type OpError struct {
	Path     string
	TestCase string
	Workload string
	Op       workload.Op
	Err      error
}

func (e *OpError) Error() string {
	return fmt.Sprintf("%s: test case %q, workload %q, %s (%s): %v", e.Path, e.TestCase, e.Workload, e.Op.Pos(), e.Op.Opcode(), e.Err)
}

func (e *OpError) Unwrap() error { return e.Err }
