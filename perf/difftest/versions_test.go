package difftest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace/tracegen"
)

// replayBin is the name of the replay commands that `upstreamgen -older`
// builds, one per version: replayBin + "-v1.34.4" and so on.
const replayBin = "schedq-upstream-replay"

// TestDifferential_Versions compares the model of each older version with
// that version's real queue: every schedq-upstream-replay-<version> in
// SCHEDQ_UPSTREAM_REPLAY_DIR (make upstream-versions builds them, one per
// row of upstreamgen's version table) replays SCHEDQ_DIFF_TRACES random
// traces per gate setting (default 200) from seed SCHEDQ_DIFF_SEED (default
// 1), all in one process (--batch), and the model at that version must print
// the same. The traces are TestDifferential's, generated for that version.
// Skipped without SCHEDQ_UPSTREAM_REPLAY_DIR (make difftest sets it).
//
// SCHEDQ_RECORD_RANDOM=DIR also writes each version's output to
// DIR/<version>.jsonl.gz, as the recordings of
// pkg/queue/trace/testdata/upstream-random are made.
func TestDifferential_Versions(t *testing.T) {
	dir := os.Getenv("SCHEDQ_UPSTREAM_REPLAY_DIR")
	if dir == "" {
		t.Skip("set SCHEDQ_UPSTREAM_REPLAY_DIR to the directory of make upstream-versions' commands (make difftest does)")
	}
	bins, err := filepath.Glob(filepath.Join(dir, replayBin+"-v*"))
	if err != nil || len(bins) == 0 {
		t.Fatalf("SCHEDQ_UPSTREAM_REPLAY_DIR=%s: no %s-<version> there (%v): run make upstream-versions", dir, replayBin, err)
	}
	n := envInt(t, "SCHEDQ_DIFF_TRACES", 200)
	base := int64(envInt(t, "SCHEDQ_DIFF_SEED", 1))
	record := os.Getenv("SCHEDQ_RECORD_RANDOM")
	// outputs are the upstream outputs of each version by trace, to tell
	// how often the versions' queues print differently.
	type key struct {
		seed  int64
		pfb   bool
		trace [sha256.Size]byte
	}
	outputs := map[string]map[key][sha256.Size]byte{}
	for _, bin := range bins {
		kubeVersion := strings.TrimPrefix(filepath.Base(bin), replayBin+"-")
		t.Run(kubeVersion, func(t *testing.T) {
			v, err := queue.ParseVersion(kubeVersion)
			if err != nil {
				t.Fatalf("%s: %v", bin, err)
			}
			var rec io.Writer
			if record != "" {
				rec = createRecording(t, filepath.Join(record, kubeVersion+".jsonl.gz"))
			}
			same, failed := 0, 0
			outs := map[key][sha256.Size]byte{}
			outputs[kubeVersion] = outs
			replayBatch(t, bin, func(emit func(BatchRecord)) {
				for _, pfb := range []bool{true, false} {
					for seed := base; seed < base+int64(n); seed++ {
						o := profile(seed, pfb)
						o.Version = v
						var b bytes.Buffer
						if err := tracegen.Encode(&b, tracegen.Generate(seed, o)); err != nil {
							t.Error(err)
							return
						}
						emit(BatchRecord{Seed: seed, PopFromBackoffQ: pfb, Trace: b.String()})
					}
				}
			}, func(r BatchRecord, line []byte) {
				if r.Out != nil {
					outs[key{r.Seed, r.PopFromBackoffQ, sha256.Sum256([]byte(r.Trace))}] = sha256.Sum256([]byte(*r.Out))
				}
				if rec != nil {
					if _, err := rec.Write(line); err != nil {
						t.Fatal(err)
					}
				}
				if d := versionDisagreement(v, r); d != "" {
					failed++
					if failed <= 10 {
						path := writeTraceText(t, fmt.Sprintf("versions-%s-seed%d-pfb%v-", kubeVersion, r.Seed, r.PopFromBackoffQ), r.Trace)
						t.Errorf("%s, seed %d, popFromBackoffQ=%v: %s\n(trace: %s; upstream: %s --trace %s)", kubeVersion, r.Seed, r.PopFromBackoffQ, d, path, bin, path)
					}
					return
				}
				same++
			})
			if want := 2 * n; same+failed != want {
				t.Errorf("%s replayed %d traces, want %d", bin, same+failed, want)
			}
			t.Logf("%s: %d of %d traces identical (seeds %d–%d, SchedulerPopFromBackoffQ on and off)", kubeVersion, same, same+failed, base, base+int64(n)-1)
		})
	}
	// How far the traces tell the versions' real queues apart: a trace the
	// generator made the same for two versions, printed differently.
	for i := 1; i < len(bins); i++ {
		a := strings.TrimPrefix(filepath.Base(bins[i-1]), replayBin+"-")
		b := strings.TrimPrefix(filepath.Base(bins[i]), replayBin+"-")
		common, differ := 0, 0
		for k, out := range outputs[a] {
			if other, ok := outputs[b][k]; ok {
				common++
				if other != out {
					differ++
				}
			}
		}
		t.Logf("upstream %s and %s: %d of the %d traces both replayed printed differently", a, b, differ, common)
	}
}

// versionDisagreement replays r's trace through the model at v and
// describes how its output differs from r's, the upstream queue's, or
// returns "".
func versionDisagreement(v queue.Version, r BatchRecord) string {
	if r.Error != "" {
		return "upstream: " + r.Error
	}
	if len(r.UpstreamLogged) > 0 {
		return fmt.Sprintf("upstream logged errors: %q", r.UpstreamLogged)
	}
	if r.Out == nil {
		return "no output from upstream"
	}
	tr, err := trace.Read(strings.NewReader(r.Trace))
	if err != nil {
		return "the trace does not read back: " + err.Error()
	}
	cfg := tr.Config
	cfg.Version = v
	var out bytes.Buffer
	if err := trace.Replay(tr, trace.NewModel(cfg, tr.Plugins()), &out); err != nil {
		return "the model rejects the trace: " + err.Error()
	}
	if d := trace.Compare(out.Bytes(), []byte(*r.Out)); d != "" {
		return "model vs upstream, " + d
	}
	return ""
}

// replayBatch runs bin --batch, feeding it the records gen emits while
// handing each output record, and its line, to got as it comes.
func replayBatch(t *testing.T, bin string, gen func(emit func(BatchRecord)), got func(BatchRecord, []byte)) {
	t.Helper()
	cmd := exec.Command(bin, "--batch")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		w := bufio.NewWriter(stdin)
		enc := json.NewEncoder(w)
		gen(func(r BatchRecord) {
			if err := enc.Encode(r); err != nil {
				t.Errorf("writing to %s: %v", bin, err)
			}
		})
		if err := w.Flush(); err != nil {
			t.Errorf("writing to %s: %v", bin, err)
		}
		stdin.Close()
	}()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<28)
	for sc.Scan() {
		var r BatchRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: output line: %v", bin, err)
		}
		got(r, append(sc.Bytes(), '\n'))
	}
	if err := sc.Err(); err != nil {
		t.Errorf("reading %s: %v", bin, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s --batch: %v: %s", bin, err, stderr.String())
	}
}

func writeTraceText(t testing.TB, prefix, text string) string {
	f, err := os.CreateTemp("", prefix+"*.trace.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// createRecording creates a gzip-compressed recording at path, closed when
// t ends.
func createRecording(t *testing.T, path string) io.Writer {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	t.Cleanup(func() {
		if err := zw.Close(); err != nil {
			t.Error(err)
		}
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	})
	return zw
}
