package workload

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
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
	// NodeDeclaredFeatures, when not nil, are the features every node
	// declares in its status after each createNodes op: what upstream's
	// nodedeclaredfeatures harness (updateNodesWithDeclaredFeatures) does
	// for a workload with param NodeDeclaredFeaturesParam (see
	// nodeDeclaredFeatures).
	NodeDeclaredFeatures []string
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

// Feature gates upstream's setupTestCase treats specially.
const (
	GateNodeDeclaredFeatures = "NodeDeclaredFeatures"
)

// EffectiveFeatureGates returns the gates upstream's setupTestCase (v1.37.2)
// actually sets, and the emulation version it sets first ("" for none):
// when NodeDeclaredFeatures is explicitly false, emulation version 1.36
// (the gate is locked on from 1.37, so that is the only way to turn it off).
// v1.36's harness also forced OpportunisticBatching off and emulated 1.33
// for SchedulerQueueingHints: false; v1.37's does neither, and that gate no
// longer exists.
func (s *Selected) EffectiveFeatureGates() (gates map[string]bool, emulationVersion string) {
	gates = maps.Clone(s.FeatureGates)
	if gates == nil {
		gates = map[string]bool{}
	}
	if enabled, set := gates[GateNodeDeclaredFeatures]; set && !enabled {
		return gates, "1.36"
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
		msg = fmt.Sprintf("test case %q has no workload %q (it has %s)", testCase, workload, quoteList(workloadNames(f, testCase)))
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

func workloadNames(f *File, testCase string) []string {
	var names []string
	for _, tc := range f.TestCases {
		if tc.Name == testCase {
			for _, w := range tc.Workloads {
				names = append(names, w.Name)
			}
		}
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
		s.MetricsCollectorConfig = DefaultMetricsCollectorConfig()
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
	b := &binder{f: f, tc: tc, load: loader, params: w.Params, used: map[string]bool{}}
	collecting := false
	for j, raw := range tc.ops {
		opErr := func(err error) error {
			return &Error{Path: f.Path, TestCase: tc.Name, TestCaseIndex: tc.index, Workload: w.Name, WorkloadIndex: w.index,
				Op: j, Opcode: tc.Opcodes[j], Err: err}
		}
		ops, err := raw.bind(b, OpPos{Index: len(s.Ops), TemplateIndex: j})
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

	if feats, ok, err := nodeDeclaredFeatures(w); err != nil {
		return nil, wErr(err)
	} else if ok {
		s.NodeDeclaredFeatures = feats
		b.used[NodeDeclaredFeaturesParam] = true
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

// mergeGates is upstream's featureGatesMerge.
func mergeGates(src, overrides map[string]bool) map[string]bool {
	out := make(map[string]bool, len(src)+len(overrides))
	maps.Copy(out, src)
	maps.Copy(out, overrides)
	return out
}
