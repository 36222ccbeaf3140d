package trace_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace"
)

// FuzzRead: the reader never panics, whatever it accepts replays without
// panicking (Replay may still reject it for the queue's state), and
// ReadAndReplay, in batches of two operations, prints or rejects alike.
func FuzzRead(f *testing.F) {
	addExampleTraces(f)
	f.Add([]byte(`{"schedqTrace":1,"config":{"podMaxBackoffSeconds":0}}` + "\n" + `{"at":0,"op":"add","pod":"a/b","gates":["g"]}`))
	defer trace.SetStreamBatch(2)()
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := trace.Read(bytes.NewReader(data))
		if err != nil {
			if tr != nil {
				t.Fatal("Read returned a trace and an error")
			}
			sameAs(t, "streamed", data, nil, 0, err)
			return
		}
		// Bound the replay: a fuzzed 'at' can span years of flush instants
		// while pods wait.
		if n := tr.Len(); n > 0 && tr.Op(n-1).At > 24*3_600_000 {
			return
		}
		var out bytes.Buffer
		err = trace.ReplayAll(tr, trace.NewModel(tr.Config, tr.Plugins()), &out)
		if err != nil {
			sameAs(t, "streamed", data, nil, 0, err)
			return
		}
		sameAs(t, "streamed", data, out.Bytes(), tr.Len(), nil)
	})
}

// addExampleTraces seeds f with the example traces, valid and invalid.
func addExampleTraces(f *testing.F) {
	paths, _ := filepath.Glob("testdata/upstream/*.trace.jsonl")
	more, _ := filepath.Glob("testdata/upstream/invalid/*.trace.jsonl")
	groups, _ := filepath.Glob("testdata/upstream-v1.37/podgroups/*.trace.jsonl")
	for _, p := range append(append(paths, more...), groups...) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}
