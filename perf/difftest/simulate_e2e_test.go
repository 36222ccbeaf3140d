package difftest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace/tracegen"
)

// The end-to-end comparison runs what a user runs: `kubectl schedq simulate
// --trace FILE`, and schedq-upstream-replay, the same command with upstream's
// PriorityQueue in place of the model (same reader, replay and output), each
// as a process of its own, built here.

// binDir holds the two commands once built; TestMain removes it.
var binDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binaries are the two commands, built once per test process.
var binaries = sync.OnceValues(func() (map[string]string, error) {
	dir, err := os.MkdirTemp("", "schedq-e2e-")
	if err != nil {
		return nil, err
	}
	binDir = dir
	out := map[string]string{
		"model":    filepath.Join(dir, "kubectl-schedq"),
		"upstream": filepath.Join(dir, "schedq-upstream-replay"),
	}
	// The plugin is built in its own module, with the dependencies a user's
	// go install takes, not this module's.
	const plugin = "github.com/kubectl-schedq/kubectl-schedq"
	b, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", plugin).Output()
	if err != nil {
		return nil, &buildError{plugin, b, err}
	}
	pluginDir := strings.TrimSpace(string(b))
	for name, pkg := range map[string]string{
		"model":    plugin + "/cmd/kubectl-schedq",
		"upstream": "github.com/kubectl-schedq/kubectl-schedq/perf/difftest/cmd/schedq-upstream-replay",
	} {
		cmd := exec.Command("go", "build", "-trimpath", "-o", out[name], pkg)
		if name == "model" {
			cmd.Dir, cmd.Env = pluginDir, append(os.Environ(), "GOWORK=off")
		}
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, &buildError{pkg, b, err}
		}
	}
	return out, nil
})

type buildError struct {
	pkg string
	out []byte
	err error
}

func (e *buildError) Error() string {
	return "go build " + e.pkg + ": " + e.err.Error() + "\n" + string(e.out)
}

// run is one process's run: its output and what it cost.
type run struct {
	out    []byte
	wall   time.Duration
	cpu    time.Duration
	maxRSS int64 // bytes; 0 where the system does not say
}

// replayCommand replays tracePath through the model or upstream's queue, as
// a process. It starts the process from a fresh copy of this test binary
// (TestCommandRunner) rather than from this process: Linux counts a
// process's peak RSS from before its exec, when it still shares its
// parent's memory, and this process holds the large traces.
func replayCommand(tb testing.TB, side, tracePath string) run {
	tb.Helper()
	bins, err := binaries()
	if err != nil {
		tb.Fatal(err)
	}
	args := []string{bins[side], "--trace", tracePath}
	if side == "model" {
		args = []string{bins[side], "simulate", "--trace", tracePath, "--scheduler-version", UpstreamVersion.String()}
	}
	dir := tb.TempDir()
	req := runnerRequest{Args: args, Out: filepath.Join(dir, "out"), Result: filepath.Join(dir, "result.json")}
	spec, err := json.Marshal(req)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCommandRunner$", "-test.count=1")
	cmd.Env = append(os.Environ(), "SCHEDQ_E2E_RUNNER="+string(spec))
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("running %q: %v\n%s", args, err, b)
	}
	var res runnerResult
	b, err := os.ReadFile(req.Result)
	if err == nil {
		err = json.Unmarshal(b, &res)
	}
	if err != nil {
		tb.Fatal(err)
	}
	if res.Err != "" {
		tb.Fatalf("%q: %s\n%s", args, res.Err, res.Stderr)
	}
	out, err := os.ReadFile(req.Out)
	if err != nil {
		tb.Fatal(err)
	}
	return run{out: out, wall: res.Wall, cpu: res.CPU, maxRSS: res.MaxRSS}
}

type runnerRequest struct {
	Args        []string
	Out, Result string
}

type runnerResult struct {
	Wall, CPU   time.Duration
	MaxRSS      int64
	Err, Stderr string
}

// TestCommandRunner runs one command for replayCommand: its stdout into a
// file, then what it cost into another.
func TestCommandRunner(t *testing.T) {
	spec := os.Getenv("SCHEDQ_E2E_RUNNER")
	if spec == "" {
		t.Skip("runs a command for replayCommand, in a process of its own")
	}
	var req runnerRequest
	if err := json.Unmarshal([]byte(spec), &req); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(req.Out)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(req.Args[0], req.Args[1:]...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	start := time.Now()
	err = cmd.Run()
	res := runnerResult{Wall: time.Since(start), Stderr: stderr.String()}
	if err != nil {
		res.Err = err.Error()
	}
	if ps := cmd.ProcessState; ps != nil {
		res.CPU, res.MaxRSS = ps.UserTime()+ps.SystemTime(), maxRSS(ps)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(req.Result, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeTrace writes tr to a new temporary file and returns its path.
func writeTrace(t testing.TB, prefix string, tr *trace.Trace) string {
	f, err := os.CreateTemp("", prefix+"*.trace.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := tracegen.Encode(f, tr); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// traceFile writes t as a trace file, removed when tb ends, and returns
// its path and size.
func traceFile(tb testing.TB, t *trace.Trace) (string, int64) {
	path := writeTrace(tb, "e2e-", t)
	tb.Cleanup(func() { os.Remove(path) })
	fi, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return path, fi.Size()
}

// TestSimulate_MatchesUpstreamReplay: the two commands print the same bytes
// for a generated trace with snapshots along the way.
func TestSimulate_MatchesUpstreamReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both commands")
	}
	opts, _ := tracegen.Large("churn")
	opts.Ops = 30_000
	tr := tracegen.Generate(benchSeed, opts)
	ops := tr.Ops()
	for i := 5000; i < len(ops); i += 5000 {
		ops = append(ops[:i:i], append([]trace.Op{{At: ops[i-1].At, Kind: trace.OpSnapshot}}, ops[i:]...)...)
	}
	path, _ := traceFile(t, trace.New(tr.Config, ops))
	model, upstream := replayCommand(t, "model", path), replayCommand(t, "upstream", path)
	if !bytes.Equal(model.out, upstream.out) {
		t.Errorf("simulate and the upstream replay print different output: %s", trace.Compare(upstream.out, model.out))
	}
	if n := bytes.Count(model.out, []byte(`"snapshot"`)); n < 5 {
		t.Errorf("%d snapshot lines, want at least 5", n)
	}
}

// BenchmarkSimulate_EndToEnd runs both commands on each large trace (written
// as a file; 1,000,000 operations) in each iteration, checks that they print
// the same bytes, and reports how many times faster simulate is, by wall and
// by CPU time (user and system, of each process), with each side's trace MB
// read and operations replayed per second of its run, and its peak RSS.
func BenchmarkSimulate_EndToEnd(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			tr := bc.large(b)
			path, size := traceFile(b, tr)
			b.ResetTimer()
			var model, upstream run
			for i := 0; i < b.N; i++ {
				m, u := replayCommand(b, "model", path), replayCommand(b, "upstream", path)
				if i == 0 && !bytes.Equal(m.out, u.out) {
					b.Fatalf("simulate and the upstream replay print different output: %s", trace.Compare(u.out, m.out))
				}
				model.wall, model.cpu, model.maxRSS = model.wall+m.wall, model.cpu+m.cpu, max(model.maxRSS, m.maxRSS)
				upstream.wall, upstream.cpu, upstream.maxRSS = upstream.wall+u.wall, upstream.cpu+u.cpu, max(upstream.maxRSS, u.maxRSS)
			}
			mb, ops := float64(size)/1e6*float64(b.N), float64(tr.Len())*float64(b.N)
			for _, s := range []struct {
				name string
				r    run
			}{{"model", model}, {"upstream", upstream}} {
				b.ReportMetric(mb/s.r.wall.Seconds(), s.name+"-MB/s")
				b.ReportMetric(ops/s.r.wall.Seconds(), s.name+"-ops/s")
				if s.r.cpu > 0 {
					b.ReportMetric(mb/s.r.cpu.Seconds(), s.name+"-MB/cpu-s")
					b.ReportMetric(ops/s.r.cpu.Seconds(), s.name+"-ops/cpu-s")
				}
				if s.r.maxRSS > 0 {
					b.ReportMetric(float64(s.r.maxRSS)/1e6, s.name+"-peak-RSS-MB")
				}
			}
			b.ReportMetric(upstream.wall.Seconds()/model.wall.Seconds(), "x-faster")
			if model.cpu > 0 {
				b.ReportMetric(upstream.cpu.Seconds()/model.cpu.Seconds(), "x-faster-cpu")
			}
		})
	}
}
