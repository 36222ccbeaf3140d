package workload

import (
	"fmt"
)

// Opcode names an op, as in the file's "opcode" key.
type Opcode string

// The opcodes of upstream's scheduler_perf v1.37.2.
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
	OpcodeCreatePodGroups        Opcode = "createPodGroups"
	OpcodeStartCollectingProfile Opcode = "startCollectingProfile"
	OpcodeStopCollectingProfile  Opcode = "stopCollectingProfile"
	OpcodeCreateResourceClaims   Opcode = "createResourceClaims"
	OpcodeAllocResourceClaims    Opcode = "allocResourceClaims"
)

// rawOps is upstream's possibleOps: every opcode and the op, as written in
// a file, that it decodes into. Adding an op is adding its type (a rawOp
// that binds to an Op) and its line here.
var rawOps = []struct {
	code Opcode
	new  func() rawOp
}{
	{OpcodeCreateNodes, func() rawOp { return &createNodesOp{} }},
	{OpcodeCreateNamespaces, func() rawOp { return &createNamespacesOp{} }},
	{OpcodeCreatePods, func() rawOp { return &createPodsOp{} }},
	{OpcodeCreatePodSets, func() rawOp { return &createPodSetsOp{} }},
	{OpcodeDeletePods, func() rawOp { return &deletePodsOp{} }},
	{OpcodeChurn, func() rawOp { return &churnOp{} }},
	{OpcodeBarrier, func() rawOp { return &barrierOp{} }},
	{OpcodeSleep, func() rawOp { return &sleepOp{} }},
	{OpcodeStartCollectingMetrics, func() rawOp { return &startCollectingMetricsOp{} }},
	{OpcodeStopCollectingMetrics, func() rawOp { return &stopCollectingMetricsOp{} }},
	{OpcodeCreateAny, func() rawOp { return &createAnyOp{} }},
	{OpcodeUpdateAny, func() rawOp { return &updateAnyOp{} }},
	{OpcodeCreatePodGroups, func() rawOp { return &createPodGroupsOp{} }},
	{OpcodeStartCollectingProfile, func() rawOp { return &startCollectingProfileOp{} }},
	{OpcodeStopCollectingProfile, func() rawOp { return &stopCollectingProfileOp{} }},
	{OpcodeCreateResourceClaims, func() rawOp { return &createResourceClaimsOp{} }},
	{OpcodeAllocResourceClaims, func() rawOp { return &allocResourceClaimsOp{} }},
}

// removedOps are opcodes older scheduler_perf versions had, with what
// replaces them.
var removedOps = map[Opcode]string{
	"createResourceDriver": "since v1.37 the DRA configs publish ResourceSlices with createAny and a ResourceSlice template",
}

func newRawOp(code Opcode) rawOp {
	for _, r := range rawOps {
		if r.code == code {
			return r.new()
		}
	}
	return nil
}

func opcodeNames() []string {
	names := make([]string, 0, len(rawOps))
	for _, r := range rawOps {
		names = append(names, string(r.code))
	}
	return names
}

// rawOp is an op as written in the workloadTemplate, before params are
// bound: upstream's op struct, with its isValid and collectsMetrics, and
// bind in place of its patchParams.
type rawOp interface {
	// isValid is upstream's isValid: with allowParameterization a …Param
	// field stands in for its value.
	isValid(allowParameterization bool) error
	collectsMetrics() bool
	// bind is upstream's patchParams followed by what upstream does when the
	// op starts and before it touches the cluster: defaults applied, paths
	// resolved, files read, templates rendered once. pos is where the first
	// op it returns goes; only createPodSets returns more than one.
	bind(b *binder, pos OpPos) ([]Op, error)
}

// Op is one resolved op of a Selected workload: params bound, createPodSets
// unrolled, defaults applied, paths resolved and files loaded. It is one of
// *CreateNodes, *CreateNamespaces, *CreatePods, *DeletePods, *Churn, *Barrier,
// *Sleep, *StartCollectingMetrics, *StopCollectingMetrics, *CreateAny,
// *UpdateAny, *CreatePodGroups, *StartCollectingProfile,
// *StopCollectingProfile, *CreateResourceClaims, *AllocResourceClaims;
// switch on the type.
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
