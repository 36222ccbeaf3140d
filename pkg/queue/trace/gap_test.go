package trace_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace/tracegen"
)

// gapTrace queues a pod in podBackoffQ and one in podErrorBackoffQ (both
// reach activeQ, one by the leftover flush), optionally a gated pod, then
// jumps to at.
func gapTrace(at int64, gated bool) string {
	s := `{"schedqTrace": 1}
{"at": 0, "op": "add", "pod": "default/a"}
{"at": 1, "op": "add", "pod": "default/b"}
{"at": 2, "op": "pop"}
{"at": 3, "op": "fail", "pod": "default/a", "plugins": ["NodeAffinity"]}
{"at": 4, "op": "pop"}
{"at": 5, "op": "fail", "pod": "default/b", "plugins": []}
`
	if gated {
		s += `{"at": 6, "op": "add", "pod": "default/g", "gates": ["example.com/gate"]}` + "\n"
	}
	return s + fmt.Sprintf(`{"at": %d, "op": "snapshot"}`, at) + "\n"
}

func replayString(t *testing.T, text string, v queue.Version, pfb bool) (string, time.Duration) {
	t.Helper()
	tr, err := trace.Read(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	cfg := tr.Config
	cfg.Version, cfg.PopFromBackoffQ = v, pfb
	var out bytes.Buffer
	began := time.Now()
	if err := trace.Replay(tr, trace.NewModel(cfg, tr.Plugins()), &out); err != nil {
		t.Fatal(err)
	}
	return out.String(), time.Since(began)
}

// TestReplay_TimeGap: a gap of 1.7e12 ms, or up to the largest at, while
// pods are queued ends in well under a second: the flush instants at which
// nothing can change are jumped over. Up to v1.36 a gated pod, picked by
// every leftover flush to no effect, costs nothing either.
func TestReplay_TimeGap(t *testing.T) {
	for _, v := range queue.Versions {
		for _, pfb := range []bool{true, false} {
			for _, at := range []int64{1.7e12, trace.MaxAtMillis} {
				gated := v < queue.V1_37
				t.Run(fmt.Sprintf("%s/popFromBackoffQ=%t/at=%d/gated=%t", v, pfb, at, gated), func(t *testing.T) {
					out, took := replayString(t, gapTrace(at, gated), v, pfb)
					if took > time.Second {
						t.Errorf("the gap took %s to replay", took)
					}
					lines := strings.Split(strings.TrimSpace(out), "\n")
					snap := lines[len(lines)-2]
					if !strings.HasPrefix(snap, fmt.Sprintf(`{"at":%d,"snapshot":`, at)) {
						t.Fatalf("the last snapshot is not at %d: %s", at, snap)
					}
					for _, want := range []string{`"default/a":{"queue":"active"`, `"default/b":{"queue":"active"`, `"UnschedulableTimeout":1`} {
						if !strings.Contains(snap, want) {
							t.Errorf("the snapshot after the gap lacks %s: %s", want, snap)
						}
					}
					if gated && !strings.Contains(snap, `"default/g":{"queue":"gated"`) {
						t.Errorf("the gated pod is not gated after the gap: %s", snap)
					}
				})
			}
		}
	}
}

// gatedGapTrace adds pods gated pods, one a millisecond, and with group a
// pod group of four whose second member is gated, then jumps to at.
func gatedGapTrace(pods int, group bool, at int64) string {
	var b strings.Builder
	if group {
		b.WriteString(`{"schedqTrace": 1, "config": {"genericWorkload": true}}` + "\n")
		b.WriteString(`{"at": 0, "op": "podGroupAdd", "group": "default/pg"}` + "\n")
		for i := 1; i <= 4; i++ {
			gates := ""
			if i == 2 {
				gates = `, "gates": ["example.com/ready"]`
			}
			fmt.Fprintf(&b, `{"at": 0, "op": "add", "pod": "default/m%d", "group": "default/pg"%s}`+"\n", i, gates)
		}
	} else {
		b.WriteString(`{"schedqTrace": 1}` + "\n")
	}
	for i := 1; i <= pods; i++ {
		fmt.Fprintf(&b, `{"at": %d, "op": "add", "pod": "default/g%d", "gates": ["example.com/gate"]}`+"\n", i, i)
	}
	fmt.Fprintf(&b, `{"at": %d, "op": "snapshot"}`+"\n", at)
	return b.String()
}

// TestReplay_TimeGapRecheckedGated: from v1.37 the leftover flush re-checks
// a gated pod, or a gated pod group, once its FlushTimestamp is
// podMaxInUnschedulablePodsDuration old (every 330 s: 300 s, rounded up to
// the 30 s flush), counting its pods in scheduler_queue_incoming_pods_total
// each time. A jump to the clock's last instant counts every re-check and
// costs well under a second of CPU, whatever the number of gated entities.
func TestReplay_TimeGapRecheckedGated(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pods  int
		group bool
	}{
		{"4 gated pods", 4, false},
		{"5 gated pods", 5, false},
		{"a gated group of 4 and a gated pod", 1, true},
	} {
		for _, pfb := range []bool{true, false} {
			for _, at := range []int64{1.7e12, trace.MaxAtMillis} {
				t.Run(fmt.Sprintf("%s/popFromBackoffQ=%t/at=%d", tc.name, pfb, at), func(t *testing.T) {
					began := testsupport.CPUTime()
					out, wall := replayString(t, gatedGapTrace(tc.pods, tc.group, at), queue.V1_37, pfb)
					took := testsupport.CPUTime() - began
					if began == 0 {
						took = wall // CPU time is not measured here
					}
					pods := tc.pods
					if tc.group {
						pods += 4
					}
					// Every entity is gated by 330 s and re-checked at 330 s,
					// 660 s, … up to at.
					want := fmt.Sprintf(`"UnschedulableTimeout":%d,`, int64(pods)*(at/330000))
					if !strings.Contains(out, want) {
						t.Errorf("output lacks %s:\n%s", want, out)
					}
					if took > 2*time.Second {
						t.Errorf("the gap took %s of CPU to replay", took)
					}
				})
			}
		}
	}
}

// replayBothWays replays tr on v's model as replays do, jumping over the
// flush instants of a gap that change nothing and counting its periodic
// re-checks at once, and stepping through every flush instant.
func replayBothWays(tr *trace.Trace, v queue.Version) (jumped, stepped []byte, jumpedErr, steppedErr error) {
	cfg := tr.Config
	cfg.Version = v
	replay := func() ([]byte, error) {
		var out bytes.Buffer
		err := trace.Replay(tr, trace.NewModel(cfg, tr.Plugins()), &out)
		return out.Bytes(), err
	}
	jumped, jumpedErr = replay()
	restore := trace.StepFlushes()
	defer restore()
	stepped, steppedErr = replay()
	return jumped, stepped, jumpedErr, steppedErr
}

// stepsAlike says how replaying tr on v's model changes when it steps
// through every flush instant, or "" if it does not.
func stepsAlike(tr *trace.Trace, v queue.Version) string {
	jumped, stepped, jumpedErr, steppedErr := replayBothWays(tr, v)
	if bytes.Equal(stepped, jumped) && fmt.Sprint(jumpedErr) == fmt.Sprint(steppedErr) {
		return ""
	}
	return fmt.Sprintf("changes the output (error %v, stepping: %v): %s", jumpedErr, steppedErr, trace.Compare(stepped, jumped))
}

// TestReplay_GapsAsStepped: random traces with gaps of up to an hour, and
// the same traces with a day added in the middle, print the same whether
// a replay jumps over idle flush instants or steps through each.
func TestReplay_GapsAsStepped(t *testing.T) {
	for seed := int64(0); seed < 40; seed++ {
		gen := tracegen.Generate(seed, tracegen.Options{Ops: 300, PopFromBackoffQ: seed%2 == 0,
			Time: &tracegen.Time{Small: 40, Medium: 20, Large: 20, Leftover: 20}})
		ops := gen.Ops()
		const day = 24 * 3600 * 1000
		for i := len(ops) / 2; i < len(ops); i++ {
			ops[i].At += day + seed*1013
		}
		for _, tr := range []*trace.Trace{gen, trace.New(gen.Config, ops)} {
			for _, v := range queue.Versions {
				if d := stepsAlike(tr, v); d != "" {
					t.Errorf("seed %d, %s, %d ops: jumping over idle flushes %s", seed, v, tr.Len(), d)
				}
			}
		}
	}
}

// TestRead_AtPastTheClock: an at the queue's clock cannot hold is refused
// with its line, by the fast reader and by encoding/json's alike.
func TestRead_AtPastTheClock(t *testing.T) {
	for _, line := range []string{
		fmt.Sprintf(`{"at":%d,"op":"pop"}`, trace.MaxAtMillis+1),
		fmt.Sprintf(`{"at": %d, "op": "add", "pod": "default/a", "extra": 1}`, trace.MaxAtMillis+1),
		`{"at":9223372036854775807,"op":"pop"}`,
	} {
		_, err := trace.Read(strings.NewReader("{\"schedqTrace\": 1}\n" + line + "\n"))
		if err == nil || !strings.HasPrefix(err.Error(), "line 2:") || !strings.Contains(err.Error(), "last instant the queue's clock holds") {
			t.Errorf("%s: error %v, want line 2 and the largest at", line, err)
		}
	}
	if _, err := trace.Read(strings.NewReader(fmt.Sprintf("{\"schedqTrace\": 1}\n{\"at\":%d,\"op\":\"pop\"}\n", trace.MaxAtMillis))); err != nil {
		t.Errorf("the largest at is refused: %v", err)
	}
}

// longGapOptions is a mix of gated pods (half the adds) and gaps of up to
// four hours, mostly not whole flush periods, with operations of every kind
// between them: ungates, failures of pods in flight across a gap, pod groups.
func longGapOptions(seed int64, groups bool) tracegen.Options {
	return tracegen.Options{Ops: 150, PopFromBackoffQ: seed%2 == 0, Gated: 0.5, PodGroups: groups,
		Version: queue.V1_37, Time: &tracegen.Time{Small: 40, Medium: 20, Large: 10, Leftover: 10, Long: 10}}
}

// TestReplay_LongGapsAsStepped: traces whose gaps hold many leftover flushes
// of gated pods and pod groups print the same whether a replay counts the
// flushes' periodic re-checks at once or steps through every instant, on
// every version (pod groups on v1.37 only).
func TestReplay_LongGapsAsStepped(t *testing.T) {
	for seed := int64(1); seed <= 24; seed++ {
		groups := seed%3 == 0
		tr := tracegen.Generate(seed, longGapOptions(seed, groups))
		versions := queue.Versions
		if groups {
			versions = []queue.Version{queue.V1_37}
		}
		for _, v := range versions {
			if d := stepsAlike(tr, v); d != "" {
				t.Errorf("seed %d (pod groups %t), %s: counting re-checks at once %s", seed, groups, v, d)
			}
		}
	}
}

// TestReplay_JumpToLastInstant: random traces of every version, with gated
// pods, pod groups (v1.37) and pods in flight, then a jump to the clock's
// last instant, replay in well under a second of CPU each: no periodic path
// costs time in proportion to a gap.
func TestReplay_JumpToLastInstant(t *testing.T) {
	for seed := int64(1); seed <= 12; seed++ {
		for _, v := range queue.Versions {
			groups := v >= queue.V1_37 && seed%2 == 0
			o := longGapOptions(seed, groups)
			o.Version = v
			gen := tracegen.Generate(seed, o)
			tr := trace.New(gen.Config, append(gen.Ops(), trace.Op{Kind: trace.OpSnapshot, At: trace.MaxAtMillis}))
			cfg := tr.Config
			cfg.Version = v
			began := testsupport.CPUTime()
			start := time.Now()
			if err := trace.Replay(tr, trace.NewModel(cfg, tr.Plugins()), io.Discard); err != nil {
				t.Fatalf("seed %d, %s: %v", seed, v, err)
			}
			took := testsupport.CPUTime() - began
			if began == 0 {
				took = time.Since(start) // CPU time is not measured here
			}
			if took > time.Second {
				t.Errorf("seed %d (pod groups %t), %s: the replay took %s of CPU", seed, groups, v, took)
			}
		}
	}
}

// TestReplay_GapExamples replays the hand-written traces of gated pods and
// pod groups over long gaps (testdata/upstream-v1.37/gaps; the perf
// module's TestUpstream_GapExamples checks the recordings) on the v1.37
// model, counting re-checks at once and stepping through every flush: both
// must print what upstream v1.37.2's queue printed.
func TestReplay_GapExamples(t *testing.T) {
	traces, _ := filepath.Glob("testdata/upstream-v1.37/gaps/*.trace.jsonl")
	if len(traces) < 7 {
		t.Fatalf("%d gap example traces, want 7 or more", len(traces))
	}
	for _, path := range traces {
		name := strings.TrimSuffix(filepath.Base(path), ".trace.jsonl")
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(strings.TrimSuffix(path, ".trace.jsonl") + ".out.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			tr, err := readFile(t, path)
			if err != nil {
				t.Fatal(err)
			}
			wantUpstream(t, want, tr)
		})
	}
}

// wantUpstream checks that tr prints upstream's output want on the v1.37
// model, replayed both ways (replayBothWays).
func wantUpstream(t *testing.T, want []byte, tr *trace.Trace) {
	t.Helper()
	jumped, stepped, jumpedErr, steppedErr := replayBothWays(tr, queue.V1_37)
	for _, r := range []struct {
		how string
		out []byte
		err error
	}{{"", jumped, jumpedErr}, {"stepping through every flush, ", stepped, steppedErr}} {
		if r.err != nil {
			t.Errorf("%sthe replay fails: %v", r.how, r.err)
		} else if d := trace.Compare(want, r.out); d != "" {
			t.Errorf("%sthe output differs from upstream's: %s", r.how, d)
		}
	}
}
