package trace_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace/tracegen"
)

// sequential is what simulate did before it streamed: read the whole trace,
// then replay it with every plugin registered from the start.
func sequential(file []byte) ([]byte, int, error) {
	tr, err := trace.Read(bytes.NewReader(file))
	if err != nil {
		return nil, 0, err
	}
	var out bytes.Buffer
	if err := trace.ReplayAll(tr, trace.NewModel(tr.Config, tr.Plugins()), &out); err != nil {
		return nil, 0, err
	}
	return out.Bytes(), tr.Len(), nil
}

func streamed(file []byte) ([]byte, int, error) {
	var out bytes.Buffer
	n, err := trace.ReadAndReplay(bytes.NewReader(file), func(cfg trace.Config) (trace.StreamDriver, error) {
		return trace.NewModel(cfg, nil), nil
	}, &out)
	return out.Bytes(), n, err
}

// sameAsSequential checks that ReadAndReplay prints what Read and ReplayAll
// print, or fails with the same error and prints nothing.
func sameAsSequential(t *testing.T, name string, file []byte) {
	t.Helper()
	want, wantN, wantErr := sequential(file)
	sameAs(t, name, file, want, wantN, wantErr)
}

// sameAs checks ReadAndReplay against the sequential replay's output or
// error.
func sameAs(t *testing.T, name string, file, want []byte, wantN int, wantErr error) {
	t.Helper()
	got, n, err := streamed(file)
	switch {
	case wantErr != nil:
		if err == nil || err.Error() != wantErr.Error() {
			t.Fatalf("%s: streamed replay's error is %v, want %v", name, err, wantErr)
		}
		if len(got) != 0 || n != 0 {
			t.Fatalf("%s: a failed streamed replay printed %d bytes and reported %d operations", name, len(got), n)
		}
	case err != nil:
		t.Fatalf("%s: streamed replay failed: %v", name, err)
	default:
		if d := trace.Compare(want, got); d != "" || !bytes.Equal(want, got) {
			t.Fatalf("%s: streamed replay differs: %s", name, d)
		}
		if n != wantN {
			t.Fatalf("%s: %d operations reported, want %d", name, n, wantN)
		}
	}
}

// TestReadAndReplay_AsSequential: the examples (valid and invalid) and
// random traces, some naming their plugins only where first used, replay
// the same streamed as read whole, in batches of several sizes.
func TestReadAndReplay_AsSequential(t *testing.T) {
	examples, _ := filepath.Glob("testdata/upstream/*.trace.jsonl")
	invalid, _ := filepath.Glob("testdata/upstream/invalid/*.trace.jsonl")
	if len(examples) == 0 || len(invalid) == 0 {
		t.Fatal("no example traces")
	}
	files := map[string][]byte{}
	for _, p := range append(examples, invalid...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[p] = b
	}
	for seed := range int64(40) {
		opts := tracegen.Options{Ops: 400, PopFromBackoffQ: seed%2 == 0}
		tr := tracegen.Generate(seed, opts)
		var whole, late bytes.Buffer
		if err := tracegen.Encode(&whole, tr); err != nil {
			t.Fatal(err)
		}
		files[fmt.Sprintf("seed %d", seed)] = whole.Bytes()
		// Without the generator's first event, which names the whole pool,
		// each plugin is first named where a fail or event uses it.
		ops := tr.Ops()
		if len(ops) > 0 && ops[0].Kind == trace.OpEvent {
			ops = ops[1:]
		}
		if err := tracegen.Encode(&late, trace.New(tr.Config, ops)); err != nil {
			t.Fatal(err)
		}
		files[fmt.Sprintf("seed %d, plugins named late", seed)] = late.Bytes()
	}
	type result struct {
		out []byte
		n   int
		err error
	}
	want := map[string]result{}
	for name, file := range files {
		out, n, err := sequential(file)
		want[name] = result{out, n, err}
	}
	for _, size := range []int{1, 7, 64, 1 << 14} {
		restore := trace.SetStreamBatch(size)
		for name, file := range files {
			sameAs(t, fmt.Sprintf("%s (batches of %d)", name, size), file, want[name].out, want[name].n, want[name].err)
		}
		restore()
	}
}

// TestReadAndReplay_ReaderErrorFirst: a line the reader rejects is reported
// even when the replay failed on an earlier line, as when the whole trace
// is read first.
func TestReadAndReplay_ReaderErrorFirst(t *testing.T) {
	defer trace.SetStreamBatch(1)()
	const header = `{"schedqTrace": 1, "config": {"popFromBackoffQ": true}}` + "\n"
	replayFails := header + `{"at":0,"op":"done","pod":"default/p"}` + "\n"
	for _, tc := range []struct {
		name, file, want string
	}{
		{"replay error alone", replayFails, `:2: done of pod "default/p", which is not in flight`},
		{"reader error after it", replayFails + strings.Repeat(`{"at":1,"op":"pop"}`+"\n", 20) + `{"at":0,"op":"pop"}` + "\n", ":23: at 0 goes backwards"},
		{"empty", "", "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sameAsSequential(t, tc.name, []byte(tc.file))
			_, _, err := streamed([]byte(tc.file))
			if err == nil || !strings.Contains(trace.FileError("t", err).Error(), tc.want) {
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}
