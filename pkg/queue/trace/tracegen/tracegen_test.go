package tracegen_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace/tracegen"
)

func replay(t *trace.Trace) ([]byte, error) {
	var out bytes.Buffer
	err := trace.Replay(t, trace.NewModel(t.Config, t.Plugins()), &out)
	return out.Bytes(), err
}

func encode(t testing.TB, tr *trace.Trace) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := tracegen.Encode(&b, tr); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGenerate_Deterministic(t *testing.T) {
	for _, pfb := range []bool{false, true} {
		a := encode(t, tracegen.Generate(7, tracegen.Options{PopFromBackoffQ: pfb}))
		b := encode(t, tracegen.Generate(7, tracegen.Options{PopFromBackoffQ: pfb}))
		if !bytes.Equal(a, b) {
			t.Fatalf("pfb=%v: two generations from one seed differ", pfb)
		}
	}
}

// TestGenerate_ValidAndRoundTrips: every generated trace reads back to
// itself and replays through the model without error, and every add and
// fail has an instant of its own.
func TestGenerate_ValidAndRoundTrips(t *testing.T) {
	for seed := int64(0); seed < 300; seed++ {
		tr := tracegen.Generate(seed, tracegen.Options{PopFromBackoffQ: seed%2 == 0})
		back, err := trace.Read(bytes.NewReader(encode(t, tr)))
		if err != nil {
			t.Fatalf("seed %d: the encoded trace does not read: %v", seed, err)
		}
		if !reflect.DeepEqual(normalize(back), normalize(tr)) {
			t.Fatalf("seed %d: the trace does not round-trip", seed)
		}
		if _, err := replay(tr); err != nil {
			t.Fatalf("seed %d: invalid trace: %v", seed, err)
		}
		at := map[int64]bool{}
		for i, op := range tr.Ops() {
			if i > 0 && op.At < tr.Op(i-1).At {
				t.Fatalf("seed %d: time goes backwards at op %d", seed, i)
			}
			if op.Kind == trace.OpAdd || op.Kind == trace.OpFail {
				if at[op.At] {
					t.Fatalf("seed %d: two adds/fails at %d", seed, op.At)
				}
				at[op.At] = true
			}
		}
	}
}

// normalize makes nil and empty lists equal and drops line numbers.
func normalize(t *trace.Trace) *trace.Trace {
	var ops []trace.Op
	fix := func(l []string) []string {
		if len(l) == 0 {
			return nil
		}
		return l
	}
	for _, op := range t.Ops() {
		op.Line = 0
		op.Gates, op.Plugins, op.Pending, op.Queue, op.Pods = fix(op.Gates), fix(op.Plugins), fix(op.Pending), fix(op.Queue), fix(op.Pods)
		ops = append(ops, op)
	}
	return trace.New(t.Config, ops)
}

// TestGenerate_Coverage: across a few hundred seeds, the traces reach every
// rule the differential test is meant to exercise.
func TestGenerate_Coverage(t *testing.T) {
	want := map[string]bool{
		"error failure": false, "pending plugins": false, "gated add": false, "ungate": false,
		"activate in flight": false, "delete in flight": false, "max backoff 0": false,
		"several in flight": false, "UnschedulableTimeout": false, "PopFromBackoffQ": false,
		"BackoffComplete": false, "ForceActivate": false, "TargetPodUpdatePodSchedulingGatesEliminated": false,
		"errorBackoff": false, "gated": false, "inFlight": false,
	}
	for seed := int64(0); seed < 300; seed++ {
		tr := tracegen.Generate(seed, tracegen.Options{PopFromBackoffQ: seed%2 == 0})
		if tr.Config.PodMaxBackoffSeconds == 0 {
			want["max backoff 0"] = true
		}
		m := trace.NewModel(tr.Config, tr.Plugins())
		var prev int64
		for _, op := range tr.Ops() {
			trace.RunPeriodic(m, prev, op.At)
			prev = op.At
			m.SetTime(op.At)
			switch op.Kind {
			case trace.OpFail:
				if len(op.Plugins) == 0 {
					want["error failure"] = true
				}
				if len(op.Pending) > 0 {
					want["pending plugins"] = true
				}
			case trace.OpAdd:
				if len(op.Gates) > 0 {
					want["gated add"] = true
				}
			case trace.OpUngate:
				want["ungate"] = true
			case trace.OpActivate:
				for _, p := range op.Pods {
					if m.Where(p) == "inFlight" {
						want["activate in flight"] = true
					}
				}
			case trace.OpDelete:
				if m.Where(op.Pod) == "inFlight" {
					want["delete in flight"] = true
				}
			}
			applyOp(m, op)
			n := 0
			for _, ps := range m.Snapshot().Pods {
				if ps.Queue == "inFlight" {
					n++
				}
			}
			if n >= 3 {
				want["several in flight"] = true
			}
		}
		out, _ := replay(tr)
		for k := range want {
			if strings.Contains(string(out), `"`+k+`"`) {
				want[k] = true
			}
		}
	}
	for k, ok := range want {
		if !ok {
			t.Errorf("no generated trace covers %q", k)
		}
	}
}

func applyOp(m *trace.Model, op trace.Op) {
	switch op.Kind {
	case trace.OpAdd:
		m.Add(op.Pod, op.Priority, op.Gates)
	case trace.OpPop:
		m.Pop()
	case trace.OpFail:
		m.Fail(op.Pod, op.Plugins, op.Pending)
	case trace.OpDone:
		m.Done(op.Pod)
	case trace.OpEvent:
		m.Event(op.Event, op.Queue)
	case trace.OpActivate:
		m.Activate(op.Pods)
	case trace.OpUngate:
		m.Ungate(op.Pod)
	case trace.OpDelete:
		m.Delete(op.Pod)
	}
}

func TestMinimize(t *testing.T) {
	tr := tracegen.Generate(3, tracegen.Options{PopFromBackoffQ: true, Ops: 400})
	// "fails": the model replays it and a pod lands in errorBackoff.
	fails := func(c *trace.Trace) bool {
		out, err := replay(c)
		return err == nil && strings.Contains(string(out), `"errorBackoff"`)
	}
	if !fails(tr) {
		t.Skip("seed 3 has no error backoff; pick another")
	}
	min := tracegen.Minimize(tr, fails)
	if !fails(min) {
		t.Fatal("the minimized trace no longer fails")
	}
	// add, pop, fail with no plugins, and nothing else is needed (the final
	// snapshot shows the pod).
	if min.Len() != 3 {
		var b bytes.Buffer
		_ = tracegen.Encode(&b, min)
		t.Fatalf("minimized to %d ops, want 3:\n%s", min.Len(), b.String())
	}
	for i := range min.Len() {
		ops := min.Ops()
		c := trace.New(min.Config, append(ops[:i:i], ops[i+1:]...))
		if fails(c) {
			t.Fatalf("op %d can still be removed", i)
		}
	}
}

// TestGenerate_RegistersThePool: a replay registers the plugins the trace
// names, which must be the whole pool the generator drew from, from the
// first operation on.
func TestGenerate_RegistersThePool(t *testing.T) {
	pool := []string{"A", "B", "C"}
	for seed := int64(0); seed < 20; seed++ {
		tr := tracegen.Generate(seed, tracegen.Options{Plugins: pool, Ops: 30})
		if got := tr.Plugins(); !reflect.DeepEqual(got, pool) {
			t.Fatalf("seed %d: trace names plugins %v, want %v", seed, got, pool)
		}
		if op := tr.Op(0); op.Kind != trace.OpEvent || !reflect.DeepEqual(op.Queue, pool) {
			t.Fatalf("seed %d: first op %+v does not name the pool", seed, op)
		}
	}
}

// TestGenerate_PodGroups: with PodGroups the traces turn GenericWorkload on,
// read back to themselves, replay through the model and use every pod-group
// operation. Skipped while the model does not queue pod groups (the perf
// module's TestGenerate_PodGroupsOnUpstream checks the generator against
// upstream's queue meanwhile).
func TestGenerate_PodGroups(t *testing.T) {
	cfg := trace.DefaultConfig()
	cfg.GenericWorkload = true
	if _, ok := any(trace.NewModel(cfg, nil)).(trace.GroupDriver); !ok {
		t.Skip("the model does not queue pod groups yet (it is not a trace.GroupDriver): PodGroups needs one")
	}
	seen := map[trace.OpKind]int{}
	members := 0
	for seed := int64(0); seed < 100; seed++ {
		tr := tracegen.Generate(seed, tracegen.Options{PopFromBackoffQ: seed%2 == 0, PodGroups: true})
		if !tr.Config.GenericWorkload {
			t.Fatalf("seed %d: genericWorkload is off", seed)
		}
		back, err := trace.Read(bytes.NewReader(encode(t, tr)))
		if err != nil {
			t.Fatalf("seed %d: the encoded trace does not read: %v", seed, err)
		}
		if !reflect.DeepEqual(normalize(back), normalize(tr)) {
			t.Fatalf("seed %d: the trace does not round-trip", seed)
		}
		if _, err := replay(tr); err != nil {
			t.Fatalf("seed %d: invalid trace: %v", seed, err)
		}
		for _, op := range tr.Ops() {
			seen[op.Kind]++
			if op.Group != "" && op.Kind == trace.OpAdd {
				members++
			}
		}
	}
	for _, k := range []trace.OpKind{trace.OpPodGroupAdd, trace.OpPodGroupDelete, trace.OpAttempted} {
		if seen[k] == 0 {
			t.Errorf("no %s in 100 traces", k)
		}
	}
	if members == 0 || members == seen[trace.OpAdd] {
		t.Errorf("%d of %d adds name a group; want some, not all", members, seen[trace.OpAdd])
	}
}
