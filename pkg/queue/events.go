package queue

// Cluster events, mirroring k8s.io/kube-scheduler/framework's ClusterEvent and
// pkg/scheduler/framework's matching rules (v1.34–v1.37). The action bits are
// v1.36's: v1.35 and v1.37 shift them, which only matters to a matching of
// different actions of one resource, and the labels do not depend on them.

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

// Resources. AssignedPod, UnschedulablePod (up to v1.36), UnscheduledPod and
// TargetPod (v1.37) are only used for incoming events; registrations use
// Pod, which matches them all.
const (
	ResourcePod                   EventResource = "Pod"
	ResourceAssignedPod           EventResource = "AssignedPod"
	ResourceUnschedulablePod      EventResource = "UnschedulablePod"
	ResourceUnscheduledPod        EventResource = "UnscheduledPod"
	ResourceTargetPod             EventResource = "TargetPod"
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

// Built-in events. A new pod is UnschedulablePodAdd up to v1.36 and
// UnscheduledPodAdd from v1.37; an update of the pod itself is an
// UnschedulablePod event up to v1.36 and a TargetPod event from v1.37.
var (
	EventUnschedulableTimeout   = ClusterEvent{Resource: ResourceWildCard, ActionType: All, CustomLabel: UnschedulableTimeout}
	EventForceActivate          = ClusterEvent{Resource: ResourceWildCard, ActionType: All, CustomLabel: ForceActivate}
	EventUnschedulablePodAdd    = ClusterEvent{Resource: ResourceUnschedulablePod, ActionType: Add}
	EventUnschedulablePodUpdate = ClusterEvent{Resource: ResourceUnschedulablePod, ActionType: Update}
	EventUnscheduledPodAdd      = ClusterEvent{Resource: ResourceUnscheduledPod, ActionType: Add}
)

// PodGatesEliminated is the event of the update that removes a pod's last
// scheduling gate, as the version names it (targetPod from v1.37).
func PodGatesEliminated(targetPod bool) ClusterEvent {
	return ClusterEvent{Resource: podUpdateResource(targetPod), ActionType: UpdatePodSchedulingGatesEliminated}
}

func podUpdateResource(targetPod bool) EventResource {
	if targetPod {
		return ResourceTargetPod
	}
	return ResourceUnschedulablePod
}

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
		registered == ResourcePod && (incoming == ResourceAssignedPod || incoming == ResourceUnschedulablePod ||
			incoming == ResourceUnscheduledPod || incoming == ResourceTargetPod)
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
// pod stands for, the queue's own update of the pod: TargetPod events from
// v1.37 (targetPod), UnschedulablePod events before. The model's Pod carries
// labels, tolerations count and gates, so the label, toleration and
// gates-eliminated sub-events are derived as upstream does; anything else is
// the generic Update.
func PodSchedulingPropertiesChange(newPod, oldPod *Pod, targetPod bool) []ClusterEvent {
	r := podUpdateResource(targetPod)
	var events []ClusterEvent
	if !equalStringMaps(newPod.Labels, oldPod.Labels) {
		events = append(events, ClusterEvent{Resource: r, ActionType: UpdatePodLabel})
	}
	if len(oldPod.SchedulingGates) != 0 && len(newPod.SchedulingGates) == 0 {
		events = append(events, ClusterEvent{Resource: r, ActionType: UpdatePodSchedulingGatesEliminated})
	}
	if newPod.Tolerations != oldPod.Tolerations {
		events = append(events, ClusterEvent{Resource: r, ActionType: UpdatePodToleration})
	}
	if len(events) == 0 {
		events = append(events, ClusterEvent{Resource: r, ActionType: Update})
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
