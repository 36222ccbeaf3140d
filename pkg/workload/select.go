package workload

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Selected is one workload ready to run: upstream's (testCase, Workload)
// pair with everything upstream works out while it runs the workload
// already worked out.
type Selected struct {
	// Path is the config file.
	Path     string
	TestCase string
	Workload string
	// Labels are the test case's labels followed by the workload's.
	Labels []string
	// FeatureGates are the test case's gates with the workload's on top, as
	// written (see EffectiveFeatureGates for what upstream sets).
	FeatureGates map[string]bool
	// SchedulerConfigPath is the resolved schedulerConfigPath, empty for the
	// default configuration. Select checks the file is a
	// KubeSchedulerConfiguration; decoding it with defaults and validating
	// it needs k8s.io/kubernetes and is the runner's job.
	SchedulerConfigPath string
	// SchedulerConfig is that file's content, read once by Select, so that
	// it travels as bytes to wherever the scheduler starts; nil for the
	// default configuration.
	SchedulerConfig []byte
	// MetricsCollectorConfig is the test case's, else the default one for
	// these gates.
	MetricsCollectorConfig *MetricsCollectorConfig
	// Threshold is the workload's; Threshold.Get(topic) is what to apply.
	Threshold Threshold
	// ThresholdMetricSelector is the workload's, else the test case's
	// default, else DefaultThresholdMetricSelector().
	ThresholdMetricSelector ThresholdMetricSelector
	// Params are the workload's params (all of them used by some op).
	Params map[string]any
	// Ops run in order. Each op's Pos().Index is its position here.
	Ops []Op
}

// SelectOption changes what Select accepts.
type SelectOption func(*selectOptions)

type selectOptions struct {
	externalParams map[string]bool
}

// WithExternalParams declares params that the caller itself reads (with
// Selected.Param), so that Select does not reject them as unused. Upstream's
// Go hooks (WithPreRunFn, WithNodeUpdateFn) read params the same way: the
// nodedeclaredfeatures config defines numNodeDeclaredFeatures for them.
func WithExternalParams(names ...string) SelectOption {
	return func(o *selectOptions) {
		if o.externalParams == nil {
			o.externalParams = map[string]bool{}
		}
		for _, n := range names {
			o.externalParams[n] = true
		}
	}
}

// Param is upstream's Workload.GetParam: the param as an int (JSON numbers
// are float64; the fraction is dropped).
func (s *Selected) Param(name string) (int, error) {
	v, ok := s.Params[name]
	if !ok {
		return 0, fmt.Errorf("param %q is not defined", name)
	}
	f, ok := v.(float64)
	if !ok {
		return 0, fmt.Errorf("param %q is %T, want a number", name, v)
	}
	return int(f), nil
}

// Name is upstream's sub-benchmark name below BenchmarkPerfScheduling:
// "<test case>/<workload>".
func (s *Selected) Name() string { return s.TestCase + "/" + s.Workload }

// QueueingHintsEnabled reports whether the scheduler runs with queueing
// hints: SchedulerQueueingHints is locked on in v1.36 unless the gates set it
// to false explicitly (see EffectiveFeatureGates).
func (s *Selected) QueueingHintsEnabled() bool {
	enabled, set := s.FeatureGates[GateSchedulerQueueingHints]
	return !set || enabled
}

// Feature gates upstream's setupTestCase treats specially.
const (
	GateSchedulerQueueingHints = "SchedulerQueueingHints"
	GateOpportunisticBatching  = "OpportunisticBatching"
)

// EffectiveFeatureGates returns the gates upstream's setupTestCase actually
// sets, and the emulation version it sets first ("" for none): when
// SchedulerQueueingHints is explicitly false, emulation version 1.33 (the
// gate is locked on since 1.34, so that is the only way to turn it off; it
// changes other gates' defaults too); otherwise OpportunisticBatching is set
// to false unless the gates set it.
func (s *Selected) EffectiveFeatureGates() (gates map[string]bool, emulationVersion string) {
	gates = maps.Clone(s.FeatureGates)
	if gates == nil {
		gates = map[string]bool{}
	}
	if enabled, set := gates[GateSchedulerQueueingHints]; set && !enabled {
		return gates, "1.33"
	}
	if _, set := gates[GateOpportunisticBatching]; !set {
		gates[GateOpportunisticBatching] = false
	}
	return gates, ""
}

// Select returns the workloads to run, in file order: those of the test case
// named testCase ("" for all), named workload ("" for all), whose labels pass
// labelFilter (see MatchLabels; "" for all). Upstream uses the names as
// sub-benchmark names; here they match exactly.
//
// For each workload Select does what upstream does before and while running
// it, so that a workload that would fail on its config fails now: merge the
// feature gates, validate the threshold and its metric selector, bind the
// $params (undefined params and wrong types are errors, and so is a param
// no op uses), unroll createPodSets, default namespaces and the pod template,
// resolve paths against the file's directory, read every file the ops name
// and render each Go template once (with .Index 0) to check it produces a
// valid object, check that metric collection windows do not overlap and
// that every stopCollectingMetrics has a start, and check that the
// scheduler configuration file is a KubeSchedulerConfiguration.
//
// An error is an *Error; when nothing matches it wraps ErrNoMatch.
func (f *File) Select(testCase, workload, labelFilter string, opts ...SelectOption) ([]*Selected, error) {
	var o selectOptions
	for _, opt := range opts {
		opt(&o)
	}
	var out []*Selected
	loader := &fileLoader{f: f, templates: map[string]*Template{}, warmed: map[string]bool{}}
	tcFound, wFound := false, false
	for _, tc := range f.TestCases {
		if testCase != "" && tc.Name != testCase {
			continue
		}
		tcFound = true
		for _, w := range tc.Workloads {
			if workload != "" && w.Name != workload {
				continue
			}
			wFound = true
			labels := append(slices.Clone(tc.Labels), w.Labels...)
			if !MatchLabels(labelFilter, labels...) {
				continue
			}
			s, err := f.resolveWorkload(loader, tc, w, &o)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	var msg string
	switch {
	case !tcFound:
		msg = fmt.Sprintf("no test case %q (the file has %s)", testCase, quoteList(testCaseNames(f)))
	case !wFound && testCase != "":
		msg = fmt.Sprintf("test case %q has no workload %q (it has %s)", testCase, workload, quoteList(workloadNames(f.TestCase(testCase))))
	case !wFound:
		msg = fmt.Sprintf("no test case has a workload %q", workload)
	default:
		msg = fmt.Sprintf("no workload passes label filter %q", labelFilter)
		if testCase != "" || workload != "" {
			msg = fmt.Sprintf("no workload named by test case %q, workload %q passes label filter %q", testCase, workload, labelFilter)
		}
	}
	return nil, &Error{Path: f.Path, TestCaseIndex: -1, WorkloadIndex: -1, Op: -1, Err: &noMatchError{msg}}
}

type noMatchError struct{ msg string }

func (e *noMatchError) Error() string        { return e.msg }
func (e *noMatchError) Is(target error) bool { return target == ErrNoMatch }

func testCaseNames(f *File) []string {
	var names []string
	for _, tc := range f.TestCases {
		names = append(names, tc.Name)
	}
	return names
}

func workloadNames(tc *TestCase) []string {
	var names []string
	for _, w := range tc.Workloads {
		names = append(names, w.Name)
	}
	return names
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// maxPodSets bounds createPodSets' count: each set becomes an op.
const maxPodSets = 100000

func (f *File) resolveWorkload(loader *fileLoader, tc *TestCase, w *Workload, o *selectOptions) (*Selected, error) {
	wErr := func(err error) error {
		return &Error{Path: f.Path, TestCase: tc.Name, TestCaseIndex: tc.index, Workload: w.Name, WorkloadIndex: w.index, Op: -1, Err: err}
	}
	s := &Selected{
		Path:                f.Path,
		TestCase:            tc.Name,
		Workload:            w.Name,
		Labels:              append(slices.Clone(tc.Labels), w.Labels...),
		FeatureGates:        mergeGates(tc.FeatureGates, w.FeatureGates),
		SchedulerConfigPath: tc.SchedulerConfigPath,
		Threshold:           Threshold{Value: w.Threshold.Value, ByTopic: maps.Clone(w.Threshold.ByTopic)},
		Params:              maps.Clone(w.Params),
	}

	// setupTestCase: the scheduler configuration.
	if s.SchedulerConfigPath != "" {
		cfg, err := loader.schedulerConfig(s.SchedulerConfigPath)
		if err != nil {
			return nil, wErr(fmt.Errorf("schedulerConfigPath: %w", err))
		}
		s.SchedulerConfig = cfg
	}

	// Workload.isValid.
	if tc.MetricsCollectorConfig != nil {
		s.MetricsCollectorConfig = cloneMCC(tc.MetricsCollectorConfig)
	} else {
		s.MetricsCollectorConfig = DefaultMetricsCollectorConfig(s.QueueingHintsEnabled())
	}
	if w.Threshold.Value < 0 {
		return nil, wErr(fmt.Errorf("threshold must not be negative, got %g", w.Threshold.Value))
	}
	for _, topic := range sortedKeys(w.Threshold.ByTopic) {
		if v := w.Threshold.ByTopic[topic]; v < 0 {
			return nil, wErr(fmt.Errorf("threshold for topic %q must not be negative, got %g", topic, v))
		}
	}
	switch {
	case w.ThresholdMetricSelector != nil:
		s.ThresholdMetricSelector = cloneSelector(*w.ThresholdMetricSelector)
	case tc.DefaultThresholdMetricSelector != nil:
		s.ThresholdMetricSelector = cloneSelector(*tc.DefaultThresholdMetricSelector)
	default:
		s.ThresholdMetricSelector = DefaultThresholdMetricSelector()
	}
	if err := s.ThresholdMetricSelector.validate(s.MetricsCollectorConfig); err != nil {
		return nil, wErr(err)
	}

	// unrollWorkloadTemplate + patchParams, op by op.
	b := &binder{params: w.Params, used: map[string]bool{}}
	collecting := false
	for j, raw := range tc.ops {
		opErr := func(err error) error {
			return &Error{Path: f.Path, TestCase: tc.Name, TestCaseIndex: tc.index, Workload: w.Name, WorkloadIndex: w.index,
				Op: j, Opcode: tc.Opcodes[j], Err: err}
		}
		pos := OpPos{Index: len(s.Ops), TemplateIndex: j}
		var ops []Op
		var err error
		switch r := raw.(type) {
		case *createPodSetsOp:
			ops, err = f.bindCreatePodSets(loader, b, tc, r, pos)
		default:
			var op Op
			op, err = f.bindOp(loader, b, tc, raw, pos)
			ops = []Op{op}
		}
		if err != nil {
			return nil, opErr(err)
		}
		for _, op := range ops {
			switch op := op.(type) {
			case *CreatePods:
				if op.CollectMetrics && collecting {
					return nil, opErr(errors.New("collectMetrics while a startCollectingMetrics window is open: metrics collection would overlap"))
				}
			case *StartCollectingMetrics:
				if collecting {
					return nil, opErr(errors.New("startCollectingMetrics while another window is open: metrics collection would overlap"))
				}
				collecting = true
			case *StopCollectingMetrics:
				if !collecting {
					return nil, opErr(errors.New("stopCollectingMetrics without a startCollectingMetrics before it"))
				}
				collecting = false
			}
		}
		s.Ops = append(s.Ops, ops...)
	}

	var unused []string
	for _, name := range sortedKeys(w.Params) {
		if !b.used[name] && !o.externalParams[name] {
			unused = append(unused, name)
		}
	}
	switch len(unused) {
	case 0:
	case 1:
		return nil, wErr(fmt.Errorf("param %q is defined but no op uses it (check for a typo; if upstream reads it in Go test code, the workload needs that code too)", unused[0]))
	default:
		return nil, wErr(fmt.Errorf("params %s are defined but no op uses them (check for typos; if upstream reads them in Go test code, the workload needs that code too)", quoteList(unused)))
	}
	return s, nil
}

func (f *File) bindCreatePodSets(loader *fileLoader, b *binder, tc *TestCase, r *createPodSetsOp, pos OpPos) ([]Op, error) {
	count := r.Count
	if r.CountParam != "" {
		var err error
		if count, err = b.int("countParam", r.CountParam); err != nil {
			return nil, err
		}
	}
	// Upstream validates with parameterization still allowed here, so a
	// negative count from a param makes no sets.
	c := *r
	c.Count = count
	if err := c.isValid(true); err != nil {
		return nil, err
	}
	if count > maxPodSets {
		return nil, fmt.Errorf("count %d is more than %d pod sets", count, maxPodSets)
	}
	var ops []Op
	for i := 0; i < count; i++ {
		ns := fmt.Sprintf("%s-%d", r.NamespacePrefix, i)
		op, err := f.bindCreatePods(loader, b, tc, &r.CreatePodsOp, &ns, OpPos{Index: pos.Index + i, TemplateIndex: pos.TemplateIndex})
		if err != nil {
			return nil, fmt.Errorf("pod set %d (namespace %q): %w", i, ns, err)
		}
		ops = append(ops, op)
	}
	return ops, nil
}

func (f *File) bindOp(loader *fileLoader, b *binder, tc *TestCase, raw rawOp, pos OpPos) (Op, error) {
	switch r := raw.(type) {
	case *createNodesOp:
		return f.bindCreateNodes(loader, b, r, pos)

	case *createNamespacesOp:
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
			p, err := f.resolvePtr("namespaceTemplatePath", r.NamespaceTemplatePath)
			if err != nil {
				return nil, err
			}
			op.NamespaceTemplatePath = p
			if err := loader.strict(p, op.Namespace); err != nil {
				return nil, fmt.Errorf("namespaceTemplatePath: %w", err)
			}
		}
		return op, nil

	case *createPodsOp:
		return f.bindCreatePods(loader, b, tc, r, nil, pos)

	case *deletePodsOp:
		return &DeletePods{
			OpPos:                pos,
			Namespace:            r.Namespace,
			LabelSelector:        maps.Clone(r.LabelSelector),
			SkipWaitToCompletion: r.SkipWaitToCompletion,
			DeletePodsPerSecond:  r.DeletePodsPerSecond,
		}, nil

	case *churnOp:
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
			p = f.resolve(p)
			op.TemplatePaths = append(op.TemplatePaths, p)
			obj, err := loader.unstructured(p)
			if err != nil {
				return nil, fmt.Errorf("templatePaths[%d]: %w", k, err)
			}
			op.Objects = append(op.Objects, obj)
		}
		return op, nil

	case *barrierOp:
		op := &Barrier{OpPos: pos, Namespaces: slices.Clone(r.Namespaces), LabelSelector: maps.Clone(r.LabelSelector), StageRequirement: r.StageRequirement}
		if op.StageRequirement == "" {
			op.StageRequirement = Scheduled
		}
		return op, nil

	case *sleepOp:
		op := &Sleep{OpPos: pos, Duration: r.Duration.Duration}
		if r.DurationParam != "" {
			var err error
			if op.Duration, err = b.duration("durationParam", r.DurationParam); err != nil {
				return nil, err
			}
		}
		return op, nil

	case *startCollectingMetricsOp:
		return &StartCollectingMetrics{OpPos: pos, Name: r.Name, Namespaces: slices.Clone(r.Namespaces), LabelSelector: maps.Clone(r.LabelSelector)}, nil

	case *stopCollectingMetricsOp:
		return &StopCollectingMetrics{OpPos: pos}, nil

	case *createAnyOp:
		op := &CreateAny{OpPos: pos, Namespace: r.Namespace, Count: 1}
		if r.Count != nil {
			op.Count = *r.Count
		}
		if r.CountParam != "" {
			var err error
			if op.Count, err = b.int("countParam", r.CountParam); err != nil {
				return nil, err
			}
		}
		op.TemplatePath = f.resolve(r.TemplatePath)
		t, err := loader.objectTemplate(op.TemplatePath, op.Count)
		if err != nil {
			return nil, fmt.Errorf("templatePath: %w", err)
		}
		op.template = t
		return op, nil

	case *updateAnyOp:
		op := &UpdateAny{OpPos: pos, Namespace: r.Namespace, Count: 1, UpdatePerSecond: r.UpdatePerSecond, Subresources: slices.Clone(r.Subresources)}
		if r.Count != nil {
			op.Count = *r.Count
		}
		if r.CountParam != "" {
			var err error
			if op.Count, err = b.int("countParam", r.CountParam); err != nil {
				return nil, err
			}
		}
		op.TemplatePath = f.resolve(r.TemplatePath)
		t, err := loader.objectTemplate(op.TemplatePath, op.Count)
		if err != nil {
			return nil, fmt.Errorf("templatePath: %w", err)
		}
		op.template = t
		return op, nil
	}
	return nil, fmt.Errorf("op type %T cannot be bound", raw)
}

func (f *File) bindCreateNodes(loader *fileLoader, b *binder, r *createNodesOp, pos OpPos) (Op, error) {
	op := &CreateNodes{OpPos: pos, Count: r.Count, prefix: fmt.Sprintf("node-%d-", pos.Index)}
	if r.CountParam != "" {
		var err error
		if op.Count, err = b.int("countParam", r.CountParam); err != nil {
			return nil, err
		}
	}
	if op.Count < 0 {
		return nil, countError(op.Count, "")
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
		p, err := f.resolvePtr("nodeTemplatePath", r.NodeTemplatePath)
		if err != nil {
			return nil, err
		}
		op.NodeTemplatePath = p
		t, err := loader.typedTemplate(p, op.Count, func() runtime.Object { return &v1.Node{} })
		if err != nil {
			return nil, fmt.Errorf("nodeTemplatePath: %w", err)
		}
		op.template = t
	}
	return op, nil
}

// bindCreatePods binds a createPods op, or one of createPodSets' copies, in
// which case namespace is the set's namespace.
func (f *File) bindCreatePods(loader *fileLoader, b *binder, tc *TestCase, raw *createPodsOp, namespace *string, pos OpPos) (*CreatePods, error) {
	r := *raw
	if r.CountParam != "" {
		var err error
		if r.Count, err = b.int("countParam", r.CountParam); err != nil {
			return nil, err
		}
	}
	if r.DurationParam != "" {
		var err error
		if r.Duration.Duration, err = b.duration("durationParam", r.DurationParam); err != nil {
			return nil, err
		}
	}
	if r.SteadyStateParam != "" {
		var err error
		if r.SteadyState, err = b.bool("steadyStateParam", r.SteadyStateParam); err != nil {
			return nil, err
		}
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
	}
	tmplPath, key := r.PodTemplatePath, "podTemplatePath"
	if tmplPath == nil {
		tmplPath, key = tc.defaultPodTemplatePath, "defaultPodTemplatePath"
	}
	if tmplPath != nil {
		p, err := f.resolvePtr(key, tmplPath)
		if err != nil {
			return nil, err
		}
		op.PodTemplatePath = p
		t, err := loader.typedTemplate(p, op.Count, func() runtime.Object { return &v1.Pod{} })
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		op.template = t
	}
	if r.PersistentVolumeClaimTemplatePath != nil {
		if r.PersistentVolumeTemplatePath == nil {
			return nil, errors.New("persistentVolumeClaimTemplatePath needs a persistentVolumeTemplatePath too")
		}
		pvc, err := f.resolvePtr("persistentVolumeClaimTemplatePath", r.PersistentVolumeClaimTemplatePath)
		if err != nil {
			return nil, err
		}
		pv, err := f.resolvePtr("persistentVolumeTemplatePath", r.PersistentVolumeTemplatePath)
		if err != nil {
			return nil, err
		}
		op.PersistentVolumeClaimTemplatePath, op.PersistentVolumeTemplatePath = pvc, pv
		op.PersistentVolumeClaim, op.PersistentVolume = &v1.PersistentVolumeClaim{}, &v1.PersistentVolume{}
		if err := loader.strict(pvc, op.PersistentVolumeClaim); err != nil {
			return nil, fmt.Errorf("persistentVolumeClaimTemplatePath: %w", err)
		}
		if err := loader.strict(pv, op.PersistentVolume); err != nil {
			return nil, fmt.Errorf("persistentVolumeTemplatePath: %w", err)
		}
	}
	return op, nil
}

// defaultNamespace is upstream's rule for ops with an optional namespace.
func defaultNamespace(ns *string, pos OpPos) (string, error) {
	if ns == nil {
		return fmt.Sprintf("namespace-%d", pos.Index), nil
	}
	if *ns == "" {
		return "", errors.New(`namespace is empty (leave it out for the default "namespace-<op index>")`)
	}
	return *ns, nil
}

func (f *File) resolvePtr(key string, p *string) (string, error) {
	if *p == "" {
		return "", fmt.Errorf("%s is empty", key)
	}
	return f.resolve(*p), nil
}

// binder is upstream's params.get / getParam: it looks a reference up (the
// reference minus its first character, which should be "$"), records the
// param as used, and requires the JSON type without conversion.
type binder struct {
	params map[string]any
	used   map[string]bool
}

func (b *binder) lookup(field, ref string) (any, string, error) {
	key := ref[1:]
	b.used[key] = true
	v, ok := b.params[key]
	if !ok {
		if !strings.HasPrefix(ref, "$") {
			return nil, key, fmt.Errorf("%s %q is not defined in params (a reference is \"$\" and a param's name; this one looked up %q)", field, ref, key)
		}
		return nil, key, fmt.Errorf("%s %q is not defined in params", field, ref)
	}
	return v, key, nil
}

func (b *binder) int(field, ref string) (int, error) {
	v, key, err := b.lookup(field, ref)
	if err != nil {
		return 0, err
	}
	f, ok := v.(float64)
	if !ok {
		return 0, wrongType(field, ref, key, v, "a number")
	}
	// JSON numbers are float64; upstream truncates them.
	return countInRange(field, ref, key, f)
}

func (b *binder) duration(field, ref string) (time.Duration, error) {
	v, key, err := b.lookup(field, ref)
	if err != nil {
		return 0, err
	}
	s, ok := v.(string)
	if !ok {
		return 0, wrongType(field, ref, key, v, `a duration string such as "30s"`)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s %q: param %q: %w", field, ref, key, err)
	}
	return durationInRange(field, ref, key, d)
}

func (b *binder) bool(field, ref string) (bool, error) {
	v, key, err := b.lookup(field, ref)
	if err != nil {
		return false, err
	}
	x, ok := v.(bool)
	if !ok {
		return false, wrongType(field, ref, key, v, "a boolean")
	}
	return x, nil
}

func wrongType(field, ref, key string, v any, want string) error {
	var got string
	switch x := v.(type) {
	case nil:
		got = "null"
	case float64:
		got = fmt.Sprintf("the number %g", x)
	case string:
		got = fmt.Sprintf("the string %q", x)
	case bool:
		got = fmt.Sprintf("the boolean %t", x)
	case map[string]any:
		got = "an object"
	case []any:
		got = "a list"
	default:
		got = fmt.Sprintf("%T", v)
	}
	return fmt.Errorf("%s %q: param %q is %s, want %s", field, ref, key, got, want)
}

func cloneMCC(m *MetricsCollectorConfig) *MetricsCollectorConfig {
	out := &MetricsCollectorConfig{Metrics: make(map[string][]*LabelValues, len(m.Metrics))}
	for name, lvs := range m.Metrics {
		if lvs == nil {
			out.Metrics[name] = nil
			continue
		}
		c := make([]*LabelValues, len(lvs))
		for i, lv := range lvs {
			c[i] = &LabelValues{Label: lv.Label, Values: slices.Clone(lv.Values)}
		}
		out.Metrics[name] = c
	}
	return out
}

func cloneSelector(s ThresholdMetricSelector) ThresholdMetricSelector {
	s.Labels = maps.Clone(s.Labels)
	return s
}

// fileLoader reads the files a Select names, each once.
type fileLoader struct {
	f         *File
	templates map[string]*Template
	warmed    map[string]bool
}

func (l *fileLoader) read(path string) ([]byte, error) {
	return l.f.readFile(path)
}

func (l *fileLoader) template(path string) (*Template, error) {
	if t, ok := l.templates[path]; ok {
		return t, nil
	}
	b, err := l.read(path)
	if err != nil {
		return nil, err
	}
	t, err := ParseTemplate(path, b)
	if err != nil {
		return nil, err
	}
	l.templates[path] = t
	return t, nil
}

// typedTemplate loads a pod or node template and, when objects will be
// made from it, renders object 0 of count (once per count).
func (l *fileLoader) typedTemplate(path string, count int, newObj func() runtime.Object) (*Template, error) {
	key := fmt.Sprintf("%s\x00%T", path, newObj())
	t, err := l.variant(path, key)
	if err != nil {
		return nil, err
	}
	if count > 0 && l.firstUse(key, count) {
		if err := t.warm(0, count, newObj); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// objectTemplate is typedTemplate for createAny and updateAny.
func (l *fileLoader) objectTemplate(path string, count int) (*Template, error) {
	key := path + "\x00unstructured"
	t, err := l.variant(path, key)
	if err != nil {
		return nil, err
	}
	if count > 0 && l.firstUse(key, count) {
		if err := t.warmUnstructured(0, count); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// variant returns the Template for path and one object type: each has its
// own cache of the object a static template renders.
func (l *fileLoader) variant(path, key string) (*Template, error) {
	if t, ok := l.templates[key]; ok {
		return t, nil
	}
	base, err := l.template(path)
	if err != nil {
		return nil, err
	}
	t := &Template{Path: base.Path, tmpl: base.tmpl, static: base.static}
	l.templates[key] = t
	return t, nil
}

func (l *fileLoader) firstUse(key string, count int) bool {
	k := fmt.Sprintf("%s\x00%d", key, count)
	if l.warmed[k] {
		return false
	}
	l.warmed[k] = true
	return true
}

// strict reads a plain YAML file into obj with unknown fields rejected.
func (l *fileLoader) strict(path string, obj any) error {
	b, err := l.read(path)
	if err != nil {
		return err
	}
	if err := unmarshalStrict(b, obj); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func (l *fileLoader) unstructured(path string) (*unstructured.Unstructured, error) {
	b, err := l.read(path)
	if err != nil {
		return nil, err
	}
	obj, err := decodeUnstructuredFile(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return obj, nil
}

// DefaultSchedulerConfig is a KubeSchedulerConfiguration with every field
// at kube-scheduler's default: what a workload without schedulerConfigPath
// runs with.
const DefaultSchedulerConfig = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

// schedulerConfig reads the file and checks it is a
// KubeSchedulerConfiguration.
func (l *fileLoader) schedulerConfig(path string) ([]byte, error) {
	b, err := l.read(path)
	if err != nil {
		return nil, err
	}
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(b, &tm); err != nil {
		return nil, fmt.Errorf("%s: %w", path, cleanDecodeError(err))
	}
	if tm.Kind != "KubeSchedulerConfiguration" {
		return nil, fmt.Errorf("%s: kind is %q, want KubeSchedulerConfiguration", path, tm.Kind)
	}
	return b, nil
}
