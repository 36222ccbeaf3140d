package workload

import (
	"fmt"
	"maps"
	"slices"
)

// MetricsCollectorConfig says which scheduler histograms a measurement
// window collects: for each metric, label values whose cartesian product is
// collected one data item per combination. A nil list collects the whole
// family as one item.
type MetricsCollectorConfig struct {
	Metrics map[string][]*LabelValues
}

// LabelValues is one label and the values to collect for it.
type LabelValues struct {
	Label  string
	Values []string
}

// ThresholdMetricSelector picks the data items a workload's threshold applies
// to: those whose Metric label is Name and which carry all of Labels.
// DataBucket ("Average", "Perc50", …) is the value compared; the check fails
// unless it is higher than the threshold, or lower with ExpectLower.
type ThresholdMetricSelector struct {
	Name        string
	Labels      map[string]string
	DataBucket  string
	ExpectLower bool
}

// DefaultThresholdMetricSelector is the selector of a workload that has none
// and whose test case has no defaultThresholdMetricSelector.
func DefaultThresholdMetricSelector() ThresholdMetricSelector {
	return ThresholdMetricSelector{Name: SchedulingThroughputMetric, DataBucket: "Average"}
}

// SchedulingThroughputMetric is the Metric label of the throughput data item.
const SchedulingThroughputMetric = "SchedulingThroughput"

// Threshold is a workload's threshold: one value, or values by topic (the
// topic upstream passes to RunBenchmarkPerfScheduling: misc, affinity, …)
// with Value as the fallback. 0 turns the check off.
type Threshold struct {
	Value   float64
	ByTopic map[string]float64
}

// Get returns the threshold for topic.
func (t Threshold) Get(topic string) float64 {
	if v, ok := t.ByTopic[topic]; ok {
		return v
	}
	return t.Value
}

// The labels upstream's default collector config uses (v1.37.2: names in
// pkg/scheduler/framework/plugins/names, metrics.ExtensionPoints,
// framework.AllClusterEventLabels()).
var (
	extensionPoints = []string{
		"PreFilter", "Filter", "PreFilterExtensionAddPod", "PreFilterExtensionRemovePod",
		"PostFilter", "PreScore", "Score", "ScoreExtensionNormalize", "PreBind",
		"PreBindPreFlight", "Bind", "PostBind", "Reserve", "Unreserve", "Permit", "Sign",
		"PlacementGenerate", "PlacementFeasible", "PodGroupPostFilter",
	}
	pluginNames = []string{
		"PrioritySort", "DefaultBinder", "DefaultPreemption", "DynamicResources",
		"ImageLocality", "InterPodAffinity", "NodeAffinity", "NodeName", "NodePorts",
		"NodeResourcesBalancedAllocation", "NodeResourcesFit", "NodeUnschedulable",
		"NodeVolumeLimits", "PodTopologySpread", "SchedulingGates", "TaintToleration",
		"VolumeBinding", "VolumeRestrictions", "VolumeZone",
	}
	clusterEventLabels = []string{
		"UnschedulableTimeout", "ForceActivate",
		"PodAdd", "PodDelete", "PodUpdate",
		"AssignedPodAdd", "AssignedPodDelete", "AssignedPodUpdate",
		"UnscheduledPodAdd", "UnscheduledPodDelete", "UnscheduledPodUpdate",
		"TargetPodAdd", "TargetPodDelete", "TargetPodUpdate",
		"NodeAdd", "NodeDelete", "NodeUpdate",
		"PersistentVolumeAdd", "PersistentVolumeDelete", "PersistentVolumeUpdate",
		"PersistentVolumeClaimAdd", "PersistentVolumeClaimDelete", "PersistentVolumeClaimUpdate",
		"storage.k8s.io/CSINodeAdd", "storage.k8s.io/CSINodeDelete", "storage.k8s.io/CSINodeUpdate",
		"storage.k8s.io/CSIDriverAdd", "storage.k8s.io/CSIDriverDelete", "storage.k8s.io/CSIDriverUpdate",
		"storage.k8s.io/CSIStorageCapacityAdd", "storage.k8s.io/CSIStorageCapacityDelete", "storage.k8s.io/CSIStorageCapacityUpdate",
		"storage.k8s.io/StorageClassAdd", "storage.k8s.io/StorageClassDelete", "storage.k8s.io/StorageClassUpdate",
		"storage.k8s.io/VolumeAttachmentAdd", "storage.k8s.io/VolumeAttachmentDelete", "storage.k8s.io/VolumeAttachmentUpdate",
		"resource.k8s.io/ResourceClaimAdd", "resource.k8s.io/ResourceClaimDelete", "resource.k8s.io/ResourceClaimUpdate",
		"resource.k8s.io/ResourceSliceAdd", "resource.k8s.io/ResourceSliceDelete", "resource.k8s.io/ResourceSliceUpdate",
		"resource.k8s.io/DeviceClassAdd", "resource.k8s.io/DeviceClassDelete", "resource.k8s.io/DeviceClassUpdate",
		"scheduling.k8s.io/PodGroupAdd", "scheduling.k8s.io/PodGroupDelete", "scheduling.k8s.io/PodGroupUpdate",
		"PodUpdatePodLabel", "PodUpdatePodScaleDown", "PodUpdatePodScaleUp", "PodUpdatePodToleration",
		"PodUpdatePodSchedulingGatesEliminated", "PodUpdatePodGeneratedResourceClaim",
		"NodeUpdateNodeAllocatable", "NodeUpdateNodeLabel", "NodeUpdateNodeTaint",
		"NodeUpdateNodeCondition", "NodeUpdateNodeAnnotation", "NodeUpdateNodeDeclaredFeature",
		"NodeUpdateNodePreemptionPolicy",
	}
)

// DefaultMetricsCollectorConfig is upstream's default collector config
// (scheduler_perf.go v1.37.2: the queueing-hint and event-handling
// histograms are always collected, the hints gate being gone, and the pod
// group attempt histograms with them). It still lists
// scheduler_pod_scheduling_duration_seconds, which no longer exists since
// v1.36: collectors skip it. Each call returns a new copy.
func DefaultMetricsCollectorConfig() *MetricsCollectorConfig {
	return &MetricsCollectorConfig{Metrics: map[string][]*LabelValues{
		"scheduler_framework_extension_point_duration_seconds": {
			{Label: "extension_point", Values: clone(extensionPoints)},
		},
		"scheduler_scheduling_attempt_duration_seconds": {
			{Label: "result", Values: []string{"scheduled", "unschedulable", "error"}},
		},
		"scheduler_pod_scheduling_duration_seconds": nil,
		"scheduler_plugin_execution_duration_seconds": {
			{Label: "plugin", Values: clone(pluginNames)},
			{Label: "extension_point", Values: clone(extensionPoints)},
		},
		"scheduler_queueing_hint_execution_duration_seconds": {
			{Label: "plugin", Values: clone(pluginNames)},
			{Label: "event", Values: clone(clusterEventLabels)},
		},
		"scheduler_event_handling_duration_seconds": {
			{Label: "event", Values: clone(clusterEventLabels)},
		},
		"scheduler_podgroup_scheduling_attempt_duration_seconds": {
			{Label: "result", Values: []string{"waiting_on_preemption", "scheduled", "unschedulable", "error"}},
		},
		"scheduler_podgroup_scheduling_algorithm_duration_seconds": nil,
	}}
}

func clone(s []string) []string { return append([]string(nil), s...) }

// UniqueLabelCombos lists every combination of one value per label, in
// upstream's order (uniqueLVCombos). No labels yield one empty combination.
func UniqueLabelCombos(lvs []*LabelValues) []map[string]string {
	if len(lvs) == 0 {
		return []map[string]string{{}}
	}
	rest := UniqueLabelCombos(lvs[1:])
	var out []map[string]string
	for _, v := range lvs[0].Values {
		for _, combo := range rest {
			c := make(map[string]string, len(combo)+1)
			maps.Copy(c, combo)
			c[lvs[0].Label] = v
			out = append(out, c)
		}
	}
	return out
}

// someComboMatches reports whether one of UniqueLabelCombos(lvs) carries
// every label in required, without listing the combinations (their number
// is the product of the value counts). A combination takes one value per
// entry, and the first entry of a label listed twice wins.
func someComboMatches(lvs []*LabelValues, required map[string]string) bool {
	for _, lv := range lvs {
		if len(lv.Values) == 0 {
			return false // no combinations at all
		}
	}
	for k, v := range required {
		i := slices.IndexFunc(lvs, func(lv *LabelValues) bool { return lv.Label == k })
		if i < 0 || !slices.Contains(lvs[i].Values, v) {
			return false
		}
	}
	return true
}

// validate is upstream's thresholdMetricSelector.isValid.
func (s ThresholdMetricSelector) validate(mcc *MetricsCollectorConfig) error {
	if s.DataBucket == "" {
		return fmt.Errorf("thresholdMetricSelector for %q: dataBucket must be set", s.Name)
	}
	if s.Name == SchedulingThroughputMetric {
		return nil
	}
	lvs, ok := mcc.Metrics[s.Name]
	if !ok {
		return fmt.Errorf("thresholdMetricSelector: metric %q is not collected (add it to metricsCollectorConfig)", s.Name)
	}
	if someComboMatches(lvs, s.Labels) {
		return nil
	}
	return fmt.Errorf("thresholdMetricSelector: no collected label combination of metric %q matches labels %v", s.Name, s.Labels)
}
