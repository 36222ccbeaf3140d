package runner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// withRegistered registers run for code for the test's duration.
func withRegistered(t *testing.T, code workload.Opcode, run OpFunc) {
	t.Helper()
	registered.Lock()
	saved := registered.ops
	registered.ops = nil
	registered.Unlock()
	RegisterOp(code, run)
	t.Cleanup(func() {
		registered.Lock()
		registered.ops = saved
		registered.Unlock()
	})
}

func TestCheckOps(t *testing.T) {
	ops := selectOps(t, "  - {opcode: createResourceClaims, count: 1, namespace: dra, templatePath: claim.yaml}\n  - {opcode: allocResourceClaims, namespace: dra}\n")
	sel := &workload.Selected{Path: "dra.yaml", TestCase: "T", Workload: "w", Ops: ops}
	tests := []struct {
		name     string
		register bool
		wantErr  string
	}{
		{name: "not linked", wantErr: `dra.yaml: test case "T", workload "w", op 1 (allocResourceClaims): allocating ResourceClaims without pods needs the DynamicResources plugin's structured allocator, which only schedq-perf links: run this file with ` + "`schedq-perf run`"},
		{name: "linked", register: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.register {
				withRegistered(t, workload.OpcodeAllocResourceClaims, func(context.Context, OpEnv, workload.Op) (string, error) { return "", nil })
			}
			err := CheckOps(sel)
			got := ""
			if err != nil {
				got = err.Error()
				var opErr *OpError
				if !errors.As(err, &opErr) || opErr.Op != ops[1] {
					t.Errorf("error %v does not locate op 1", err)
				}
			}
			if got != tt.wantErr {
				t.Errorf("CheckOps() = %q\nwant %q", got, tt.wantErr)
			}
		})
	}
}

// TestExecutor_runLinked checks that a registered op runs with the run's
// client and labels, and that its failure fails the op.
func TestExecutor_runLinked(t *testing.T) {
	ops := selectOps(t, "  - {opcode: allocResourceClaims, namespace: dra}\n")
	client := fake.NewClientset()
	e := newTestExecutor(client)
	e.runLabels = labels.SelectorFromSet(e.opts.Labels)
	var gotEnv OpEnv
	var gotOp workload.Op
	fail := false
	withRegistered(t, workload.OpcodeAllocResourceClaims, func(_ context.Context, env OpEnv, op workload.Op) (string, error) {
		gotEnv, gotOp = env, op
		if fail {
			return "", errors.New("no devices")
		}
		return "2 claims allocated", nil
	})
	var stat OpStat
	summary, err := e.runOp(context.Background(), ops[0], &OpProgress{}, &stat)
	if err != nil || summary != "2 claims allocated" || stat.Namespace != "dra" {
		t.Errorf("runOp = %q, %v, namespace %q; want the op's summary, no error, dra", summary, err, stat.Namespace)
	}
	if gotOp != ops[0] || gotEnv.Client != e.client || gotEnv.RunLabels.String() != RunLabelKey+"=test" || gotEnv.Warnf == nil {
		t.Errorf("the op got %v and env %+v; want its op, the run's client and labels", gotOp, gotEnv)
	}
	fail = true
	if _, err := e.runOp(context.Background(), ops[0], &OpProgress{}, &stat); err == nil || !strings.Contains(err.Error(), "no devices") {
		t.Errorf("a failing op: error %v, want its own", err)
	}
}

func TestRegisterOp_notLinkedOnly(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Errorf("RegisterOp(createPods) did not panic")
		}
	}()
	RegisterOp(workload.OpcodeCreatePods, nil)
}
