package difftest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace/tracegen"
)

// disagreement replays t through both and describes how they differ, or
// returns "" if they agree. A trace the model rejects is not a disagreement
// (the generator and the minimizer rely on that).
func disagreement(t *trace.Trace) (string, bool) { return disagreementWith(t, t) }

// disagreementWith is disagreement with upstream replaying up, a variant of
// t (only the harness's own self-test passes one).
func disagreementWith(t, up *trace.Trace) (string, bool) {
	want, err := replayModel(t)
	if err != nil {
		return "", false
	}
	got, errs, err := replayUpstream(up)
	if d := trace.Compare(want, got); d != "" {
		if err != nil {
			d += fmt.Sprintf("\n(upstream stopped: %v)", err)
		}
		return "model vs upstream, " + d, true
	}
	if err != nil {
		return fmt.Sprintf("upstream rejected a trace the model accepts: %v", err), true
	}
	if len(errs) > 0 {
		return fmt.Sprintf("upstream logged errors: %q", errs), true
	}
	return "", false
}

func readTrace(tb testing.TB, path string) *trace.Trace {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	tr, err := trace.Read(f)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return tr
}

// TestUpstream_Events: every event label a trace may use has an upstream
// event with that label, on the resource the model names.
func TestUpstream_Events(t *testing.T) {
	for _, label := range trace.EventLabels() {
		ev, ok := upstreamEvents[label]
		if !ok {
			t.Errorf("event %s has no upstream event", label)
			continue
		}
		if got := ev.Label(); got != label {
			t.Errorf("event %s is %s upstream", label, got)
		}
		if got, want := string(ev.Resource), trace.Events[label].Resource; got != string(want) {
			t.Errorf("event %s: upstream resource %s, the model's %s", label, got, want)
		}
	}
	if len(upstreamEvents) != len(trace.Events) {
		t.Errorf("%d upstream events for %d trace events", len(upstreamEvents), len(trace.Events))
	}
}

// upstreamExamples holds the example traces with the output upstream's own
// queue (k8s.io/kubernetes v1.37.2) printed for each when it was recorded.
const upstreamExamples = "testdata/upstream-v1.37/"

// TestUpstream_Examples checks the harness itself: the upstream driver must
// print exactly what upstream printed when the example traces were recorded.
func TestUpstream_Examples(t *testing.T) {
	paths, _ := filepath.Glob(upstreamExamples + "*.trace.jsonl")
	if len(paths) == 0 {
		t.Fatal("no example traces")
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".trace.jsonl")
		t.Run(name, func(t *testing.T) {
			got, errs, err := replayUpstream(readTrace(t, path))
			if err != nil {
				t.Fatalf("replay: %v", err)
			}
			if len(errs) > 0 {
				t.Errorf("upstream logged errors: %q", errs)
			}
			want, err := os.ReadFile(strings.TrimSuffix(path, ".trace.jsonl") + ".out.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			if d := trace.Compare(want, got); d != "" {
				t.Errorf("the harness does not reproduce upstream's recorded output: %s", d)
			}
		})
	}
}

// podGroupExamples holds the hand-written pod-group traces (GenericWorkload)
// with upstream's output; pkg/queue/trace/testdata/upstream-v1.37/podgroups
// holds the same files for the model's test.
const podGroupExamples = upstreamExamples + "podgroups/"

// modelPodGroupExamples is the copy the model's test reads, in the root
// module.
const modelPodGroupExamples = "../../pkg/queue/trace/testdata/upstream-v1.37/podgroups/"

// podGroupFragments: what each pod-group example must keep showing, so that
// a re-recording that loses the rule it is named for fails.
var podGroupFragments = map[string][]string{
	"gang_incomplete_then_podgroup":     {`"incomplete":3`, `"active":{"UnscheduledPodAdd":6}`, `"default/g":{"queue":"active","attempts":0,"size":3}`},
	"gang_podgroup_first_incoming":      {`"active":{"UnscheduledPodAdd":6}`},
	"group_backoff_sqrt_n_max_pfb_on":   {`{"at":56999,"pop":null}`, `{"at":57100,"pop":"default/g"`, `"queue":"errorBackoff"`},
	"group_backoff_sqrt_n_max_pfb_off":  {`{"at":56999,"pop":null}`, `{"at":57100,"pop":"default/g"`},
	"attempted_success_rest_to_active":  {`"active":{"ScheduleAttemptFailure":1`, `"pods":["default/c"],"attempts":2`},
	"member_added_in_flight_pending":    {`"default/c":{"queue":"pending","attempts":0}`, `"backoff":{"ScheduleAttemptFailure":3}`},
	"gated_member_gates_group":          {`"gated":3`, `"TargetPodUpdatePodSchedulingGatesEliminated":3`},
	"delete_member_and_podgroup":        {`"incomplete":2`, `"UnscheduledPodAdd":8`},
	"activate_member_moves_group":       {`"ForceActivate":2`},
	"leftover_flush_gated_group":        {`"UnschedulableTimeout":2`, `"UnschedulableTimeout":4`, `"default/x":{"queue":"backoff"`},
	"podgroup_deleted_in_flight":        {`"default/a":{"queue":"incomplete","attempts":1},"default/b":{"queue":"inFlight"`},
	"nonmember_fail_clears_last_popped": {`"default/a":{"queue":"active","attempts":1},"default/b":{"queue":"inFlight","attempts":1},"default/c":{"queue":"active","attempts":0}`},
}

// podGroupErrors: the examples where upstream logs an error, and the error.
var podGroupErrors = map[string]string{
	// A single pod's failure clears the last popped entity: the members
	// added or failed after it form a new group in activeQ, and the popped
	// group's AddAttemptedPodGroupIfNeeded finds it there and gives up.
	"nonmember_fail_clears_last_popped": "AddAttemptedPodGroupIfNeeded(default/g): pod group default/g is already present in the active queue",
}

// TestUpstream_PodGroupExamples: the upstream driver prints what upstream's
// queue printed for each pod-group example when it was recorded, and the
// example still shows its rule. SCHEDQ_RECORD=1 records the outputs anew
// (into both copies of the examples).
func TestUpstream_PodGroupExamples(t *testing.T) {
	recordedExamples(t, exampleSet{dir: podGroupExamples, modelDir: modelPodGroupExamples,
		fragments: podGroupFragments, errs: podGroupErrors, groups: true})
}

// exampleSet is a directory of hand-written traces (NAME.trace.jsonl) with
// upstream's output (NAME.out.jsonl), of which the root module's tests read
// a copy.
type exampleSet struct {
	dir, modelDir string
	// fragments: what each example's output must keep showing, so that a
	// re-recording that loses the rule it is named for fails.
	fragments map[string][]string
	// errs: the examples where upstream logs an error, and the error.
	errs map[string]string
	// groups: every example turns GenericWorkload on.
	groups bool
}

// recordedExamples checks each example of s against the upstream driver,
// records them anew with SCHEDQ_RECORD=1 (into s.dir and s.modelDir), and
// checks that the two copies agree and that each output keeps showing its
// fragments.
func recordedExamples(t *testing.T, s exampleSet) {
	paths, _ := filepath.Glob(s.dir + "*.trace.jsonl")
	if len(paths) == 0 {
		t.Fatalf("no example traces in %s", s.dir)
	}
	seen := map[string]bool{}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".trace.jsonl")
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			tr := readTrace(t, path)
			if s.groups && !tr.Config.GenericWorkload {
				t.Fatal("a pod-group example without genericWorkload")
			}
			got, errs, err := replayUpstream(tr)
			if err != nil {
				t.Fatalf("replay: %v", err)
			}
			if want := s.errs[name]; want != "" {
				if len(errs) != 1 || errs[0] != want {
					t.Errorf("upstream logged %q, want %q", errs, want)
				}
			} else if len(errs) > 0 {
				t.Errorf("upstream logged errors: %q", errs)
			}
			out := strings.TrimSuffix(path, ".trace.jsonl") + ".out.jsonl"
			if os.Getenv("SCHEDQ_RECORD") == "1" {
				for _, p := range []string{out, s.modelDir + filepath.Base(out)} {
					if err := os.WriteFile(p, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			want, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if d := trace.Compare(want, got); d != "" {
				t.Errorf("the harness does not reproduce upstream's recorded output: %s", d)
			}
			// The model's test reads the other copy: the two must not drift.
			for _, f := range []string{path, out} {
				mine, _ := os.ReadFile(f)
				theirs, err := os.ReadFile(s.modelDir + filepath.Base(f))
				if err != nil || !bytes.Equal(mine, theirs) {
					t.Errorf("%s differs from %s%s (%v): record with SCHEDQ_RECORD=1 and copy the traces", f, s.modelDir, filepath.Base(f), err)
				}
			}
			frags, ok := s.fragments[name]
			if !ok {
				t.Fatalf("example %s has no fragments", name)
			}
			for _, f := range frags {
				if !strings.Contains(string(got), f) {
					t.Errorf("upstream's output lacks %s; the example no longer shows its rule:\n%s", f, got)
				}
			}
		})
	}
	for name := range s.fragments {
		if !seen[name] {
			t.Errorf("example %s has no trace", name)
		}
	}
}

// TestUpstream_GateBothWaysInOneProcess: the PopFromBackoffQ gate can be
// flipped between queue constructions, in both directions, and the queue
// built after each flip behaves accordingly.
func TestUpstream_GateBothWaysInOneProcess(t *testing.T) {
	for i, name := range []string{"pop_from_backoffq_pfb_on", "pop_from_backoffq_pfb_off", "pop_from_backoffq_pfb_on", "pop_from_backoffq_pfb_off"} {
		got, _, err := replayUpstream(readTrace(t, upstreamExamples+name+".trace.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := os.ReadFile(upstreamExamples + name + ".out.jsonl")
		if d := trace.Compare(want, got); d != "" {
			t.Fatalf("run %d (%s): %s", i, name, d)
		}
	}
}

// scenarios: each hand-written trace in testdata, and a fragment its output
// must contain, so that the scenario keeps showing the rule it is named for.
var scenarios = map[string][]string{
	"pfb_on_pop_from_backoffq":              {`"PopFromBackoffQ":1`},
	"pfb_off_no_pop_from_backoffq":          {`"BackoffComplete":1`, `{"at":1500,"pop":null}`},
	"error_heap_never_popped_early_pfb_on":  {`"errorBackoff"`, `{"at":1500,"pop":null}`},
	"error_heap_never_popped_early_pfb_off": {`"errorBackoff"`, `{"at":1500,"pop":null}`},
	"window_priority_ordering_pfb_on":       {`{"at":1200,"pop":"default/high","attempts":2}`},
	"window_priority_ordering_pfb_off":      {`{"at":2300,"pop":"default/low","attempts":2}`},
	"gate_removal":                          {`"TargetPodUpdatePodSchedulingGatesEliminated":1`, `"default/x":{"queue":"unschedulable"`},
	"gate_removal_pfb_off":                  {`"TargetPodUpdatePodSchedulingGatesEliminated":1`, `"default/x":{"queue":"unschedulable"`},
	"leftover_flush":                        {`"UnschedulableTimeout":1`},
	"leftover_flush_custom_duration":        {`"backoff":{"UnschedulableTimeout":1}`, `"active":{"BackoffComplete":1`},
	"inflight_event_to_backoff":             {`"default/a":{"queue":"backoff"`, `"default/b":{"queue":"unschedulable"`},
	"activate_inflight_pod":                 {`"default/a":{"queue":"backoff"`},
	"pending_plugin_queue_immediately":      {`"active":{"ScheduleAttemptFailure":1`},
	"max_backoff_zero":                      {`"active":{"ScheduleAttemptFailure":1`},
	"delete_inflight_then_fail":             {`"default/a":{"queue":"unschedulable"`},
}

// TestScenarios replays the hand-written traces through the model and
// upstream; the outputs must be identical.
func TestScenarios(t *testing.T) {
	paths, _ := filepath.Glob("testdata/*.trace.jsonl")
	seen := map[string]bool{}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".trace.jsonl")
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			tr := readTrace(t, path)
			want, err := replayModel(tr)
			if err != nil {
				t.Fatalf("model: %v", err)
			}
			got, errs, err := replayUpstream(tr)
			if err != nil {
				t.Fatalf("upstream: %v", err)
			}
			if len(errs) > 0 {
				t.Errorf("upstream logged errors: %q", errs)
			}
			if d := trace.Compare(want, got); d != "" {
				t.Errorf("model vs upstream, %s", d)
			}
			frags, ok := scenarios[name]
			if !ok {
				t.Fatalf("scenario %s has no entry in scenarios", name)
			}
			compact := strings.ReplaceAll(string(got), " ", "")
			for _, f := range frags {
				if !strings.Contains(compact, f) {
					t.Errorf("upstream's output lacks %s; the scenario no longer shows its rule:\n%s", f, got)
				}
			}
		})
	}
	for name := range scenarios {
		if !seen[name] {
			t.Errorf("scenario %s has no trace in testdata", name)
		}
	}
}

// TestDifferential replays random traces through the model and upstream.
// SCHEDQ_DIFF_TRACES is the number per gate setting (default 200, 40 with
// -short); SCHEDQ_DIFF_SEED the first seed (default 1). A disagreement is
// shrunk to a minimal trace, written to a temporary file.
func TestDifferential(t *testing.T) {
	n := envInt(t, "SCHEDQ_DIFF_TRACES", 200)
	if testing.Short() && os.Getenv("SCHEDQ_DIFF_TRACES") == "" {
		n = 40
	}
	base := int64(envInt(t, "SCHEDQ_DIFF_SEED", 1))
	for _, pfb := range []bool{true, false} {
		t.Run(fmt.Sprintf("popFromBackoffQ=%v", pfb), func(t *testing.T) {
			failures := 0
			for i := 0; i < n && failures < 3; i++ {
				seed := base + int64(i)
				tr := tracegen.Generate(seed, profile(seed, pfb))
				if _, err := replayModel(tr); err != nil {
					t.Fatalf("seed %d: the generator made a trace the model rejects: %v", seed, err)
				}
				d, bad := disagreement(tr)
				if !bad {
					continue
				}
				failures++
				min := tracegen.Minimize(tr, func(c *trace.Trace) bool { _, bad := disagreement(c); return bad })
				d, _ = disagreement(min)
				path := writeTrace(t, fmt.Sprintf("schedq-diff-seed%d-pfb%v-", seed, pfb), min)
				t.Errorf("seed %d (popFromBackoffQ=%v, %d ops; minimal trace of %d ops in %s):\n%s", seed, pfb, tr.Len(), min.Len(), path, d)
			}
		})
	}
}

// groupProfile is profile with pod groups: a gang-shaped mix where about
// half the pods name a group.
func groupProfile(seed int64, pfb bool) tracegen.Options {
	o := profile(seed, pfb)
	o.PodGroups = true
	return o
}

// TestDifferential_PodGroups replays random pod-group traces (GenericWorkload,
// v1.37) through the model and upstream, as TestDifferential does
// (SCHEDQ_DIFF_TRACES per gate setting). Skipped while the model does not
// queue pod groups.
func TestDifferential_PodGroups(t *testing.T) {
	if UpstreamVersion < queue.V1_37 {
		t.Skipf("upstream %s has no pod-group queue", UpstreamVersion)
	}
	cfg := trace.DefaultConfig()
	cfg.GenericWorkload = true
	if _, ok := any(newModel(cfg, nil)).(trace.GroupDriver); !ok {
		t.Skip("the model does not queue pod groups yet (it is not a trace.GroupDriver): the pod-group differential waits for it")
	}
	n := envInt(t, "SCHEDQ_DIFF_TRACES", 200)
	if testing.Short() && os.Getenv("SCHEDQ_DIFF_TRACES") == "" {
		n = 40
	}
	base := int64(envInt(t, "SCHEDQ_DIFF_SEED", 1))
	for _, pfb := range []bool{true, false} {
		t.Run(fmt.Sprintf("popFromBackoffQ=%v", pfb), func(t *testing.T) {
			failures := 0
			for i := 0; i < n && failures < 3; i++ {
				seed := base + int64(i)
				o := groupProfile(seed, pfb)
				o.Version = UpstreamVersion
				tr := tracegen.Generate(seed, o)
				if _, err := replayModel(tr); err != nil {
					t.Fatalf("seed %d: the generator made a trace the model rejects: %v", seed, err)
				}
				d, bad := disagreement(tr)
				if !bad {
					continue
				}
				failures++
				min := tracegen.Minimize(tr, func(c *trace.Trace) bool { _, bad := disagreement(c); return bad })
				d, _ = disagreement(min)
				path := writeTrace(t, fmt.Sprintf("schedq-diff-podgroups-seed%d-pfb%v-", seed, pfb), min)
				t.Errorf("seed %d (pod groups, popFromBackoffQ=%v, %d ops; minimal trace of %d ops in %s):\n%s", seed, pfb, tr.Len(), min.Len(), path, d)
			}
		})
	}
}

// TestGenerate_PodGroupsOnUpstream checks the generator's pod groups with
// upstream's queue keeping the traces valid (Options.NewDriver): each trace
// replays through upstream without a rejection or an error logged, is the
// same trace when generated again, upstream prints the same output for it
// every time (nothing left to its map order), and the traces pop groups,
// leave members pending and incomplete, and end cycles with every status.
// SCHEDQ_GEN_TRACES is the number of traces (default 60, 20 with -short).
func TestGenerate_PodGroupsOnUpstream(t *testing.T) {
	n := envInt(t, "SCHEDQ_GEN_TRACES", 60)
	if testing.Short() && os.Getenv("SCHEDQ_GEN_TRACES") == "" {
		n = 20
	}
	var out bytes.Buffer
	statuses := map[string]bool{}
	for seed := int64(1); seed <= int64(n); seed++ {
		gen := func() *trace.Trace {
			var u *Upstream
			o := groupProfile(seed, seed%2 == 0)
			o.NewDriver = func(cfg trace.Config, plugins []string) trace.Driver {
				var err error
				if u, err = NewUpstream(cfg, plugins); err != nil {
					t.Fatal(err)
				}
				return u
			}
			tr := tracegen.Generate(seed, o)
			if errs := u.Errors(); len(errs) > 0 {
				t.Fatalf("seed %d: upstream logged errors while generating: %q", seed, errs)
			}
			u.Close()
			return tr
		}
		tr := gen()
		var a, b bytes.Buffer
		if err := tracegen.Encode(&a, tr); err != nil {
			t.Fatal(err)
		}
		if err := tracegen.Encode(&b, gen()); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("seed %d: two generations differ", seed)
		}
		got, errs, err := replayUpstream(tr)
		if err != nil || len(errs) > 0 {
			t.Fatalf("seed %d: upstream: %v %q", seed, err, errs)
		}
		for range 2 {
			again, _, _ := replayUpstream(tr)
			if d := trace.Compare(got, again); d != "" {
				path := writeTrace(t, fmt.Sprintf("schedq-podgroups-nondeterministic-seed%d-", seed), tr)
				t.Fatalf("seed %d (%s): upstream prints otherwise on a second replay: %s", seed, path, d)
			}
		}
		out.Write(got)
		for _, op := range tr.Ops() {
			if op.Kind == trace.OpAttempted {
				statuses[op.Status] = true
			}
		}
	}
	for _, f := range []string{`"podGroup":true`, `"queue":"pending"`, `"queue":"incomplete"`, `"groups":{`, `"queue":"errorBackoff"`} {
		if !bytes.Contains(out.Bytes(), []byte(f)) {
			t.Errorf("no %s in the outputs of %d traces", f, n)
		}
	}
	if len(statuses) != 3 {
		t.Errorf("attempted statuses %v; want all three", statuses)
	}
}

// TestDifferential_FindsAndShrinks checks the comparison itself: upstream
// replaying each trace with the gate flipped must disagree with the model
// somewhere, and the disagreement must shrink to a handful of operations.
func TestDifferential_FindsAndShrinks(t *testing.T) {
	flipped := func(c *trace.Trace) *trace.Trace {
		f := *c
		f.Config.PopFromBackoffQ = !c.Config.PopFromBackoffQ
		return &f
	}
	for seed := int64(1); seed < 50; seed++ {
		tr := tracegen.Generate(seed, tracegen.Options{PopFromBackoffQ: true, Ops: 300})
		if _, bad := disagreementWith(tr, flipped(tr)); !bad {
			continue
		}
		min := tracegen.Minimize(tr, func(c *trace.Trace) bool { _, bad := disagreementWith(c, flipped(c)); return bad })
		d, bad := disagreementWith(min, flipped(min))
		if !bad {
			t.Fatal("the minimized trace agrees")
		}
		// Smallest: add, pop, event, fail, pop (PopFromBackoffQ) or an
		// equally short trace about the aligned backoff expiry.
		if min.Len() > 6 {
			t.Errorf("seed %d shrank to %d ops, want at most 6: %s", seed, min.Len(), d)
		}
		t.Logf("seed %d: %d ops → %d: %s", seed, tr.Len(), min.Len(), d)
		return
	}
	t.Fatal("no trace tells the gate settings apart")
}

// profile varies the shape of random traces with the seed: the default mix,
// a busy queue (many pods in flight, events and failures), gate-heavy traces,
// and slow ones where flushes and timeouts dominate.
func profile(seed int64, pfb bool) tracegen.Options {
	o := tracegen.Options{PopFromBackoffQ: pfb, Ops: 100 + int(seed%7)*50}
	switch seed % 4 {
	case 1:
		o.MaxInFlight = 8
		o.Weights = &tracegen.Weights{Add: 10, Pop: 30, Fail: 25, Done: 3, Event: 20, Activate: 6, Ungate: 4, Delete: 2, Snapshot: 2}
	case 2:
		o.Gated = 0.5
		o.Weights = &tracegen.Weights{Add: 16, Pop: 20, Fail: 14, Done: 4, Event: 10, Activate: 8, Ungate: 10, Delete: 4, Snapshot: 3}
	case 3:
		o.Time = &tracegen.Time{Small: 30, Medium: 30, Large: 30, Leftover: 10}
	}
	return o
}

func envInt(t testing.TB, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return v
}

// lateRegistration registers each plugin with its driver just before the
// first operation that names it, the latest a stream may (trace.StreamDriver).
type lateRegistration struct {
	trace.StreamDriver
	seen map[string]bool
}

func (l *lateRegistration) register(plugins ...[]string) {
	for _, list := range plugins {
		for _, p := range list {
			if !l.seen[p] {
				l.seen[p] = true
				l.RegisterPlugins([]string{p})
			}
		}
	}
}

func (l *lateRegistration) Fail(pod string, plugins, pending []string) {
	l.register(plugins, pending)
	l.StreamDriver.Fail(pod, plugins, pending)
}

func (l *lateRegistration) Event(label string, queue []string) {
	l.register(queue)
	l.StreamDriver.Event(label, queue)
}

// TestDifferential_Streamed: simulate replays a trace as it reads it, and
// registers each plugin no later than where the trace first names it rather
// than from the start (trace.StreamDriver). On random traces that name their
// plugins only where a fail or an event first uses them, upstream's queue
// and the model, each registering every plugin at the last moment, print
// what upstream prints with every plugin registered from the start.
func TestDifferential_Streamed(t *testing.T) {
	n := envInt(t, "SCHEDQ_DIFF_TRACES", 200)
	if testing.Short() && os.Getenv("SCHEDQ_DIFF_TRACES") == "" {
		n = 40
	}
	late := 0
	for i := 0; i < n; i++ {
		seed, pfb := int64(i+1), i%2 == 0
		tr := tracegen.Generate(seed, profile(seed, pfb))
		// Without the generator's first event, which names every plugin.
		ops := tr.Ops()
		if len(ops) > 0 && ops[0].Kind == trace.OpEvent {
			ops = ops[1:]
			late++
		}
		tr = trace.New(tr.Config, ops)
		want, errs, err := replayUpstream(tr)
		if err != nil || len(errs) > 0 {
			t.Fatalf("seed %d: upstream: %v %q", seed, err, errs)
		}
		u, err := NewUpstream(tr.Config, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, side := range []struct {
			name string
			d    trace.StreamDriver
		}{{"upstream", u}, {"model", newModel(tr.Config, nil)}} {
			var got bytes.Buffer
			err := trace.Replay(tr, &lateRegistration{StreamDriver: side.d, seen: map[string]bool{}}, &got)
			if side.name == "upstream" {
				u.Close()
			}
			if err != nil {
				t.Fatalf("seed %d: %s registering late: %v", seed, side.name, err)
			}
			if diff := trace.Compare(want, got.Bytes()); diff != "" {
				path := writeTrace(t, fmt.Sprintf("schedq-diff-late-seed%d-", seed), tr)
				t.Fatalf("seed %d (%s): %s with plugins registered late vs upstream with all from the start: %s", seed, path, side.name, diff)
			}
		}
	}
	if late < n/2 {
		t.Fatalf("only %d of %d traces name their plugins late", late, n)
	}
}
