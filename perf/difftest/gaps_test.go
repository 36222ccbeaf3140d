package difftest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace/tracegen"
)

// longGapProfile is a mix for the leftover flush's periodic re-checks of
// gated pods (v1.37): half the adds gated, gaps of up to four hours (mostly
// not whole flush periods) between operations of every kind, so that pods
// are ungated, fail, join gated pod groups and come and go around gaps in
// which each gated entity is re-checked many times; with groups, pod groups
// (GenericWorkload). The config is drawn as usual: leftover durations of
// 0, 5, 30, 60, 400 s and more besides the default 300 s.
func longGapProfile(seed int64, pfb, groups bool) tracegen.Options {
	return tracegen.Options{Ops: 100 + int(seed%3)*50, PopFromBackoffQ: pfb, Gated: 0.5, PodGroups: groups,
		Time: &tracegen.Time{Small: 40, Medium: 20, Large: 10, Leftover: 10, Long: 10}}
}

// longGapRecording is the file in pkg/queue/trace/testdata/upstream-random
// that holds upstream's output for the long-gap traces.
const longGapRecording = "v1.37.2-long-gaps.jsonl.gz"

// TestDifferential_LongGaps replays random traces with long gaps and many
// gated pods and pod groups (longGapProfile) through the model and upstream
// (SCHEDQ_DIFF_LONG_GAP_TRACES per gate and pod-group setting, default 16,
// 4 with -short; from seed SCHEDQ_DIFF_SEED, default 1). The model counts
// the re-checks of a gap at once where upstream runs every flush of it,
// which makes these traces cost upstream a few hundred milliseconds each.
//
// SCHEDQ_RECORD_RANDOM=DIR also writes upstream's outputs to
// DIR/v1.37.2-long-gaps.jsonl.gz, the recording the root module's
// TestReplay_RecordedLongGaps replays without upstream.
func TestDifferential_LongGaps(t *testing.T) {
	if UpstreamVersion < queue.V1_37 {
		t.Skipf("upstream %s does not re-check gated pods at the leftover flush", UpstreamVersion)
	}
	n := envInt(t, "SCHEDQ_DIFF_LONG_GAP_TRACES", 16)
	if testing.Short() && os.Getenv("SCHEDQ_DIFF_LONG_GAP_TRACES") == "" {
		n = 4
	}
	base := int64(envInt(t, "SCHEDQ_DIFF_SEED", 1))
	var rec *json.Encoder
	if dir := os.Getenv("SCHEDQ_RECORD_RANDOM"); dir != "" {
		rec = json.NewEncoder(createRecording(t, filepath.Join(dir, longGapRecording)))
	}
	for _, groups := range []bool{false, true} {
		for _, pfb := range []bool{true, false} {
			t.Run(fmt.Sprintf("podGroups=%t/popFromBackoffQ=%t", groups, pfb), func(t *testing.T) {
				failures, rechecks := 0, 0
				for seed := base; seed < base+int64(n) && failures < 3; seed++ {
					o := longGapProfile(seed, pfb, groups)
					o.Version = UpstreamVersion
					tr := tracegen.Generate(seed, o)
					want, err := replayModel(tr)
					if err != nil {
						t.Fatalf("seed %d: the generator made a trace the model rejects: %v", seed, err)
					}
					got, errs, err := replayUpstream(tr)
					if err != nil || len(errs) > 0 {
						t.Fatalf("seed %d: upstream: %v %q", seed, err, errs)
					}
					if bytes.Contains(got, []byte(`"UnschedulableTimeout"`)) {
						rechecks++
					}
					if rec != nil {
						var b bytes.Buffer
						if err := tracegen.Encode(&b, tr); err != nil {
							t.Fatal(err)
						}
						out := string(got)
						if err := rec.Encode(BatchRecord{Seed: seed, PopFromBackoffQ: pfb, Trace: b.String(), Out: &out}); err != nil {
							t.Fatal(err)
						}
					}
					if d := trace.Compare(got, want); d != "" {
						failures++
						path := writeTrace(t, fmt.Sprintf("schedq-diff-long-gaps-seed%d-groups%t-pfb%t-", seed, groups, pfb), tr)
						t.Errorf("seed %d (pod groups %t, popFromBackoffQ=%t, %d ops; trace in %s): model vs upstream, %s", seed, groups, pfb, tr.Len(), path, d)
					}
				}
				if rechecks == 0 {
					t.Errorf("no trace of %d shows a leftover flush", n)
				}
			})
		}
	}
}

// gapExamples holds hand-written traces of gated pods and pod groups over
// long gaps with upstream's output; pkg/queue/trace/testdata/upstream-v1.37/gaps
// holds the same files for the model's test.
const gapExamples = upstreamExamples + "gaps/"

// modelGapExamples is the copy the model's test reads, in the root module.
const modelGapExamples = "../../pkg/queue/trace/testdata/upstream-v1.37/gaps/"

// gapFragments: what each gap example must keep showing.
var gapFragments = map[string][]string{
	// 5 gated pods, re-checked every 330 s: 261 times each in a day.
	"gated_pods_a_day": {`"UnschedulableTimeout":60,`, `"UnschedulableTimeout":1305,`},
	// podMaxInUnschedulablePodsSeconds 45: each pod picked every 60 s, a
	// from 60 s, b from 90 s; u flushed once.
	"leftover_not_whole_periods": {`"UnschedulableTimeout":119,`, `"UnschedulableTimeout":5759,`, `"active":{"UnschedulableTimeout":1,`},
	// a ungated 1 ms before a flush instant (10 picks), b at one (22: the
	// flush runs first), c after 109, d added after a gap (196).
	"ungate_around_gaps": {`"UnschedulableTimeout":54,`, `"UnschedulableTimeout":337,`, `"TargetPodUpdatePodSchedulingGatesEliminated":3`},
	// x in flight across a gap of re-checks goes to backoff; y, popped and
	// failed between two, to unschedulable.
	"flush_timestamp_and_in_flight": {`"UnschedulableTimeout":30,`, `"default/x":{"queue":"backoff"`, `"default/y":{"queue":"unschedulable"`},
	// A gated group of 4 and a pod (151 picks each by 50000 s); a member
	// joining the gated group; the group ungated after another day.
	"gated_group_long_gap": {`"UnschedulableTimeout":755,`, `"UnschedulableTimeout":2357,`, `"TargetPodUpdatePodSchedulingGatesEliminated":5`},
	// A failed group backing off for 2000 s when a gated member joins: with
	// PopFromBackoffQ it is gated at once and every pick re-checks it; without,
	// it waits in errorBackoff and is gated when its backoff ends.
	"gated_group_backing_off_pfb_on":  {`"UnschedulableTimeout":6,`, `"UnschedulableTimeout":522,`},
	"gated_group_backing_off_pfb_off": {`"default/h":{"queue":"errorBackoff","attempts":1,"size":2}`, `"BackoffComplete":2,"UnschedulableTimeout":512}`},
}

// TestUpstream_GapExamples: the upstream driver prints what upstream's
// queue printed for each gap example when it was recorded, and the example
// still shows its rule. SCHEDQ_RECORD=1 records the outputs anew (into both
// copies of the examples).
func TestUpstream_GapExamples(t *testing.T) {
	recordedExamples(t, exampleSet{dir: gapExamples, modelDir: modelGapExamples, fragments: gapFragments})
}
