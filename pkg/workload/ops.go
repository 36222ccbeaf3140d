package workload

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Opcode names an op, as in the file's "opcode" key.
type Opcode string

// The opcodes this package accepts (upstream v1.36.3's, minus the DRA ones).
const (
	OpcodeCreateNodes            Opcode = "createNodes"
	OpcodeCreateNamespaces       Opcode = "createNamespaces"
	OpcodeCreatePods             Opcode = "createPods"
	OpcodeCreatePodSets          Opcode = "createPodSets"
	OpcodeDeletePods             Opcode = "deletePods"
	OpcodeChurn                  Opcode = "churn"
	OpcodeBarrier                Opcode = "barrier"
	OpcodeSleep                  Opcode = "sleep"
	OpcodeStartCollectingMetrics Opcode = "startCollectingMetrics"
	OpcodeStopCollectingMetrics  Opcode = "stopCollectingMetrics"
	OpcodeCreateAny              Opcode = "createAny"
	OpcodeUpdateAny              Opcode = "updateAny"
)

var allOpcodes = []Opcode{
	OpcodeCreateNodes, OpcodeCreateNamespaces, OpcodeCreatePods, OpcodeCreatePodSets,
	OpcodeDeletePods, OpcodeChurn, OpcodeBarrier, OpcodeSleep, OpcodeStartCollectingMetrics,
	OpcodeStopCollectingMetrics, OpcodeCreateAny, OpcodeUpdateAny,
}

// SchedulingStage is what a barrier waits for.
type SchedulingStage string

const (
	// Scheduled waits until the pods are bound (spec.nodeName set).
	Scheduled SchedulingStage = "Scheduled"
	// Attempted waits until the pods have a PodScheduled condition, whatever
	// its status: each went through at least one scheduling cycle.
	Attempted SchedulingStage = "Attempted"
)

// ChurnMode is a churn op's mode.
type ChurnMode string

const (
	// ChurnCreate creates one object per template every interval, up to
	// Number times (0: until the workload ends), and never deletes them.
	ChurnCreate ChurnMode = "create"
	// ChurnRecreate keeps a ring of Number slots per template: every
	// interval, slot (tick % Number) is deleted if it holds an object, else
	// an object is created in it; so each object lives for Number ticks.
	ChurnRecreate ChurnMode = "recreate"
)

// DefaultChurnInterval is a churn op's interval when intervalMilliseconds is 0.
const DefaultChurnInterval = 500 * time.Millisecond

// Op is one resolved op of a Selected workload: params bound, createPodSets
// unrolled, defaults applied, paths resolved and files loaded. It is one of
// *CreateNodes, *CreateNamespaces, *CreatePods, *DeletePods, *Churn, *Barrier,
// *Sleep, *StartCollectingMetrics, *StopCollectingMetrics, *CreateAny,
// *UpdateAny; switch on the type.
//
// The objects an op holds (Churn.Objects, CreateNamespaces.Namespace,
// CreatePods.PersistentVolume, …) are shared: copy one before changing it.
// Methods that render objects (CreatePods.Pod, CreateNodes.Node, …) return
// fresh ones, and are safe for concurrent use.
type Op interface {
	// Opcode is the op's opcode (createPods for the ops a createPodSets
	// unrolls into).
	Opcode() Opcode
	// Pos says where the op is.
	Pos() OpPos
}

// OpPos locates an op.
type OpPos struct {
	// Index is the op's position in Selected.Ops, which is upstream's
	// opIndex: the default namespace is namespace-<Index> and default
	// nodes are named node-<Index>-….
	Index int
	// TemplateIndex is the position in the test case's workloadTemplate of
	// the op this one comes from. It differs from Index after a
	// createPodSets, which unrolls into several ops.
	TemplateIndex int
}

// Pos implements Op.
func (p OpPos) Pos() OpPos { return p }

// String is "op <Index>", plus the template index when it differs.
func (p OpPos) String() string {
	if p.Index == p.TemplateIndex {
		return fmt.Sprintf("op %d", p.Index)
	}
	return fmt.Sprintf("op %d (template op %d)", p.Index, p.TemplateIndex)
}

// CreateNodes creates Count nodes. Nodes are API objects only: no kubelet.
type CreateNodes struct {
	OpPos
	Count int
	// NodeTemplatePath is the resolved nodeTemplatePath; empty for the
	// built-in node (DefaultNode).
	NodeTemplatePath string
	// At most one strategy is set. When the file sets several, the first of
	// NodeAllocatable, Label, UniqueNodeLabel wins and the others are
	// dropped, as upstream does.
	NodeAllocatableStrategy  *NodeAllocatableStrategy
	LabelNodePrepareStrategy *LabelNodePrepareStrategy
	UniqueNodeLabelStrategy  *UniqueNodeLabelStrategy

	template *Template
	prefix   string
}

// Node returns node index (0 ≤ index < Count) to create: the template
// rendered with .Index=index and .Count=Count, or DefaultNode. The caller
// owns the result. Like upstream's node preparer, the caller should set Name
// to GenerateName plus a random suffix when it is empty and label the node
// kubernetes.io/hostname=<name> before creating it, then apply the strategy.
func (op *CreateNodes) Node(index int) (*v1.Node, error) {
	if op.template == nil {
		return DefaultNode(op.prefix), nil
	}
	n := &v1.Node{}
	if err := op.template.decode(index, op.Count, n); err != nil {
		return nil, err
	}
	return n, nil
}

// CreateNamespaces creates namespaces <Prefix>-0 … <Prefix>-<Count-1>.
type CreateNamespaces struct {
	OpPos
	Prefix string
	Count  int
	// NamespaceTemplatePath is the resolved namespaceTemplatePath, or empty.
	NamespaceTemplatePath string
	// Namespace is the object each namespace is copied from (its name is
	// replaced): the template (not a Go template: upstream reads it as plain
	// YAML) or an empty Namespace.
	Namespace *v1.Namespace
}

// Names are the namespaces the op creates.
func (op *CreateNamespaces) Names() []string {
	names := make([]string, op.Count)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", op.Prefix, i)
	}
	return names
}

// CreatePods creates Count pods in Namespace (created if missing).
//
// Modes: by default it then waits until Count pods in Namespace are bound
// (poll 1 s, 10 min timeout). With SkipWaitToCompletion it returns at once
// and a later Barrier waits. With SteadyState it creates Count pods and every
// time Count more of them got scheduled deletes the namespace's pods
// (DeleteCollection, grace 0) and creates a new batch, for Duration. With
// CollectMetrics the collectors start before the first pod is created and
// stop when the op finishes; the measurement window is named after Namespace.
type CreatePods struct {
	OpPos
	Count int
	// Namespace is the namespace written in the op, the one a createPodSets
	// gave it, or namespace-<Index>.
	Namespace string
	// PodTemplatePath is the resolved podTemplatePath, else the test case's
	// defaultPodTemplatePath; empty for the built-in pod (DefaultPod).
	PodTemplatePath      string
	CollectMetrics       bool
	SkipWaitToCompletion bool
	SteadyState          bool
	Duration             time.Duration
	// With a PersistentVolumeClaim, every pod i gets its own PVC pvc-<i>
	// and PV <namespace>-vol-<i>, pre-bound to each other, mounted as the
	// pod's only volume "vol" (upstream's CreatePodWithPersistentVolume).
	// Both files are plain YAML, not Go templates. Upstream ignores a PV
	// template without a PVC template, and so does this package.
	PersistentVolumeTemplatePath      string
	PersistentVolumeClaimTemplatePath string
	PersistentVolume                  *v1.PersistentVolume
	PersistentVolumeClaim             *v1.PersistentVolumeClaim

	template *Template
}

// Pod returns a pod to create: the template rendered with .Index=index and
// .Count=count, or DefaultPod. Upstream passes index in [0, count) with count
// = the number of pods created in that batch (Count). The caller owns the
// result. Safe for concurrent use.
func (op *CreatePods) Pod(index, count int) (*v1.Pod, error) {
	if op.template == nil {
		return DefaultPod(), nil
	}
	p := &v1.Pod{}
	if err := op.template.decode(index, count, p); err != nil {
		return nil, err
	}
	return p, nil
}

// DeletePods deletes the pods in Namespace that match LabelSelector (all of
// them when it is empty), as seen by the pod informer when the op starts.
type DeletePods struct {
	OpPos
	// Namespace as written; upstream does not require it, and an empty one
	// lists pods in all namespaces.
	Namespace     string
	LabelSelector map[string]string
	// SkipWaitToCompletion runs the deletion in the background.
	SkipWaitToCompletion bool
	// DeletePodsPerSecond 0 deletes with one DeleteCollection; otherwise one
	// pod per 1/DeletePodsPerSecond tick.
	DeletePodsPerSecond int
}

// Churn creates (and, in ChurnRecreate mode, deletes) API objects in the
// background until the workload ends.
type Churn struct {
	OpPos
	Mode ChurnMode
	// Number: see ChurnCreate and ChurnRecreate.
	Number   int
	Interval time.Duration
	// Namespace for namespaced objects: as written, or namespace-<Index>.
	// It is created if missing.
	Namespace     string
	TemplatePaths []string
	// Objects are the templates, read as plain YAML (not Go templates), one
	// per TemplatePaths entry; the caller maps their kind via discovery.
	// Created objects get their names from the template (use generateName).
	Objects []*unstructured.Unstructured
}

// Barrier waits until the pods that earlier CreatePods with
// SkipWaitToCompletion created in Namespaces (all such namespaces when empty)
// and matching LabelSelector reached StageRequirement (poll 1 s, 10 min
// timeout). A Scheduled barrier then forgets those namespaces; naming a
// namespace the runner does not know is an error.
type Barrier struct {
	OpPos
	Namespaces    []string
	LabelSelector map[string]string
	// StageRequirement is Scheduled or Attempted (defaulted to Scheduled).
	StageRequirement SchedulingStage
}

// Sleep waits for Duration.
type Sleep struct {
	OpPos
	Duration time.Duration
}

// StartCollectingMetrics starts the collectors; only pods in Namespaces that
// match LabelSelector count for throughput. Name is the window's name in the
// results. A later StopCollectingMetrics ends the window.
type StartCollectingMetrics struct {
	OpPos
	Name          string
	Namespaces    []string
	LabelSelector map[string]string
}

// StopCollectingMetrics stops the collectors, computes the results and
// applies the threshold.
type StopCollectingMetrics struct {
	OpPos
}

// CreateAny creates Count objects from a Go template, each rendered with
// .Index and .Count. Upstream creates them with fieldValidation=Strict and
// retries for 20 s (a CRD may not be served yet).
type CreateAny struct {
	OpPos
	// Namespace must be empty for cluster-scoped objects; that can only be
	// checked against discovery, so the runner does it.
	Namespace    string
	TemplatePath string
	// Count defaults to 1.
	Count int

	template *Template
}

// Object renders object index (0 ≤ index < Count). The caller owns the result.
func (op *CreateAny) Object(index int) (*unstructured.Unstructured, error) {
	return op.template.unstructured(index, op.Count)
}

// UpdateAny updates Count objects rendered from a Go template: Update (on
// Subresources when given) and then UpdateStatus, both with
// fieldValidation=Strict; all at once, or UpdatePerSecond per second.
type UpdateAny struct {
	OpPos
	Namespace    string
	TemplatePath string
	// Count defaults to 1.
	Count           int
	UpdatePerSecond int
	Subresources    []string

	template *Template
}

// Object renders object index (0 ≤ index < Count). The caller owns the result.
func (op *UpdateAny) Object(index int) (*unstructured.Unstructured, error) {
	return op.template.unstructured(index, op.Count)
}

func (*CreateNodes) Opcode() Opcode            { return OpcodeCreateNodes }
func (*CreateNamespaces) Opcode() Opcode       { return OpcodeCreateNamespaces }
func (*CreatePods) Opcode() Opcode             { return OpcodeCreatePods }
func (*DeletePods) Opcode() Opcode             { return OpcodeDeletePods }
func (*Churn) Opcode() Opcode                  { return OpcodeChurn }
func (*Barrier) Opcode() Opcode                { return OpcodeBarrier }
func (*Sleep) Opcode() Opcode                  { return OpcodeSleep }
func (*StartCollectingMetrics) Opcode() Opcode { return OpcodeStartCollectingMetrics }
func (*StopCollectingMetrics) Opcode() Opcode  { return OpcodeStopCollectingMetrics }
func (*CreateAny) Opcode() Opcode              { return OpcodeCreateAny }
func (*UpdateAny) Opcode() Opcode              { return OpcodeUpdateAny }

var (
	_ Op = &CreateNodes{}
	_ Op = &CreateNamespaces{}
	_ Op = &CreatePods{}
	_ Op = &DeletePods{}
	_ Op = &Churn{}
	_ Op = &Barrier{}
	_ Op = &Sleep{}
	_ Op = &StartCollectingMetrics{}
	_ Op = &StopCollectingMetrics{}
	_ Op = &CreateAny{}
	_ Op = &UpdateAny{}
)
