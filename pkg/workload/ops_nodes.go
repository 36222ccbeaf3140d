package workload

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
)

// createNodesOp is upstream's createNodesOp, as written.
type createNodesOp struct {
	Opcode                   Opcode
	Count                    int
	CountParam               string
	NodeTemplatePath         *string
	NodeAllocatableStrategy  *NodeAllocatableStrategy
	LabelNodePrepareStrategy *LabelNodePrepareStrategy
	UniqueNodeLabelStrategy  *UniqueNodeLabelStrategy
	TemplateParams           map[string]any
}

// NodeAllocatableStrategy is upstream's test/utils NodeAllocatableStrategy:
// every node gets NodeAllocatable as status.allocatable, and a CSINode whose
// drivers get CsiNodeAllocatable; MigratedPlugins goes into the CSINode's
// storage.alpha.kubernetes.io/migrated-plugins annotation.
type NodeAllocatableStrategy struct {
	NodeAllocatable    map[string]string
	CsiNodeAllocatable map[string]*storagev1.VolumeNodeResources
	MigratedPlugins    []string
}

// LabelNodePrepareStrategy is upstream's: node i gets the label
// LabelKey=LabelValues[i % len(LabelValues)] (round robin over the op's nodes).
type LabelNodePrepareStrategy struct {
	LabelKey    string
	LabelValues []string
}

// UniqueNodeLabelStrategy is upstream's: every node gets the label LabelKey
// with a fresh UUID as its value.
type UniqueNodeLabelStrategy struct {
	LabelKey string
}

func (op *createNodesOp) isValid(allowParameterization bool) error {
	if !isValidCount(allowParameterization, op.Count, op.CountParam) {
		return countError(op.Count, op.CountParam)
	}
	return nil
}

func (*createNodesOp) collectsMetrics() bool { return false }

func (r *createNodesOp) bind(b *binder, pos OpPos) ([]Op, error) {
	op := &CreateNodes{OpPos: pos, Count: r.Count, prefix: fmt.Sprintf("node-%d-", pos.Index)}
	var err error
	if r.CountParam != "" {
		if op.Count, err = b.int("countParam", r.CountParam); err != nil {
			return nil, err
		}
	}
	if op.Count < 0 {
		return nil, countError(op.Count, "")
	}
	if op.TemplateParams, err = b.templateParams(r.TemplateParams); err != nil {
		return nil, err
	}
	switch {
	case r.NodeAllocatableStrategy != nil:
		s := r.NodeAllocatableStrategy
		for _, name := range sortedKeys(s.NodeAllocatable) {
			if _, err := resource.ParseQuantity(s.NodeAllocatable[name]); err != nil {
				return nil, fmt.Errorf("nodeAllocatableStrategy.nodeAllocatable[%q]: %q is not a quantity: %w", name, s.NodeAllocatable[name], err)
			}
		}
		for _, driver := range sortedKeys(s.CsiNodeAllocatable) {
			if s.CsiNodeAllocatable[driver] == nil {
				return nil, fmt.Errorf("nodeAllocatableStrategy.csiNodeAllocatable[%q] is null", driver)
			}
		}
		op.NodeAllocatableStrategy = &NodeAllocatableStrategy{
			NodeAllocatable:    maps.Clone(s.NodeAllocatable),
			CsiNodeAllocatable: maps.Clone(s.CsiNodeAllocatable),
			MigratedPlugins:    slices.Clone(s.MigratedPlugins),
		}
	case r.LabelNodePrepareStrategy != nil:
		s := r.LabelNodePrepareStrategy
		if errs := validation.IsQualifiedName(s.LabelKey); len(errs) > 0 {
			return nil, fmt.Errorf("labelNodePrepareStrategy.labelKey %q: %s", s.LabelKey, strings.Join(errs, "; "))
		}
		if len(s.LabelValues) == 0 {
			return nil, errors.New("labelNodePrepareStrategy.labelValues must not be empty")
		}
		for _, v := range s.LabelValues {
			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				return nil, fmt.Errorf("labelNodePrepareStrategy.labelValues: %q: %s", v, strings.Join(errs, "; "))
			}
		}
		op.LabelNodePrepareStrategy = &LabelNodePrepareStrategy{LabelKey: s.LabelKey, LabelValues: slices.Clone(s.LabelValues)}
	case r.UniqueNodeLabelStrategy != nil:
		s := r.UniqueNodeLabelStrategy
		if errs := validation.IsQualifiedName(s.LabelKey); len(errs) > 0 {
			return nil, fmt.Errorf("uniqueNodeLabelStrategy.labelKey %q: %s", s.LabelKey, strings.Join(errs, "; "))
		}
		op.UniqueNodeLabelStrategy = &UniqueNodeLabelStrategy{LabelKey: s.LabelKey}
	}
	if r.NodeTemplatePath != nil {
		p, err := b.path("nodeTemplatePath", r.NodeTemplatePath)
		if err != nil {
			return nil, err
		}
		op.NodeTemplatePath = p
		t, err := b.load.typedTemplate(p, firstRender(op.TemplateParams, op.Count), func() runtime.Object { return &v1.Node{} })
		if err != nil {
			return nil, fmt.Errorf("nodeTemplatePath: %w", err)
		}
		op.template = t
	}
	return one(op, nil)
}

// CreateNodes creates Count nodes. Nodes are API objects only: no kubelet.
type CreateNodes struct {
	OpPos
	Count int
	// NodeTemplatePath is the resolved nodeTemplatePath; empty for the
	// built-in node (DefaultNode).
	NodeTemplatePath string
	// TemplateParams are the values the template sees besides .Index and
	// .Count, params bound.
	TemplateParams map[string]any
	// At most one strategy is set. When the file sets several, the first of
	// NodeAllocatable, Label, UniqueNodeLabel wins and the others are
	// dropped, as upstream does.
	NodeAllocatableStrategy  *NodeAllocatableStrategy
	LabelNodePrepareStrategy *LabelNodePrepareStrategy
	UniqueNodeLabelStrategy  *UniqueNodeLabelStrategy

	template *Template
	prefix   string
}

// Opcode implements Op.
func (*CreateNodes) Opcode() Opcode { return OpcodeCreateNodes }

// Node returns node index (0 ≤ index < Count) to create: the template
// rendered with TemplateParams, .Index=index and .Count=Count, or
// DefaultNode. The caller owns the result. Like upstream's node preparer,
// the caller should set Name to GenerateName plus a random suffix when it is
// empty and label the node kubernetes.io/hostname=<name> before creating it,
// then apply the strategy.
func (op *CreateNodes) Node(index int) (*v1.Node, error) {
	if op.template == nil {
		return DefaultNode(op.prefix), nil
	}
	n := &v1.Node{}
	if err := op.template.decode(templateData(op.TemplateParams, index, op.Count), n); err != nil {
		return nil, err
	}
	return n, nil
}
