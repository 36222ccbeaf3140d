package queue

import "sort"

// What the in-tree plugins of kube-scheduler register (v1.36.3's EventsToRegister
// with SchedulerQueueingHints on, the default feature gates): the events that
// can move a pod they rejected out of unschedulablePods. Their hints may still
// answer QueueSkip for a given object (a node too small, a label that does not
// match); these are the events that are asked.
var DefaultPluginEvents = map[string][]ClusterEvent{
	"NodeResourcesFit": {
		{Resource: ResourcePod, ActionType: Delete | UpdatePodScaleDown},
		{Resource: ResourceNode, ActionType: Add | UpdateNodeAllocatable},
	},
	"NodeAffinity":      {{Resource: ResourceNode, ActionType: Add | UpdateNodeLabel}},
	"NodeName":          {{Resource: ResourceNode, ActionType: Add}},
	"NodePorts":         {{Resource: ResourcePod, ActionType: Delete}, {Resource: ResourceNode, ActionType: Add}},
	"NodeUnschedulable": {{Resource: ResourceNode, ActionType: Add | UpdateNodeTaint}, {Resource: ResourcePod, ActionType: UpdatePodToleration}},
	"TaintToleration":   {{Resource: ResourceNode, ActionType: Add | UpdateNodeTaint}, {Resource: ResourcePod, ActionType: UpdatePodToleration}},
	"InterPodAffinity": {
		{Resource: ResourcePod, ActionType: Add | UpdatePodLabel | Delete},
		{Resource: ResourceNode, ActionType: Add | UpdateNodeLabel},
	},
	"PodTopologySpread": {
		{Resource: ResourcePod, ActionType: Add | UpdatePodLabel | UpdatePodToleration | Delete},
		{Resource: ResourceNode, ActionType: Add | Delete | UpdateNodeLabel | UpdateNodeTaint},
	},
	"VolumeBinding": {
		{Resource: ResourceStorageClass, ActionType: Add | Update},
		{Resource: ResourcePersistentVolumeClaim, ActionType: Add | Update},
		{Resource: ResourcePersistentVolume, ActionType: Add | Update},
		{Resource: ResourceNode, ActionType: Add | UpdateNodeLabel},
		{Resource: ResourceCSINode, ActionType: Add | Update},
		{Resource: ResourceCSIDriver, ActionType: Update},
		{Resource: ResourceCSIStorageCapacity, ActionType: Add | Update},
	},
	"VolumeZone": {
		{Resource: ResourceStorageClass, ActionType: Add},
		{Resource: ResourceNode, ActionType: Add | UpdateNodeLabel},
		{Resource: ResourcePersistentVolumeClaim, ActionType: Add | Update},
		{Resource: ResourcePersistentVolume, ActionType: Add | Update},
	},
	"VolumeRestrictions": {
		{Resource: ResourcePod, ActionType: Delete},
		{Resource: ResourceNode, ActionType: Add},
		{Resource: ResourcePersistentVolumeClaim, ActionType: Add},
	},
	"NodeVolumeLimits": {
		{Resource: ResourceCSINode, ActionType: Add | Update},
		{Resource: ResourcePod, ActionType: Delete},
		{Resource: ResourcePersistentVolumeClaim, ActionType: Add},
		{Resource: ResourceVolumeAttachment, ActionType: Delete},
	},
	// Gating PreEnqueue plugins.
	"SchedulingGates":   {{Resource: ResourcePod, ActionType: UpdatePodSchedulingGatesEliminated}},
	"DefaultPreemption": {{Resource: ResourcePod, ActionType: Delete}},
}

// singleActions lists the ActionType bits in upstream's order.
var singleActions = []ActionType{Add, Delete, UpdateNodeAllocatable, UpdateNodeLabel, UpdateNodeTaint,
	UpdateNodeCondition, UpdateNodeAnnotation, UpdateNodeDeclaredFeature, UpdatePodLabel, UpdatePodScaleDown,
	UpdatePodToleration, UpdatePodSchedulingGatesEliminated, UpdatePodGeneratedResourceClaim}

// IncomingEventLabels returns the labels of the incoming events (as counted in
// scheduler_queue_incoming_pods_total) that match a plugin's registrations:
// a Pod registration stands for AssignedPod events, and for updates of the
// pending pod itself (UnschedulablePod up to v1.36, TargetPod from v1.37).
// It returns nil for a plugin this package does not know.
func IncomingEventLabels(plugin string, v Version) []string {
	regs, ok := DefaultPluginEvents[plugin]
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	add := func(e ClusterEvent) {
		if l := e.Label(); !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	for _, r := range regs {
		for _, a := range singleActions {
			if r.ActionType&a == 0 {
				continue
			}
			if r.Resource != ResourcePod {
				add(ClusterEvent{Resource: r.Resource, ActionType: a})
				continue
			}
			// Another pod's change arrives as AssignedPod; an update of the
			// pending pod itself as the version's pod-update resource.
			add(ClusterEvent{Resource: ResourceAssignedPod, ActionType: a})
			if a != Add && a != Delete {
				add(ClusterEvent{Resource: podUpdateResource(behaviourOf(v).targetPodEvents), ActionType: a})
			}
		}
	}
	sort.Strings(out)
	return out
}
