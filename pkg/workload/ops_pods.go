package workload

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// createPodsOp is upstream's createPodsOp, as written.
type createPodsOp struct {
	Opcode                            Opcode
	Count                             int
	CountParam                        string
	CountMultiplierParam              string
	SteadyState                       bool
	SteadyStateParam                  string
	Duration                          metav1.Duration
	DurationParam                     string
	CollectMetrics                    bool
	Namespace                         *string
	PodTemplatePath                   *string
	SkipWaitToCompletion              bool
	PersistentVolumeTemplatePath      *string
	PersistentVolumeClaimTemplatePath *string
	TemplateParams                    map[string]any
	SignatureBatchSize                int
	SignatureBatchSizeParam           string
}

func (op *createPodsOp) isValid(allowParameterization bool) error {
	if !isValidCount(allowParameterization, op.SignatureBatchSize, op.SignatureBatchSizeParam) {
		return fieldCountError("signatureBatchSize", op.SignatureBatchSize, "signatureBatchSizeParam", op.SignatureBatchSizeParam)
	}
	if !isValidCount(allowParameterization, op.Count, op.CountParam) {
		return countError(op.Count, op.CountParam)
	}
	if op.CountMultiplierParam != "" && !strings.HasPrefix(op.CountMultiplierParam, "$") {
		return errorf("countMultiplierParam %q must start with \"$\" (it names a param: \"$name\")", op.CountMultiplierParam)
	}
	if op.CollectMetrics && op.SkipWaitToCompletion {
		return errorf("collectMetrics and skipWaitToCompletion cannot both be true")
	}
	if op.SkipWaitToCompletion && op.SteadyState {
		return errorf("skipWaitToCompletion and steadyState cannot both be true")
	}
	if op.Duration.Duration < 0 {
		return errorf("duration %s is out of range: want a duration of 0s or more", op.Duration.Duration)
	}
	if op.SteadyState && !allowParameterization && op.Duration.Duration <= 0 {
		return errorf("steadyState needs a duration > 0, got %s", op.Duration.Duration)
	}
	return nil
}

func (op *createPodsOp) collectsMetrics() bool { return op.CollectMetrics }

func (r *createPodsOp) bind(b *binder, pos OpPos) ([]Op, error) {
	return one(r.bindIn(b, nil, pos))
}

// bindIn binds a createPods op, or one of createPodSets' copies, in which
// case namespace is the set's namespace.
func (raw *createPodsOp) bindIn(b *binder, namespace *string, pos OpPos) (*CreatePods, error) {
	r := *raw
	var err error
	if r.CountParam != "" {
		if r.Count, err = b.int("countParam", r.CountParam); err != nil {
			return nil, err
		}
	}
	if r.CountMultiplierParam != "" {
		multiplier, err := b.int("countMultiplierParam", r.CountMultiplierParam)
		if err != nil {
			return nil, err
		}
		r.Count *= multiplier
	}
	if r.SignatureBatchSizeParam != "" {
		if r.SignatureBatchSize, err = b.int("signatureBatchSizeParam", r.SignatureBatchSizeParam); err != nil {
			return nil, err
		}
	}
	if r.SignatureBatchSize == 0 {
		r.SignatureBatchSize = 1
	}
	if r.DurationParam != "" {
		if r.Duration.Duration, err = b.duration("durationParam", r.DurationParam); err != nil {
			return nil, err
		}
	}
	if r.SteadyStateParam != "" {
		if r.SteadyState, err = b.bool("steadyStateParam", r.SteadyStateParam); err != nil {
			return nil, err
		}
	}
	params, err := b.templateParams(r.TemplateParams)
	if err != nil {
		return nil, err
	}
	if err := r.isValid(false); err != nil {
		return nil, err
	}
	if namespace != nil {
		r.Namespace = namespace
	}
	ns, err := defaultNamespace(r.Namespace, pos)
	if err != nil {
		return nil, err
	}
	op := &CreatePods{
		OpPos:                pos,
		Count:                r.Count,
		Namespace:            ns,
		CollectMetrics:       r.CollectMetrics,
		SkipWaitToCompletion: r.SkipWaitToCompletion,
		SteadyState:          r.SteadyState,
		Duration:             r.Duration.Duration,
		TemplateParams:       params,
		SignatureBatchSize:   r.SignatureBatchSize,
	}
	tmplPath, key := r.PodTemplatePath, "podTemplatePath"
	if tmplPath == nil {
		tmplPath, key = b.tc.defaultPodTemplatePath, "defaultPodTemplatePath"
	}
	if tmplPath != nil {
		p, err := b.path(key, tmplPath)
		if err != nil {
			return nil, err
		}
		op.PodTemplatePath = p
		t, err := b.load.typedTemplate(p, firstRender(params, op.Count), func() runtime.Object { return &v1.Pod{} })
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		op.template = t
	}
	if r.PersistentVolumeClaimTemplatePath != nil {
		if r.PersistentVolumeTemplatePath == nil {
			return nil, errors.New("persistentVolumeClaimTemplatePath needs a persistentVolumeTemplatePath too")
		}
		pvc, err := b.path("persistentVolumeClaimTemplatePath", r.PersistentVolumeClaimTemplatePath)
		if err != nil {
			return nil, err
		}
		pv, err := b.path("persistentVolumeTemplatePath", r.PersistentVolumeTemplatePath)
		if err != nil {
			return nil, err
		}
		op.PersistentVolumeClaimTemplatePath, op.PersistentVolumeTemplatePath = pvc, pv
		op.PersistentVolumeClaim, op.PersistentVolume = &v1.PersistentVolumeClaim{}, &v1.PersistentVolume{}
		if err := b.load.strict(pvc, op.PersistentVolumeClaim); err != nil {
			return nil, fmt.Errorf("persistentVolumeClaimTemplatePath: %w", err)
		}
		if err := b.load.strict(pv, op.PersistentVolume); err != nil {
			return nil, fmt.Errorf("persistentVolumeTemplatePath: %w", err)
		}
	}
	return op, nil
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
	// Count is countParam's value (or count) times countMultiplierParam's.
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
	// TemplateParams are the values the pod template sees besides .Index
	// and .Count, params bound.
	TemplateParams map[string]any
	// SignatureBatchSize is how many consecutive pods share a "signature"
	// label (at least 1); see Pod.
	SignatureBatchSize int
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

// Opcode implements Op.
func (*CreatePods) Opcode() Opcode { return OpcodeCreatePods }

// SignatureLabel is the label upstream v1.37 puts on every pod made from a
// template: pods index/SignatureBatchSize apart share its value, so a batch
// has one scheduling signature.
const SignatureLabel = "signature"

// Pod returns a pod to create: the template rendered with TemplateParams,
// .Index=index and .Count=count, labelled SignatureLabel
// "signature-label-<index/SignatureBatchSize>"; or DefaultPod, unlabelled.
// Upstream passes index in [0, count) with count = the number of pods created
// in that batch (Count). The caller owns the result. Safe for concurrent use.
func (op *CreatePods) Pod(index, count int) (*v1.Pod, error) {
	if op.template == nil {
		return DefaultPod(), nil
	}
	p := &v1.Pod{}
	if err := op.template.decode(templateData(op.TemplateParams, index, count), p); err != nil {
		return nil, err
	}
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[SignatureLabel] = fmt.Sprintf("signature-label-%d", index/max(op.SignatureBatchSize, 1))
	return p, nil
}

// createPodSetsOp is upstream's createPodSetsOp, as written.
type createPodSetsOp struct {
	Opcode          Opcode
	Count           int
	CountParam      string
	NamespacePrefix string
	CreatePodsOp    createPodsOp
}

func (op *createPodSetsOp) isValid(allowParameterization bool) error {
	if !isValidCount(allowParameterization, op.Count, op.CountParam) {
		return countError(op.Count, op.CountParam)
	}
	if err := op.CreatePodsOp.isValid(allowParameterization); err != nil {
		return fmt.Errorf("createPodsOp: %w", err)
	}
	return nil
}

func (op *createPodSetsOp) collectsMetrics() bool { return op.CreatePodsOp.CollectMetrics }

// maxPodSets bounds createPodSets' count: each set becomes an op.
const maxPodSets = 100000

// bind is upstream's unrollWorkloadTemplate for one createPodSets: count
// createPods ops, in namespaces <namespacePrefix>-<i>.
func (r *createPodSetsOp) bind(b *binder, pos OpPos) ([]Op, error) {
	c := *r
	if r.CountParam != "" {
		var err error
		if c.Count, err = b.int("countParam", r.CountParam); err != nil {
			return nil, err
		}
	}
	// Upstream validates with parameterization still allowed here, so a
	// negative count from a param makes no sets.
	if err := c.isValid(true); err != nil {
		return nil, err
	}
	if c.Count > maxPodSets {
		return nil, fmt.Errorf("count %d is more than %d pod sets", c.Count, maxPodSets)
	}
	var ops []Op
	for i := 0; i < c.Count; i++ {
		ns := fmt.Sprintf("%s-%d", r.NamespacePrefix, i)
		op, err := r.CreatePodsOp.bindIn(b, &ns, OpPos{Index: pos.Index + i, TemplateIndex: pos.TemplateIndex})
		if err != nil {
			return nil, fmt.Errorf("pod set %d (namespace %q): %w", i, ns, err)
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// deletePodsOp is upstream's deletePodsOp, as written.
type deletePodsOp struct {
	Opcode               Opcode
	Namespace            string
	LabelSelector        map[string]string
	SkipWaitToCompletion bool
	DeletePodsPerSecond  int
}

func (op *deletePodsOp) isValid(bool) error {
	if op.DeletePodsPerSecond < 0 {
		return errorf("deletePodsPerSecond must not be negative, got %d", op.DeletePodsPerSecond)
	}
	return nil
}

func (*deletePodsOp) collectsMetrics() bool { return false }

func (r *deletePodsOp) bind(_ *binder, pos OpPos) ([]Op, error) {
	return one(&DeletePods{
		OpPos:                pos,
		Namespace:            r.Namespace,
		LabelSelector:        maps.Clone(r.LabelSelector),
		SkipWaitToCompletion: r.SkipWaitToCompletion,
		DeletePodsPerSecond:  r.DeletePodsPerSecond,
	}, nil)
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

// Opcode implements Op.
func (*DeletePods) Opcode() Opcode { return OpcodeDeletePods }

// SchedulingStage is what a barrier waits for.
type SchedulingStage string

const (
	// Scheduled waits until the pods are bound (spec.nodeName set).
	Scheduled SchedulingStage = "Scheduled"
	// Attempted waits until the pods have a PodScheduled condition, whatever
	// its status: each went through at least one scheduling cycle.
	Attempted SchedulingStage = "Attempted"
)

// barrierOp is upstream's barrierOp, as written.
type barrierOp struct {
	Opcode           Opcode
	Namespaces       []string
	LabelSelector    map[string]string
	StageRequirement SchedulingStage
}

func (op *barrierOp) isValid(bool) error {
	if op.StageRequirement != "" && op.StageRequirement != Scheduled && op.StageRequirement != Attempted {
		return errorf("stageRequirement %q is not one of %s, %s", op.StageRequirement, Scheduled, Attempted)
	}
	return nil
}

func (*barrierOp) collectsMetrics() bool { return false }

func (r *barrierOp) bind(_ *binder, pos OpPos) ([]Op, error) {
	op := &Barrier{OpPos: pos, Namespaces: slices.Clone(r.Namespaces), LabelSelector: maps.Clone(r.LabelSelector), StageRequirement: r.StageRequirement}
	if op.StageRequirement == "" {
		op.StageRequirement = Scheduled
	}
	return one(op, nil)
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

// Opcode implements Op.
func (*Barrier) Opcode() Opcode { return OpcodeBarrier }
