package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// Some of upstream's ops run code of k8s.io/kubernetes itself, which only
// the perf module links (this module stays free of it). The perf module
// registers them (RegisterOp); a binary without the registration refuses a
// workload that uses one before anything starts (CheckOps), with the reason
// linkedOnly gives.

// linkedOnly are the opcodes whose implementation the perf module
// registers, and why a binary without it cannot run them.
var linkedOnly = map[workload.Opcode]string{
	workload.OpcodeAllocResourceClaims: "allocating ResourceClaims without pods needs the DynamicResources plugin's structured allocator, " +
		"which only schedq-perf links: run this file with `schedq-perf run`",
}

// OpEnv is what a registered op may use of the run.
type OpEnv struct {
	// Client is the runner's client (protobuf, the run's QPS).
	Client kubernetes.Interface
	// RunLabels select the objects this run created.
	RunLabels labels.Selector
	// Warnf records a warning in the result.
	Warnf func(format string, args ...any)
}

// OpFunc runs one op and returns a summary for progress.
type OpFunc func(ctx context.Context, env OpEnv, op workload.Op) (summary string, err error)

var registered struct {
	sync.RWMutex
	ops map[workload.Opcode]OpFunc
}

// RegisterOp makes run the implementation of code, one of the opcodes
// only the perf module can run. It panics on any other opcode or a second
// registration: both are programming errors.
func RegisterOp(code workload.Opcode, run OpFunc) {
	if _, ok := linkedOnly[code]; !ok {
		panic(fmt.Sprintf("runner: RegisterOp(%s): the runner implements this op itself", code))
	}
	registered.Lock()
	defer registered.Unlock()
	if registered.ops == nil {
		registered.ops = map[workload.Opcode]OpFunc{}
	}
	if _, ok := registered.ops[code]; ok {
		panic(fmt.Sprintf("runner: RegisterOp(%s) called twice", code))
	}
	registered.ops[code] = run
}

func registeredOp(code workload.Opcode) OpFunc {
	registered.RLock()
	defer registered.RUnlock()
	return registered.ops[code]
}

// CheckOps returns why sel cannot run in this binary (an *OpError naming
// the first op it cannot run), nil if it can.
func CheckOps(sel *workload.Selected) error {
	for _, op := range sel.Ops {
		if reason, ok := linkedOnly[op.Opcode()]; ok && registeredOp(op.Opcode()) == nil {
			return &OpError{Path: sel.Path, TestCase: sel.TestCase, Workload: sel.Workload, Op: op, Err: errors.New(reason)}
		}
	}
	return nil
}

// runLinked runs a registered op.
func (e *executor) runLinked(ctx context.Context, op workload.Op) (string, error) {
	run := registeredOp(op.Opcode())
	if run == nil {
		return "", errors.New(linkedOnly[op.Opcode()])
	}
	return run(ctx, OpEnv{Client: e.client, RunLabels: e.runLabels, Warnf: e.warnf}, op)
}
