package workload

import (
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// createNamespacesOp is upstream's createNamespacesOp, as written.
type createNamespacesOp struct {
	Opcode                Opcode
	Prefix                string
	Count                 int
	CountParam            string
	NamespaceTemplatePath *string
}

func (op *createNamespacesOp) isValid(allowParameterization bool) error {
	if !isValidCount(allowParameterization, op.Count, op.CountParam) {
		return countError(op.Count, op.CountParam)
	}
	return nil
}

func (*createNamespacesOp) collectsMetrics() bool { return false }

func (r *createNamespacesOp) bind(b *binder, pos OpPos) ([]Op, error) {
	op := &CreateNamespaces{OpPos: pos, Prefix: r.Prefix, Count: r.Count}
	if r.CountParam != "" {
		var err error
		if op.Count, err = b.int("countParam", r.CountParam); err != nil {
			return nil, err
		}
	}
	if op.Count < 0 {
		return nil, countError(op.Count, "")
	}
	op.Namespace = &v1.Namespace{}
	if r.NamespaceTemplatePath != nil {
		p, err := b.path("namespaceTemplatePath", r.NamespaceTemplatePath)
		if err != nil {
			return nil, err
		}
		op.NamespaceTemplatePath = p
		if err := b.load.strict(p, op.Namespace); err != nil {
			return nil, fmt.Errorf("namespaceTemplatePath: %w", err)
		}
	}
	return one(op, nil)
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

// Opcode implements Op.
func (*CreateNamespaces) Opcode() Opcode { return OpcodeCreateNamespaces }

// Names are the namespaces the op creates.
func (op *CreateNamespaces) Names() []string {
	names := make([]string, op.Count)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", op.Prefix, i)
	}
	return names
}

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

// churnOp is upstream's churnOp, as written.
type churnOp struct {
	Opcode               Opcode
	Mode                 string
	Number               int
	IntervalMilliseconds int64
	Namespace            *string
	TemplatePaths        []string
}

func (op *churnOp) isValid(bool) error {
	if op.Mode != string(ChurnRecreate) && op.Mode != string(ChurnCreate) {
		return errorf("mode %q is not one of %s, %s", op.Mode, ChurnRecreate, ChurnCreate)
	}
	if op.Number < 0 {
		return errorf("number must not be negative, got %d", op.Number)
	}
	if op.Mode == string(ChurnRecreate) && op.Number == 0 {
		return errorf("number must be > 0 when mode is %s", ChurnRecreate)
	}
	if len(op.TemplatePaths) == 0 {
		return errorf("templatePaths must name at least one file")
	}
	return nil
}

func (*churnOp) collectsMetrics() bool { return false }

func (r *churnOp) bind(b *binder, pos OpPos) ([]Op, error) {
	op := &Churn{OpPos: pos, Mode: ChurnMode(r.Mode), Number: r.Number, Interval: DefaultChurnInterval}
	if r.IntervalMilliseconds < 0 {
		return nil, fmt.Errorf("intervalMilliseconds must not be negative, got %d", r.IntervalMilliseconds)
	}
	if r.IntervalMilliseconds != 0 {
		op.Interval = time.Duration(r.IntervalMilliseconds) * time.Millisecond
	}
	ns, err := defaultNamespace(r.Namespace, pos)
	if err != nil {
		return nil, err
	}
	op.Namespace = ns
	for k, p := range r.TemplatePaths {
		if p == "" {
			return nil, fmt.Errorf("templatePaths[%d] is empty", k)
		}
		p = b.f.resolve(p)
		op.TemplatePaths = append(op.TemplatePaths, p)
		obj, err := b.load.unstructured(p)
		if err != nil {
			return nil, fmt.Errorf("templatePaths[%d]: %w", k, err)
		}
		op.Objects = append(op.Objects, obj)
	}
	return one(op, nil)
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

// Opcode implements Op.
func (*Churn) Opcode() Opcode { return OpcodeChurn }

// createAnyOp is upstream's createAny, as written.
type createAnyOp struct {
	Opcode         Opcode
	Namespace      string
	TemplatePath   string
	Count          *int
	CountParam     string
	TemplateParams map[string]any
}

func (op *createAnyOp) isValid(bool) error {
	if op.TemplatePath == "" {
		return errorf("templatePath must be set")
	}
	return nil
}

func (*createAnyOp) collectsMetrics() bool { return false }

func (r *createAnyOp) bind(b *binder, pos OpPos) ([]Op, error) {
	objs, err := bindObjects(b, r.Namespace, r.TemplatePath, r.Count, r.CountParam, r.TemplateParams)
	return one(&CreateAny{OpPos: pos, Objects: objs}, err)
}

// updateAnyOp is upstream's updateAny, as written.
type updateAnyOp struct {
	Opcode          Opcode
	Namespace       string
	TemplatePath    string
	Count           *int
	CountParam      string
	UpdatePerSecond int
	Subresources    []string
}

func (op *updateAnyOp) isValid(bool) error {
	if op.TemplatePath == "" {
		return errorf("templatePath must be set")
	}
	if op.UpdatePerSecond < 0 {
		return errorf("updatePerSecond must not be negative, got %d", op.UpdatePerSecond)
	}
	return nil
}

func (*updateAnyOp) collectsMetrics() bool { return false }

func (r *updateAnyOp) bind(b *binder, pos OpPos) ([]Op, error) {
	objs, err := bindObjects(b, r.Namespace, r.TemplatePath, r.Count, r.CountParam, nil)
	return one(&UpdateAny{OpPos: pos, Objects: objs, UpdatePerSecond: r.UpdatePerSecond, Subresources: slices.Clone(r.Subresources)}, err)
}

// bindObjects binds what createAny and updateAny share.
func bindObjects(b *binder, namespace, templatePath string, count *int, countParam string, templateParams map[string]any) (Objects, error) {
	objs := Objects{Namespace: namespace, Count: 1}
	var err error
	if count != nil {
		objs.Count = *count
	}
	if countParam != "" {
		if objs.Count, err = b.int("countParam", countParam); err != nil {
			return objs, err
		}
	}
	if objs.TemplateParams, err = b.templateParams(templateParams); err != nil {
		return objs, err
	}
	objs.TemplatePath = b.f.resolve(templatePath)
	if objs.template, err = b.load.objectTemplate(objs.TemplatePath, firstRender(objs.TemplateParams, objs.Count)); err != nil {
		return objs, fmt.Errorf("templatePath: %w", err)
	}
	return objs, nil
}

// Objects are the API objects createAny and updateAny render from a Go
// template, each with TemplateParams, .Index and .Count.
type Objects struct {
	// Namespace must be empty for cluster-scoped objects; that can only be
	// checked against discovery, so the runner does it.
	Namespace    string
	TemplatePath string
	// Count defaults to 1.
	Count int
	// TemplateParams are the values the template sees besides .Index and
	// .Count, params bound (createAny only).
	TemplateParams map[string]any

	template *Template
}

// Object renders object index (0 ≤ index < Count). The caller owns the result.
func (o *Objects) Object(index int) (*unstructured.Unstructured, error) {
	return o.template.unstructured(templateData(o.TemplateParams, index, o.Count))
}

// CreateAny creates Count objects. Upstream creates them with
// fieldValidation=Strict and retries for 20 s (a CRD may not be served yet).
type CreateAny struct {
	OpPos
	Objects
}

// Opcode implements Op.
func (*CreateAny) Opcode() Opcode { return OpcodeCreateAny }

// UpdateAny updates Count objects: Update (on Subresources when given) and
// then UpdateStatus, both with fieldValidation=Strict; all at once, or
// UpdatePerSecond per second.
type UpdateAny struct {
	OpPos
	Objects
	UpdatePerSecond int
	Subresources    []string
}

// Opcode implements Op.
func (*UpdateAny) Opcode() Opcode { return OpcodeUpdateAny }

// createPodGroupsOp is upstream's createPodGroups, as written.
type createPodGroupsOp struct {
	Opcode         Opcode
	Namespace      string
	TemplatePath   string
	TemplateParams map[string]any
	Count          int
	CountParam     string
}

func (op *createPodGroupsOp) isValid(allowParameterization bool) error {
	if op.TemplatePath == "" {
		return errorf("templatePath must be set")
	}
	if op.Namespace == "" {
		return errorf("namespace must be set")
	}
	if !isValidCount(allowParameterization, op.Count, op.CountParam) {
		return countError(op.Count, op.CountParam)
	}
	if !allowParameterization && op.Count < 1 {
		return errorf("count must be at least 1, got %d", op.Count)
	}
	return nil
}

func (*createPodGroupsOp) collectsMetrics() bool { return false }

func (r *createPodGroupsOp) bind(b *binder, pos OpPos) ([]Op, error) {
	c := *r
	var err error
	if r.CountParam != "" {
		if c.Count, err = b.int("countParam", r.CountParam); err != nil {
			return nil, err
		}
	}
	if c.TemplateParams, err = b.templateParams(r.TemplateParams); err != nil {
		return nil, err
	}
	if err := c.isValid(false); err != nil {
		return nil, err
	}
	op := &CreatePodGroups{OpPos: pos, Namespace: c.Namespace, TemplatePath: b.f.resolve(c.TemplatePath), Count: c.Count, TemplateParams: c.TemplateParams}
	op.template, err = b.load.typedTemplate(op.TemplatePath, templateData(op.TemplateParams, 0, -1), func() runtime.Object { return &schedulingv1beta1.PodGroup{} })
	if err != nil {
		return nil, fmt.Errorf("templatePath: %w", err)
	}
	return one(op, nil)
}

// CreatePodGroups creates Count PodGroups (scheduling.k8s.io/v1beta1) in
// Namespace (created if missing), then waits until the scheduler can see
// them (upstream: its informer's cache, within 10 s), so that pods naming
// them can follow.
type CreatePodGroups struct {
	OpPos
	Namespace    string
	TemplatePath string
	Count        int
	// TemplateParams are the values the template sees besides .Index, params
	// bound. Upstream gives PodGroup templates no .Count.
	TemplateParams map[string]any

	template *Template
}

// Opcode implements Op.
func (*CreatePodGroups) Opcode() Opcode { return OpcodeCreatePodGroups }

// PodGroup renders PodGroup index (0 ≤ index < Count). The caller owns the
// result.
func (op *CreatePodGroups) PodGroup(index int) (*schedulingv1beta1.PodGroup, error) {
	pg := &schedulingv1beta1.PodGroup{}
	if err := op.template.decode(templateData(op.TemplateParams, index, -1), pg); err != nil {
		return nil, err
	}
	return pg, nil
}
