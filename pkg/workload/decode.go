package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

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
		if remedy, ok := removedOps[code]; ok {
			return code, nil, fmt.Errorf("opcode %q was removed from scheduler_perf: %s", code, remedy)
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

// leniently reads the name of a test case or workload for error messages.
func peekName(b []byte) string {
	var n struct{ Name string }
	_ = yaml.Unmarshal(b, &n)
	return n.Name
}

func isNull(b []byte) bool {
	return string(bytes.TrimSpace(b)) == "null"
}
