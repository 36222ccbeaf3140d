package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Decoding mirrors upstream's getTestCases: sigs.k8s.io/yaml.UnmarshalStrict
// (YAML → JSON guided by the target type, duplicate keys rejected, then
// encoding/json with DisallowUnknownFields) into structs that carry no json
// tags and the same exported field names and types as upstream's, so that
// key matching is the same case-insensitive encoding/json match and a number
// where a string belongs (name: 5000) is coerced where upstream coerces it.
//
// The whole file is decoded in one call, as upstream does, except that ops
// are kept as raw JSON (upstream's op has its own UnmarshalJSON too, so the
// YAML coercion stops at the same place) and decoded one by one afterwards,
// so that an op's error can say which op. When the one call fails, locate
// decodes the file again in layers to say which test case or workload.

// testCaseJSON is upstream's testCase.
type testCaseJSON struct {
	Name                           string
	FeatureGates                   map[string]bool
	MetricsCollectorConfig         *metricsCollectorConfigJSON
	WorkloadTemplate               []opJSON
	Workloads                      []*workloadJSON
	SchedulerConfigPath            string
	DefaultPodTemplatePath         *string
	Labels                         []string
	DefaultThresholdMetricSelector *thresholdMetricSelectorJSON
}

// testCaseLayers is testCaseJSON with the workloads kept raw, for locate.
type testCaseLayers struct {
	Name                           string
	FeatureGates                   map[string]bool
	MetricsCollectorConfig         *metricsCollectorConfigJSON
	WorkloadTemplate               []opJSON
	Workloads                      []json.RawMessage
	SchedulerConfigPath            string
	DefaultPodTemplatePath         *string
	Labels                         []string
	DefaultThresholdMetricSelector *thresholdMetricSelectorJSON
}

// opJSON keeps an op's JSON for decodeOp.
type opJSON struct {
	raw []byte
}

func (o *opJSON) UnmarshalJSON(b []byte) error {
	o.raw = append([]byte(nil), b...)
	return nil
}

// workloadJSON is upstream's Workload.
type workloadJSON struct {
	Name                    string
	Params                  paramsJSON
	Labels                  []string
	Threshold               thresholdsJSON
	ThresholdMetricSelector *thresholdMetricSelectorJSON
	FeatureGates            map[string]bool
}

type metricsCollectorConfigJSON struct {
	Metrics map[string][]*labelValuesJSON
}

type labelValuesJSON struct {
	Label  string
	Values []string
}

type thresholdMetricSelectorJSON struct {
	Name        string
	Labels      map[string]string
	DataBucket  string
	ExpectLower bool
}

// paramsJSON is upstream's params: a plain map, numbers as float64.
type paramsJSON struct {
	values map[string]any
}

func (p *paramsJSON) UnmarshalJSON(b []byte) error {
	aux := map[string]any{}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	p.values = aux
	return nil
}

// thresholdsJSON is upstream's thresholds: a number or a map topic → number.
type thresholdsJSON struct {
	value         float64
	valuesByTopic map[string]float64
}

func (t *thresholdsJSON) UnmarshalJSON(text []byte) error {
	if errFloat64 := json.Unmarshal(text, &t.value); errFloat64 != nil {
		if errMap := json.Unmarshal(text, &t.valuesByTopic); errMap != nil {
			got := "something else"
			if te, ok := errMap.(*json.UnmarshalTypeError); ok {
				got = te.Value
			}
			return fmt.Errorf("threshold: got %s, want a number or a map from topic to number", got)
		}
	}
	return nil
}

// The op structs, as upstream's (operations.go, update.go).

type createNodesOp struct {
	Opcode                   Opcode
	Count                    int
	CountParam               string
	NodeTemplatePath         *string
	NodeAllocatableStrategy  *NodeAllocatableStrategy
	LabelNodePrepareStrategy *LabelNodePrepareStrategy
	UniqueNodeLabelStrategy  *UniqueNodeLabelStrategy
}

type createNamespacesOp struct {
	Opcode                Opcode
	Prefix                string
	Count                 int
	CountParam            string
	NamespaceTemplatePath *string
}

type createPodsOp struct {
	Opcode                            Opcode
	Count                             int
	CountParam                        string
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
}

type createPodSetsOp struct {
	Opcode          Opcode
	Count           int
	CountParam      string
	NamespacePrefix string
	CreatePodsOp    createPodsOp
}

type deletePodsOp struct {
	Opcode               Opcode
	Namespace            string
	LabelSelector        map[string]string
	SkipWaitToCompletion bool
	DeletePodsPerSecond  int
}

type churnOp struct {
	Opcode               Opcode
	Mode                 string
	Number               int
	IntervalMilliseconds int64
	Namespace            *string
	TemplatePaths        []string
}

type barrierOp struct {
	Opcode           Opcode
	Namespaces       []string
	LabelSelector    map[string]string
	StageRequirement SchedulingStage
}

type sleepOp struct {
	Opcode        Opcode
	Duration      metav1.Duration
	DurationParam string
}

type startCollectingMetricsOp struct {
	Opcode        Opcode
	Name          string
	Namespaces    []string
	LabelSelector map[string]string
}

type stopCollectingMetricsOp struct {
	Opcode Opcode
}

type createAnyOp struct {
	Opcode       Opcode
	Namespace    string
	TemplatePath string
	Count        *int
	CountParam   string
}

type updateAnyOp struct {
	Opcode          Opcode
	Namespace       string
	TemplatePath    string
	Count           *int
	CountParam      string
	UpdatePerSecond int
	Subresources    []string
}

// rawOp is an op as written in the workloadTemplate, before params are bound.
type rawOp interface {
	// isValid is upstream's isValid: with allowParameterization a …Param
	// field stands in for its value.
	isValid(allowParameterization bool) error
	collectsMetrics() bool
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

// unsupportedOps are opcodes upstream knows that this project cannot run.
var unsupportedOps = map[Opcode]string{
	"allocResourceClaims":  "dynamic resource allocation ops need upstream's in-process DRA driver and allocator, which only its own test harness has",
	"createResourceClaims": "dynamic resource allocation ops need upstream's in-process DRA driver and allocator, which only its own test harness has",
	"createResourceDriver": "dynamic resource allocation ops need upstream's in-process DRA driver and allocator, which only its own test harness has",
}

func newRawOp(code Opcode) rawOp {
	switch code {
	case OpcodeCreateNodes:
		return &createNodesOp{}
	case OpcodeCreateNamespaces:
		return &createNamespacesOp{}
	case OpcodeCreatePods:
		return &createPodsOp{}
	case OpcodeCreatePodSets:
		return &createPodSetsOp{}
	case OpcodeDeletePods:
		return &deletePodsOp{}
	case OpcodeChurn:
		return &churnOp{}
	case OpcodeBarrier:
		return &barrierOp{}
	case OpcodeSleep:
		return &sleepOp{}
	case OpcodeStartCollectingMetrics:
		return &startCollectingMetricsOp{}
	case OpcodeStopCollectingMetrics:
		return &stopCollectingMetricsOp{}
	case OpcodeCreateAny:
		return &createAnyOp{}
	case OpcodeUpdateAny:
		return &updateAnyOp{}
	}
	return nil
}

// decodeOp is upstream's op.UnmarshalJSON: the opcode first (leniently), then
// the whole object into that op's struct with unknown fields disallowed, then
// isValid(true). It returns the opcode whenever it could read one.
func decodeOp(b []byte) (Opcode, rawOp, error) {
	var possibleOp struct {
		Opcode Opcode
	}
	if err := json.Unmarshal(b, &possibleOp); err != nil {
		return "", nil, fmt.Errorf("reading the opcode: %w", cleanDecodeError(err))
	}
	code := possibleOp.Opcode
	op := newRawOp(code)
	if op == nil {
		if reason, ok := unsupportedOps[code]; ok {
			return code, nil, &UnsupportedOpError{Opcode: code, Reason: reason}
		}
		if code == "" {
			return "", nil, fmt.Errorf("no opcode (want one of %s)", strings.Join(opcodeNames(), ", "))
		}
		return "", nil, fmt.Errorf("unknown opcode %q (want one of %s)", code, strings.Join(opcodeNames(), ", "))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(op); err != nil {
		return code, nil, cleanDecodeError(err)
	}
	if err := op.isValid(true); err != nil {
		return code, nil, err
	}
	return code, op, nil
}

func opcodeNames() []string {
	names := make([]string, 0, len(allOpcodes))
	for _, c := range allOpcodes {
		names = append(names, string(c))
	}
	return names
}

// isValid, as upstream's, per op.

func isValidCount(allowParameterization bool, count int, countParam string) bool {
	if !allowParameterization || countParam == "" {
		return count >= 0 && count <= MaxCount
	}
	return strings.HasPrefix(countParam, "$")
}

func countError(count int, countParam string) error {
	if countParam != "" && !strings.HasPrefix(countParam, "$") {
		return errorf("countParam %q must start with \"$\" (it names a param: \"$name\")", countParam)
	}
	return errorf("count %d is out of range: want a count from 0 to %d", count, MaxCount)
}

func (op *createNodesOp) isValid(allowParameterization bool) error {
	if !isValidCount(allowParameterization, op.Count, op.CountParam) {
		return countError(op.Count, op.CountParam)
	}
	return nil
}

func (op *createNamespacesOp) isValid(allowParameterization bool) error {
	if !isValidCount(allowParameterization, op.Count, op.CountParam) {
		return countError(op.Count, op.CountParam)
	}
	return nil
}

func (op *createPodsOp) isValid(allowParameterization bool) error {
	if !isValidCount(allowParameterization, op.Count, op.CountParam) {
		return countError(op.Count, op.CountParam)
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

func (op *createPodSetsOp) isValid(allowParameterization bool) error {
	if !isValidCount(allowParameterization, op.Count, op.CountParam) {
		return countError(op.Count, op.CountParam)
	}
	if err := op.CreatePodsOp.isValid(allowParameterization); err != nil {
		return fmt.Errorf("createPodsOp: %w", err)
	}
	return nil
}

func (op *deletePodsOp) isValid(bool) error {
	if op.DeletePodsPerSecond < 0 {
		return errorf("deletePodsPerSecond must not be negative, got %d", op.DeletePodsPerSecond)
	}
	return nil
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

func (op *barrierOp) isValid(bool) error {
	if op.StageRequirement != "" && op.StageRequirement != Scheduled && op.StageRequirement != Attempted {
		return errorf("stageRequirement %q is not one of %s, %s", op.StageRequirement, Scheduled, Attempted)
	}
	return nil
}

func (op *sleepOp) isValid(bool) error {
	if op.Duration.Duration < 0 {
		return errorf("duration %s is out of range: want a duration of 0s or more", op.Duration.Duration)
	}
	return nil
}

func (op *startCollectingMetricsOp) isValid(bool) error {
	if len(op.Namespaces) == 0 {
		return errorf("namespaces must name at least one namespace")
	}
	return nil
}

func (op *stopCollectingMetricsOp) isValid(bool) error { return nil }

func (op *createAnyOp) isValid(bool) error {
	if op.TemplatePath == "" {
		return errorf("templatePath must be set")
	}
	return nil
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

func (op *createNodesOp) collectsMetrics() bool            { return false }
func (op *createNamespacesOp) collectsMetrics() bool       { return false }
func (op *createPodsOp) collectsMetrics() bool             { return op.CollectMetrics }
func (op *createPodSetsOp) collectsMetrics() bool          { return op.CreatePodsOp.CollectMetrics }
func (op *deletePodsOp) collectsMetrics() bool             { return false }
func (op *churnOp) collectsMetrics() bool                  { return false }
func (op *barrierOp) collectsMetrics() bool                { return false }
func (op *sleepOp) collectsMetrics() bool                  { return false }
func (op *startCollectingMetricsOp) collectsMetrics() bool { return false }
func (op *stopCollectingMetricsOp) collectsMetrics() bool  { return true }
func (op *createAnyOp) collectsMetrics() bool              { return false }
func (op *updateAnyOp) collectsMetrics() bool              { return false }

// unmarshalStrict is sigs.k8s.io/yaml.UnmarshalStrict with the error cleaned.
func unmarshalStrict(b []byte, v any) error {
	if err := yaml.UnmarshalStrict(b, v); err != nil {
		return cleanDecodeError(err)
	}
	return nil
}

// leniently reads the name of a test case or workload for error messages.
func peekName(b []byte) string {
	var n struct{ Name string }
	_ = yaml.Unmarshal(b, &n)
	return n.Name
}

func isNull(b []byte) bool {
	return string(bytes.TrimSpace(b)) == "null"
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
