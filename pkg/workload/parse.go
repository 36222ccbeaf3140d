package workload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
)

// File is a parsed and validated scheduler_perf config file.
type File struct {
	// Path is the file as given to Load or Parse.
	Path string
	// Dir is the directory relative paths in the file resolve against: the
	// file's own directory.
	Dir       string
	TestCases []*TestCase
	// Root is the tree (absolute) the files the config names must lie in
	// (DefaultRoot, or LoadWithin's); empty for a file of an fs.FS, which
	// holds them itself.
	Root string

	readFile func(string) ([]byte, error)
	// inFS says paths are an fs.FS's (slash-separated, never absolute).
	inFS bool
}

// TestCase is one element of the file's top-level list.
type TestCase struct {
	Name   string
	Labels []string
	// FeatureGates apply to every workload; a workload's own override them.
	FeatureGates map[string]bool
	// SchedulerConfigPath is the resolved schedulerConfigPath; empty for
	// the default configuration.
	SchedulerConfigPath string
	// DefaultPodTemplatePath is the resolved defaultPodTemplatePath, or empty.
	DefaultPodTemplatePath string
	// MetricsCollectorConfig is nil when the file has none (Select then
	// uses DefaultMetricsCollectorConfig).
	MetricsCollectorConfig         *MetricsCollectorConfig
	DefaultThresholdMetricSelector *ThresholdMetricSelector
	Workloads                      []*Workload
	// Opcodes lists the workloadTemplate's ops, in order, as written.
	Opcodes []Opcode

	index                  int
	ops                    []rawOp
	defaultPodTemplatePath *string
}

// Workload is one element of a test case's workloads, as written.
type Workload struct {
	Name   string
	Labels []string
	// FeatureGates override the test case's, gate by gate.
	FeatureGates map[string]bool
	// Params are the values for the template's $name references: float64
	// (every number), string or bool, as JSON decodes them.
	Params    map[string]any
	Threshold Threshold
	// ThresholdMetricSelector is nil when the workload has none.
	ThresholdMetricSelector *ThresholdMetricSelector

	index int
}

// Load reads and validates a scheduler_perf config file. The files it
// names must lie in DefaultRoot(path).
func Load(path string) (*File, error) {
	return LoadWithin(path, "")
}

// LoadWithin is Load with the files the config names confined to the tree
// root instead ("" is DefaultRoot(path)).
func LoadWithin(path, root string) (*File, error) {
	data, err := readCapped(path)
	if err != nil {
		return nil, err
	}
	return parseWithin(path, root, data)
}

// MaxFileBytes caps a workload file and each file it names (templates,
// the scheduler configuration): upstream's largest are tens of KiB, and a
// device or a wrong file must end in an error, not in memory exhausted.
const MaxFileBytes = 16 << 20

// readCapped reads the file at path, refusing more than MaxFileBytes and
// anything but a regular file (a device, a FIFO).
func readCapped(path string) ([]byte, error) {
	data, err := bound.ReadFile(context.Background(), path, MaxFileBytes)
	return capErrors(path, data, err)
}

// capErrors says what the capped reader's refusals mean for a workload file.
func capErrors(path string, data []byte, err error) ([]byte, error) {
	var notRegular *bound.NotRegularError
	var tooLarge *bound.TooLargeError
	switch {
	case errors.As(err, &notRegular) && notRegular.Mode.IsDir():
		return nil, fmt.Errorf("%s is a directory: give a scheduler_perf workload file", path)
	case errors.As(err, &notRegular):
		return nil, fmt.Errorf("%w: give a scheduler_perf workload file", err)
	case errors.As(err, &tooLarge):
		return nil, fmt.Errorf("%s: more than %d MiB: not a scheduler_perf workload file (the wrong file?)", path, MaxFileBytes>>20)
	}
	return data, err
}

// LoadFS is Load for a file of fsys (a workload embedded in the binary):
// name and the paths in the file are fsys's, and Select reads templates
// from fsys.
func LoadFS(fsys fs.FS, name string) (*File, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	return parseFile(&File{Path: name, Dir: path.Dir(name), inFS: true,
		readFile: func(p string) ([]byte, error) { return fs.ReadFile(fsys, p) }}, data)
}

// Parse is Load for content already read; path names the file in errors and
// anchors the relative paths in it. Parse itself reads no other file:
// templates and the scheduler configuration are read by Select.
//
// Parse applies what upstream checks when it reads a file (getTestCases and
// validateTestCases, and each op's isValid): the YAML is strict (duplicate
// keys, unknown fields and wrong types are errors), there is at least one
// test case, test case names are unique, each test case has at least one
// workload (names unique) and one op, and at least one op collects metrics.
// An opcode upstream removed (createResourceDriver) is an error that names
// its replacement. Errors are *Error.
func Parse(path string, data []byte) (*File, error) {
	return parseWithin(path, "", data)
}

func parseWithin(path, root string, data []byte) (*File, error) {
	if root == "" {
		root = DefaultRoot(path)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	f := &File{Path: path, Dir: filepath.Dir(path), Root: abs}
	f.readFile = f.readWithin
	return parseFile(f, data)
}

func parseFile(f *File, data []byte) (*File, error) {
	path := f.Path

	var tcs []*testCaseJSON
	if err := yaml.UnmarshalStrict(data, &tcs); err != nil {
		if located := f.locate(data); located != nil {
			return nil, located
		}
		return nil, f.fileError(err)
	}
	if len(tcs) == 0 {
		return nil, &Error{Path: path, TestCaseIndex: -1, WorkloadIndex: -1, Op: -1, Err: errors.New("no test cases defined")}
	}
	for i, tj := range tcs {
		tc, err := f.newTestCase(i, tj)
		if err != nil {
			return nil, err
		}
		f.TestCases = append(f.TestCases, tc)
	}

	// validateTestCases.
	names := map[string]bool{}
	for _, tc := range f.TestCases {
		tcErr := func(err error) error {
			return &Error{Path: path, TestCase: tc.Name, TestCaseIndex: tc.index, WorkloadIndex: -1, Op: -1, Err: err}
		}
		if names[tc.Name] {
			return nil, tcErr(errors.New("test case name is not unique"))
		}
		names[tc.Name] = true
		if len(tc.Workloads) == 0 {
			return nil, tcErr(errors.New("no workloads defined"))
		}
		wnames := map[string]bool{}
		for _, w := range tc.Workloads {
			if wnames[w.Name] {
				return nil, &Error{Path: path, TestCase: tc.Name, TestCaseIndex: tc.index, Workload: w.Name, WorkloadIndex: w.index, Op: -1,
					Err: errors.New("workload name is not unique in its test case")}
			}
			wnames[w.Name] = true
		}
		if len(tc.ops) == 0 {
			return nil, tcErr(errors.New("no ops defined in workloadTemplate"))
		}
		if !slices.ContainsFunc(tc.ops, rawOp.collectsMetrics) {
			return nil, tcErr(errors.New("no op in the workloadTemplate collects metrics " +
				"(set collectMetrics: true on a createPods, or use startCollectingMetrics and stopCollectingMetrics)"))
		}
	}
	return f, nil
}

// fileError is a decoding error that locate could not pin on a test case.
func (f *File) fileError(err error) error {
	var te *json.UnmarshalTypeError
	topLevel := errors.As(err, &te) && te.Field == ""
	err = cleanDecodeError(err)
	if topLevel {
		err = fmt.Errorf("%w (a config file is a list of test cases)", err)
	}
	return &Error{Path: f.Path, TestCaseIndex: -1, WorkloadIndex: -1, Op: -1, Err: err}
}

// locate decodes data in layers (file, test case, workload) to find which
// one the whole-file decoding failed on. It returns nil if no layer fails.
func (f *File) locate(data []byte) error {
	var raws []json.RawMessage
	if err := yaml.UnmarshalStrict(data, &raws); err != nil {
		return f.fileError(err)
	}
	for i, raw := range raws {
		if isNull(raw) {
			continue
		}
		name := peekName(raw)
		var tl testCaseLayers
		if err := unmarshalStrict(raw, &tl); err != nil {
			return &Error{Path: f.Path, TestCase: name, TestCaseIndex: i, WorkloadIndex: -1, Op: -1, Err: err}
		}
		for j, b := range tl.Workloads {
			if isNull(b) {
				continue
			}
			var wj workloadJSON
			if err := unmarshalStrict(b, &wj); err != nil {
				return &Error{Path: f.Path, TestCase: name, TestCaseIndex: i, Workload: peekName(b), WorkloadIndex: j, Op: -1, Err: err}
			}
		}
	}
	return nil
}

func (f *File) newTestCase(i int, tj *testCaseJSON) (*TestCase, error) {
	if tj == nil {
		return nil, &Error{Path: f.Path, TestCaseIndex: i, WorkloadIndex: -1, Op: -1, Err: errors.New("test case is null")}
	}
	name := tj.Name
	tcErr := func(err error) error {
		return &Error{Path: f.Path, TestCase: name, TestCaseIndex: i, WorkloadIndex: -1, Op: -1, Err: err}
	}
	tc := &TestCase{
		Name:                   tj.Name,
		Labels:                 tj.Labels,
		FeatureGates:           tj.FeatureGates,
		index:                  i,
		defaultPodTemplatePath: tj.DefaultPodTemplatePath,
	}
	if tj.SchedulerConfigPath != "" {
		tc.SchedulerConfigPath = f.resolve(tj.SchedulerConfigPath)
	}
	if p := tj.DefaultPodTemplatePath; p != nil && *p != "" {
		tc.DefaultPodTemplatePath = f.resolve(*p)
	}
	if m := tj.MetricsCollectorConfig; m != nil {
		mcc := &MetricsCollectorConfig{Metrics: map[string][]*LabelValues{}}
		for _, metric := range sortedKeys(m.Metrics) {
			lvs := m.Metrics[metric]
			if lvs == nil {
				mcc.Metrics[metric] = nil
				continue
			}
			out := make([]*LabelValues, 0, len(lvs))
			for k, lv := range lvs {
				if lv == nil {
					return nil, tcErr(fmt.Errorf("metricsCollectorConfig.metrics[%q][%d] is null", metric, k))
				}
				out = append(out, &LabelValues{Label: lv.Label, Values: lv.Values})
			}
			mcc.Metrics[metric] = out
		}
		tc.MetricsCollectorConfig = mcc
	}
	if s := tj.DefaultThresholdMetricSelector; s != nil {
		tc.DefaultThresholdMetricSelector = &ThresholdMetricSelector{Name: s.Name, Labels: s.Labels, DataBucket: s.DataBucket, ExpectLower: s.ExpectLower}
	}

	for j, o := range tj.WorkloadTemplate {
		code, op, err := decodeOp(o.raw)
		if err != nil {
			return nil, &Error{Path: f.Path, TestCase: name, TestCaseIndex: i, WorkloadIndex: -1, Op: j, Opcode: code, Err: err}
		}
		tc.ops = append(tc.ops, op)
		tc.Opcodes = append(tc.Opcodes, code)
	}

	for j, wj := range tj.Workloads {
		if wj == nil {
			return nil, &Error{Path: f.Path, TestCase: name, TestCaseIndex: i, WorkloadIndex: j, Op: -1, Err: errors.New("workload is null")}
		}
		w := &Workload{
			Name:         wj.Name,
			Labels:       wj.Labels,
			FeatureGates: wj.FeatureGates,
			Params:       wj.Params.values,
			Threshold:    Threshold{Value: wj.Threshold.value, ByTopic: wj.Threshold.valuesByTopic},
			index:        j,
		}
		if s := wj.ThresholdMetricSelector; s != nil {
			w.ThresholdMetricSelector = &ThresholdMetricSelector{Name: s.Name, Labels: s.Labels, DataBucket: s.DataBucket, ExpectLower: s.ExpectLower}
		}
		tc.Workloads = append(tc.Workloads, w)
	}
	return tc, nil
}

// TestCase returns the test case with that name, or nil.
func (f *File) TestCase(name string) *TestCase {
	for _, tc := range f.TestCases {
		if tc.Name == name {
			return tc
		}
	}
	return nil
}

// Workload returns the workload with that name, or nil.
func (tc *TestCase) Workload(name string) *Workload {
	for _, w := range tc.Workloads {
		if w.Name == name {
			return w
		}
	}
	return nil
}
