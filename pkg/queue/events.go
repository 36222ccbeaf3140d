package queue

// Cluster events, mirroring k8s.io/kube-scheduler/framework's ClusterEvent and
// pkg/scheduler/framework's matching rules (v1.36.3).

// ActionType is a bit mask of what happened to a resource.
type ActionType int64

// The action bits, in upstream's order (their values matter: matching
// compares them numerically).
const (
	Add ActionType = 1 << iota
	Delete
	UpdateNodeAllocatable
	UpdateNodeLabel
	UpdateNodeTaint
	UpdateNodeCondition
	UpdateNodeAnnotation
	UpdateNodeDeclaredFeature
	UpdatePodLabel
	UpdatePodScaleDown
	UpdatePodToleration
	UpdatePodSchedulingGatesEliminated
	UpdatePodGeneratedResourceClaim

	All ActionType = 1<<iota - 1

	Update = UpdateNodeAllocatable | UpdateNodeLabel | UpdateNodeTaint | UpdateNodeCondition |
		UpdateNodeAnnotation | UpdateNodeDeclaredFeature | UpdatePodLabel | UpdatePodScaleDown |
		UpdatePodToleration | UpdatePodSchedulingGatesEliminated | UpdatePodGeneratedResourceClaim

	None ActionType = 0
)

var actionTypeNames = map[ActionType]string{
	Add: "Add", Delete: "Delete",
	UpdateNodeAllocatable: "UpdateNodeAllocatable", UpdateNodeLabel: "UpdateNodeLabel",
	UpdateNodeTaint: "UpdateNodeTaint", UpdateNodeCondition: "UpdateNodeCondition",
	UpdateNodeAnnotation: "UpdateNodeAnnotation", UpdateNodeDeclaredFeature: "UpdateNodeDeclaredFeature",
	UpdatePodLabel: "UpdatePodLabel", UpdatePodScaleDown: "UpdatePodScaleDown",
	UpdatePodToleration: "UpdatePodToleration", UpdatePodSchedulingGatesEliminated: "UpdatePodSchedulingGatesEliminated",
	UpdatePodGeneratedResourceClaim: "UpdatePodGeneratedResourceClaim",
	All:                             "All", Update: "Update",
}

func (a ActionType) String() string { return actionTypeNames[a] }

// EventResource is the kind of object an event is about.
type EventResource string

// Resources. AssignedPod and UnschedulablePod are only used for incoming
// events; registrations use Pod, which matches both.
const (
	ResourcePod                   EventResource = "Pod"
	ResourceAssignedPod           EventResource = "AssignedPod"
	ResourceUnschedulablePod      EventResource = "UnschedulablePod"
	ResourceNode                  EventResource = "Node"
	ResourcePersistentVolume      EventResource = "PersistentVolume"
	ResourcePersistentVolumeClaim EventResource = "PersistentVolumeClaim"
	ResourceCSINode               EventResource = "storage.k8s.io/CSINode"
	ResourceCSIDriver             EventResource = "storage.k8s.io/CSIDriver"
	ResourceVolumeAttachment      EventResource = "storage.k8s.io/VolumeAttachment"
	ResourceCSIStorageCapacity    EventResource = "storage.k8s.io/CSIStorageCapacity"
	ResourceStorageClass          EventResource = "storage.k8s.io/StorageClass"
	ResourceResourceClaim         EventResource = "resource.k8s.io/ResourceClaim"
	ResourceResourceSlice         EventResource = "resource.k8s.io/ResourceSlice"
	ResourceDeviceClass           EventResource = "resource.k8s.io/DeviceClass"
	ResourcePodGroup              EventResource = "scheduling.k8s.io/PodGroup"
	ResourceWildCard              EventResource = "*"
)

// ClusterEvent is something that happened in the cluster and may make pods
// schedulable.
type ClusterEvent struct {
	Resource    EventResource
	ActionType  ActionType
	CustomLabel string
}

// Label is the event's name in metrics (scheduler_queue_incoming_pods_total's
// event label): the custom label, else resource + action.
func (ce ClusterEvent) Label() string {
	if ce.CustomLabel != "" {
		return ce.CustomLabel
	}
	return string(ce.Resource) + ce.ActionType.String()
}

// IsWildCard reports whether the event matches every registration.
func (ce ClusterEvent) IsWildCard() bool {
	return ce.Resource == ResourceWildCard && ce.ActionType == All
}

// Event labels that are not derived from a resource and an action.
const (
	ScheduleAttemptFailure = "ScheduleAttemptFailure"
	BackoffComplete        = "BackoffComplete"
	ForceActivate          = "ForceActivate"
	PopFromBackoffQ        = "PopFromBackoffQ"
	UnschedulableTimeout   = "UnschedulableTimeout"
)

// Built-in events.
var (
	EventUnschedulableTimeout          = ClusterEvent{Resource: ResourceWildCard, ActionType: All, CustomLabel: UnschedulableTimeout}
	EventForceActivate                 = ClusterEvent{Resource: ResourceWildCard, ActionType: All, CustomLabel: ForceActivate}
	EventUnscheduledPodAdd             = ClusterEvent{Resource: ResourceUnschedulablePod, ActionType: Add}
	EventUnscheduledPodUpdate          = ClusterEvent{Resource: ResourceUnschedulablePod, ActionType: Update}
	EventUnscheduledPodGatesEliminated = ClusterEvent{Resource: ResourceUnschedulablePod, ActionType: UpdatePodSchedulingGatesEliminated}
)

// MatchClusterEvents reports whether an incoming event matches a registered
// one: the incoming event is the same or more specific.
func MatchClusterEvents(registered, incoming ClusterEvent) bool {
	return registered.IsWildCard() ||
		matchEventResources(registered.Resource, incoming.Resource) &&
			registered.ActionType&incoming.ActionType != 0 &&
			incoming.ActionType <= registered.ActionType
}

func matchEventResources(registered, incoming EventResource) bool {
	return registered == ResourceWildCard || registered == incoming ||
		registered == ResourcePod && (incoming == ResourceAssignedPod || incoming == ResourceUnschedulablePod)
}

// MatchAnyClusterEvent reports whether incoming matches any of registered.
func MatchAnyClusterEvent(incoming ClusterEvent, registered []ClusterEvent) bool {
	for _, r := range registered {
		if MatchClusterEvents(r, incoming) {
			return true
		}
	}
	return false
}

// PodSchedulingPropertiesChange returns the events an update of an unscheduled
// pod stands for. The model's Pod carries labels, tolerations count and gates,
// so the label, toleration and gates-eliminated sub-events are derived as
// upstream does; anything else is the generic Update.
func PodSchedulingPropertiesChange(newPod, oldPod *Pod) []ClusterEvent {
	var events []ClusterEvent
	if !equalStringMaps(newPod.Labels, oldPod.Labels) {
		events = append(events, ClusterEvent{Resource: ResourceUnschedulablePod, ActionType: UpdatePodLabel})
	}
	if len(oldPod.SchedulingGates) != 0 && len(newPod.SchedulingGates) == 0 {
		events = append(events, EventUnscheduledPodGatesEliminated)
	}
	if newPod.Tolerations != oldPod.Tolerations {
		events = append(events, ClusterEvent{Resource: ResourceUnschedulablePod, ActionType: UpdatePodToleration})
	}
	if len(events) == 0 {
		events = append(events, EventUnscheduledPodUpdate)
	}
	return events
}

func equalStringMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
