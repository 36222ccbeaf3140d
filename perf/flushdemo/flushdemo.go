// Package flushdemo is an out-of-tree Filter plugin with a deliberate bug in
// its requeueing, for showing what the leftover flush hides: pods the plugin
// rejected wait in unschedulablePods after they have become schedulable, until
// the flush moves them (after podMaxInUnschedulablePodsDuration, 5 minutes by
// default), and are bound in the attempt right after it, which kube-scheduler
// counts in scheduler_pod_scheduled_after_flush_total (v1.36+).
//
// It rejects a pod labelled PodLabel on every node not labelled NodeLabel=true,
// and registers node additions only: a node that gains the label is a Node
// UpdateNodeLabel event, which no queueing hint of this plugin hears, the
// mistake of a plugin whose EventsToRegister leaves out the change to what it
// checks. Registering it is inert: only a scheduler configuration that enables
// it in a profile's filter plugins runs it.
package flushdemo

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
)

const (
	// Name is the plugin's name in the registry and scheduler configurations.
	Name = "schedq-flush-demo"
	// PodLabel marks the pods the plugin holds back (any value).
	PodLabel = "schedq.example/flush-demo"
	// NodeLabel=true marks the nodes that accept them.
	NodeLabel = "schedq.example/flush-demo-ready"
	// ErrReason is the rejection's reason.
	ErrReason = "node(s) lack the label " + NodeLabel + "=true"
)

// Plugin is the schedq-flush-demo Filter plugin.
type Plugin struct{}

var (
	_ fwk.FilterPlugin      = &Plugin{}
	_ fwk.EnqueueExtensions = &Plugin{}
)

// New builds the plugin; it takes no arguments.
func New(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
	return &Plugin{}, nil
}

// Name returns Name.
func (*Plugin) Name() string { return Name }

// Filter rejects a pod labelled PodLabel on a node not labelled NodeLabel=true.
// UnschedulableAndUnresolvable: preemption cannot help.
func (*Plugin) Filter(_ context.Context, _ fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	if _, held := pod.Labels[PodLabel]; !held {
		return nil
	}
	if nodeInfo.Node().Labels[NodeLabel] == "true" {
		return nil
	}
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ErrReason)
}

// EventsToRegister registers node additions and, on purpose, not node label
// updates, although a label update is what makes a rejected pod schedulable.
func (*Plugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}},
	}, nil
}
