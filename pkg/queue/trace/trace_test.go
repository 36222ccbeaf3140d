package trace_test

import (
	"bytes"
	"errors"
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
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := trace.Read(f)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	err = trace.Replay(tr, trace.NewModel(tr.Config, tr.Plugins()), &out)
	return out.Bytes(), err
}

// TestReplay_UpstreamExamples replays traces whose expected output was
// recorded from upstream's PriorityQueue (k8s.io/kubernetes v1.36.3).
func TestReplay_UpstreamExamples(t *testing.T) {
	traces, _ := filepath.Glob("testdata/upstream/*.trace.jsonl")
	if len(traces) == 0 {
		t.Fatal("no example traces")
	}
	for _, path := range traces {
		name := strings.TrimSuffix(filepath.Base(path), ".trace.jsonl")
		t.Run(name, func(t *testing.T) {
			got, err := replayFile(t, path)
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
