package trace_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace"
)

func replayFile(t *testing.T, path string) ([]byte, error) {
	t.Helper()
	return replayFileAt(t, path, 0)
}

// readFile reads a trace file.
func readFile(t *testing.T, path string) (*trace.Trace, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return trace.Read(f)
}

// replayFileAt replays a trace file on the model of version v (zero: the
// default).
func replayFileAt(t *testing.T, path string, v queue.Version) ([]byte, error) {
	t.Helper()
	tr, err := readFile(t, path)
	if err != nil {
		return nil, err
	}
	cfg := tr.Config
	cfg.Version = v
	var out bytes.Buffer
	err = trace.Replay(tr, trace.NewModel(cfg, tr.Plugins()), &out)
	return out.Bytes(), err
}

// TestReplay_UpstreamExamples replays traces whose expected output was
// recorded from upstream's PriorityQueue: testdata/upstream from
// k8s.io/kubernetes v1.36.3, testdata/upstream-v1.37 from v1.37.2. The
// models of v1.34 and v1.35 must print v1.36's output: what changed between
// them (gauges of pods flipping between gated and unschedulable in place,
// PreEnqueue on activation out of backoffQ) no trace operation reaches.
func TestReplay_UpstreamExamples(t *testing.T) {
	for _, tc := range []struct {
		dir      string
		versions []queue.Version
	}{
		{"testdata/upstream", []queue.Version{queue.V1_34, queue.V1_35, queue.V1_36}},
		{"testdata/upstream-v1.37", []queue.Version{queue.V1_37}},
	} {
		traces, _ := filepath.Glob(tc.dir + "/*.trace.jsonl")
		if len(traces) < 11 {
			t.Fatalf("%s: %d example traces, want 11 or more", tc.dir, len(traces))
		}
		for _, v := range tc.versions {
			for _, path := range traces {
				name := strings.TrimSuffix(filepath.Base(path), ".trace.jsonl")
				t.Run(v.String()+"/"+name, func(t *testing.T) {
					got, err := replayFileAt(t, path, v)
					if err != nil {
						t.Fatalf("replay: %v", err)
					}
					want, err := os.ReadFile(strings.TrimSuffix(path, ".trace.jsonl") + ".out.jsonl")
					if err != nil {
						t.Fatal(err)
					}
					if d := trace.Compare(want, got); d != "" {
						t.Errorf("output differs from upstream's: %s", d)
					}
				})
			}
		}
	}
}

// TestReplay_PodGroupExamples replays the pod-group traces (GenericWorkload,
// v1.37) through the model and compares each with the output upstream
// v1.37.2's queue printed (testdata/upstream-v1.37/podgroups; the perf
// module's TestUpstream_PodGroupExamples checks the recordings). It is
// skipped while the model does not queue pod groups.
func TestReplay_PodGroupExamples(t *testing.T) {
	traces, _ := filepath.Glob("testdata/upstream-v1.37/podgroups/*.trace.jsonl")
	if len(traces) < 10 {
		t.Fatalf("%d pod-group example traces, want 10 or more", len(traces))
	}
	cfg := trace.DefaultConfig()
	cfg.GenericWorkload, cfg.Version = true, queue.V1_37
	if _, ok := any(trace.NewModel(cfg, nil)).(trace.GroupDriver); !ok {
		t.Skip("the model does not queue pod groups yet (it is not a trace.GroupDriver): the pod-group examples wait for it")
	}
	for _, path := range traces {
		name := strings.TrimSuffix(filepath.Base(path), ".trace.jsonl")
		t.Run(name, func(t *testing.T) {
			got, err := replayFileAt(t, path, queue.V1_37)
			if err != nil {
				if strings.Contains(err.Error(), "not modelled") {
					t.Skipf("the model does not model this yet: %v", err)
				}
				t.Fatalf("replay: %v", err)
			}
			want, err := os.ReadFile(strings.TrimSuffix(path, ".trace.jsonl") + ".out.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			if d := trace.Compare(want, got); d != "" {
				t.Errorf("output differs from upstream's: %s", d)
			}
		})
	}
}

// TestReplay_DefaultIsCurrentRelease: a trace replays on v1.37 unless told
// otherwise, as a new cluster runs it.
func TestReplay_DefaultIsCurrentRelease(t *testing.T) {
	path := "testdata/upstream-v1.37/gated_pod_flush_timestamp.trace.jsonl"
	def, err := replayFile(t, path)
	if err != nil {
		t.Fatal(err)
	}
	v137, err := replayFileAt(t, path, queue.V1_37)
	if err != nil {
		t.Fatal(err)
	}
	if d := trace.Compare(v137, def); d != "" {
		t.Errorf("default replay differs from v1.37's: %s", d)
	}
	v136, _ := replayFileAt(t, path, queue.V1_36)
	if trace.Compare(v137, v136) == "" {
		t.Error("v1.36 and v1.37 replay the flush-timestamp trace alike; the test cannot tell versions apart")
	}
}

// TestReplay_InvalidExamples: every invalid trace is rejected with an error
// naming the same line as upstream's reference message.
func TestReplay_InvalidExamples(t *testing.T) {
	traces, _ := filepath.Glob("testdata/upstream/invalid/*.trace.jsonl")
	if len(traces) == 0 {
		t.Fatal("no invalid traces")
	}
	for _, path := range traces {
		name := strings.TrimSuffix(filepath.Base(path), ".trace.jsonl")
		t.Run(name, func(t *testing.T) {
			_, err := replayFile(t, path)
			if err == nil {
				t.Fatal("accepted an invalid trace")
			}
			ref, _ := os.ReadFile(strings.TrimSuffix(path, ".trace.jsonl") + ".err")
			wantLine, _, _ := strings.Cut(string(ref), ":")
			var le *trace.LineError
			if !errors.As(err, &le) {
				t.Fatalf("error %v is not a LineError", err)
			}
			if gotLine, _, _ := strings.Cut(err.Error(), ":"); gotLine != wantLine {
				t.Errorf("error %q names another line than %q", err, ref)
			}
			if strings.TrimSpace(string(ref)) != err.Error() {
				t.Logf("message differs from the reference (acceptable): got %q, reference %q", err, strings.TrimSpace(string(ref)))
			}
		})
	}
}

// TestReplay_PodNames: a replay names each pod's object by cutting its
// trace name at the first slash; a name with no slash (which only New
// accepts) is all namespace.
func TestReplay_PodNames(t *testing.T) {
	long := strings.Repeat("n", 300)
	for _, tc := range []struct{ label, name, wantNS, wantName, wantKey string }{
		{"namespace/name", "team-a/p1", "team-a", "p1", "team-a/p1"},
		{"cut at the first slash", "a/b/c", "a", "b/c", "a/b/c"},
		{"300-byte namespace", long + "/p", long, "p", long + "/p"},
		{"no slash", "lonely", "lonely", "", "lonely/"},
	} {
		tr := trace.New(trace.DefaultConfig(), []trace.Op{{Kind: trace.OpAdd, Pod: tc.name}})
		m := trace.NewModel(tr.Config, tr.Plugins())
		if err := trace.Replay(tr, m, io.Discard); err != nil {
			t.Fatalf("%s: %v", tc.label, err)
		}
		loc, pi := m.Queue.Locate(tc.wantKey)
		if pi == nil {
			t.Errorf("%s: the queue holds no %.40q", tc.label, tc.wantKey)
			continue
		}
		if p := pi.Pod; p.Namespace != tc.wantNS || p.Name != tc.wantName || p.UID != tc.name || loc != queue.LocationActive {
			t.Errorf("%s: the queue holds %.40q/%q (UID %.40q) in %s; want %.40q/%q in activeQ", tc.label, p.Namespace, p.Name, p.UID, loc, tc.wantNS, tc.wantName)
		}
	}
}

// recorded is one trace of testdata/upstream-random with what a real
// upstream queue printed for it.
type recorded struct {
	Seed            int64  `json:"seed"`
	PopFromBackoffQ bool   `json:"popFromBackoffQ"`
	Trace           string `json:"trace"`
	Out             string `json:"out"`
}

// readRecorded reads a recording of testdata/upstream-random.
func readRecorded(t *testing.T, path string) []recorded {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []recorded
	dec := json.NewDecoder(zr)
	for {
		var rec recorded
		if err := dec.Decode(&rec); err == io.EOF {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
}

// TestReplay_RecordedRandom replays the random traces recorded from each
// older version's real PriorityQueue (testdata/upstream-random, see its
// README.md) on the model of that version, and checks that the v1.37 model
// is told apart from each by some.
func TestReplay_RecordedRandom(t *testing.T) {
	for _, kubeVersion := range []string{"v1.34.4", "v1.35.4", "v1.36.3"} {
		t.Run(kubeVersion, func(t *testing.T) {
			v, err := queue.ParseVersion(kubeVersion)
			if err != nil {
				t.Fatal(err)
			}
			n, differ37 := 0, 0
			for _, rec := range readRecorded(t, "testdata/upstream-random/"+kubeVersion+".jsonl.gz") {
				n++
				tr, err := trace.Read(strings.NewReader(rec.Trace))
				if err != nil {
					t.Fatalf("seed %d: %v", rec.Seed, err)
				}
				for _, mv := range []queue.Version{v, queue.V1_37} {
					cfg := tr.Config
					cfg.Version = mv
					var out bytes.Buffer
					err := trace.Replay(tr, trace.NewModel(cfg, tr.Plugins()), &out)
					d := trace.Compare([]byte(rec.Out), out.Bytes())
					switch {
					case mv == queue.V1_37:
						if err != nil || d != "" {
							differ37++
						}
					case err != nil:
						t.Errorf("seed %d, popFromBackoffQ=%v, %s: %v", rec.Seed, rec.PopFromBackoffQ, mv, err)
					case d != "":
						t.Errorf("seed %d, popFromBackoffQ=%v, %s: output differs from upstream %s's: %s", rec.Seed, rec.PopFromBackoffQ, mv, kubeVersion, d)
					}
				}
			}
			if n != 400 {
				t.Errorf("%d recorded traces, want 400", n)
			}
			if differ37 == 0 {
				t.Errorf("the v1.37 model prints %s's output for every trace: the recordings cannot tell versions apart", kubeVersion)
			}
			t.Logf("%d traces identical on the %s model; v1.37's differs on %d", n, v, differ37)
		})
	}
}

// TestReplay_RecordedLongGaps replays the random traces of gated pods and
// pod groups over long gaps recorded from upstream v1.37.2's queue
// (testdata/upstream-random/v1.37.2-long-gaps.jsonl.gz, see its README.md)
// on the v1.37 model, which counts each gap's re-checks at once, and again
// stepping through every flush: both must print upstream's output.
func TestReplay_RecordedLongGaps(t *testing.T) {
	recs := readRecorded(t, "testdata/upstream-random/v1.37.2-long-gaps.jsonl.gz")
	if len(recs) != 200 {
		t.Errorf("%d recorded traces, want 200", len(recs))
	}
	groups := 0
	for _, rec := range recs {
		tr, err := trace.Read(strings.NewReader(rec.Trace))
		if err != nil {
			t.Fatalf("seed %d: %v", rec.Seed, err)
		}
		if tr.Config.GenericWorkload {
			groups++
		}
		t.Run(fmt.Sprintf("seed=%d/popFromBackoffQ=%t/podGroups=%t", rec.Seed, rec.PopFromBackoffQ, tr.Config.GenericWorkload), func(t *testing.T) {
			wantUpstream(t, []byte(rec.Out), tr)
		})
	}
	if groups == 0 || groups == len(recs) {
		t.Errorf("%d of %d traces queue pod groups; want some of both", groups, len(recs))
	}
}
