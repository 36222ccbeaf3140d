package workload

import (
	"maps"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// sleepOp is upstream's sleepOp, as written.
type sleepOp struct {
	Opcode        Opcode
	Duration      metav1.Duration
	DurationParam string
}

func (r *sleepOp) isValid(bool) error {
	if r.Duration.Duration < 0 {
		return errorf("duration %s is out of range: want a duration of 0s or more", r.Duration.Duration)
	}
	return nil
}
func (*sleepOp) collectsMetrics() bool { return false }

func (r *sleepOp) bind(b *binder, pos OpPos) ([]Op, error) {
	op := &Sleep{OpPos: pos, Duration: r.Duration.Duration}
	if r.DurationParam != "" {
		var err error
		if op.Duration, err = b.duration("durationParam", r.DurationParam); err != nil {
			return nil, err
		}
	}
	return one(op, nil)
}

// Sleep waits for Duration.
type Sleep struct {
	OpPos
	Duration time.Duration
}

// Opcode implements Op.
func (*Sleep) Opcode() Opcode { return OpcodeSleep }

// startCollectingMetricsOp is upstream's startCollectingMetricsOp, as written.
type startCollectingMetricsOp struct {
	Opcode        Opcode
	Name          string
	Namespaces    []string
	LabelSelector map[string]string
}

func (op *startCollectingMetricsOp) isValid(bool) error {
	if len(op.Namespaces) == 0 {
		return errorf("namespaces must name at least one namespace")
	}
	return nil
}

func (*startCollectingMetricsOp) collectsMetrics() bool { return false }

func (r *startCollectingMetricsOp) bind(_ *binder, pos OpPos) ([]Op, error) {
	return one(&StartCollectingMetrics{OpPos: pos, Name: r.Name, Namespaces: slices.Clone(r.Namespaces), LabelSelector: maps.Clone(r.LabelSelector)}, nil)
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

// Opcode implements Op.
func (*StartCollectingMetrics) Opcode() Opcode { return OpcodeStartCollectingMetrics }

// stopCollectingMetricsOp is upstream's stopCollectingMetricsOp, as written.
type stopCollectingMetricsOp struct {
	Opcode Opcode
}

func (*stopCollectingMetricsOp) isValid(bool) error    { return nil }
func (*stopCollectingMetricsOp) collectsMetrics() bool { return true }

func (*stopCollectingMetricsOp) bind(_ *binder, pos OpPos) ([]Op, error) {
	return one(&StopCollectingMetrics{OpPos: pos}, nil)
}

// StopCollectingMetrics stops the collectors, computes the results and
// applies the threshold.
type StopCollectingMetrics struct {
	OpPos
}

// Opcode implements Op.
func (*StopCollectingMetrics) Opcode() Opcode { return OpcodeStopCollectingMetrics }

// ProfileCPU is the only profile type upstream collects.
const ProfileCPU = "CPU"

func validProfileType(t string) error {
	if strings.ToUpper(t) != ProfileCPU {
		return errorf("type %q is not a profile type upstream collects (only %s)", t, ProfileCPU)
	}
	return nil
}

// startCollectingProfileOp is upstream's startCollectingProfileOp, as written.
type startCollectingProfileOp struct {
	Opcode   Opcode
	Type     string
	FilePath string
}

func (op *startCollectingProfileOp) isValid(bool) error {
	if op.FilePath == "" {
		return errorf("filePath must be set")
	}
	return validProfileType(op.Type)
}

func (*startCollectingProfileOp) collectsMetrics() bool { return false }

func (r *startCollectingProfileOp) bind(_ *binder, pos OpPos) ([]Op, error) {
	return one(&StartCollectingProfile{OpPos: pos, Type: ProfileCPU, FilePath: r.FilePath}, nil)
}

// StartCollectingProfile starts a CPU profile into FilePath (relative to
// the results directory when there is one, as upstream's is to
// -data-items-dir). A later StopCollectingProfile ends it.
type StartCollectingProfile struct {
	OpPos
	// Type is ProfileCPU.
	Type string
	// FilePath is as written: it names an output, not an input, so it is
	// not resolved against the config file's directory.
	FilePath string
}

// Opcode implements Op.
func (*StartCollectingProfile) Opcode() Opcode { return OpcodeStartCollectingProfile }

// stopCollectingProfileOp is upstream's stopCollectingProfileOp, as written.
type stopCollectingProfileOp struct {
	Opcode Opcode
	Type   string
}

func (op *stopCollectingProfileOp) isValid(bool) error { return validProfileType(op.Type) }
func (*stopCollectingProfileOp) collectsMetrics() bool { return false }

func (*stopCollectingProfileOp) bind(_ *binder, pos OpPos) ([]Op, error) {
	return one(&StopCollectingProfile{OpPos: pos, Type: ProfileCPU}, nil)
}

// StopCollectingProfile ends the profile StartCollectingProfile started.
type StopCollectingProfile struct {
	OpPos
	// Type is ProfileCPU.
	Type string
}

// Opcode implements Op.
func (*StopCollectingProfile) Opcode() Opcode { return OpcodeStopCollectingProfile }
