package trace_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
