package difftest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace/tracegen"
)

// A benchCase is one large trace, generated once per process (generating is
// not measured): 1,000,000 operations over more than 100,000 pods, most
// scheduled on their first attempt, some failing (with errors, pending
// plugins and events during flight), a few gated.
type benchCase struct {
	name  string
	opts  tracegen.Options
	trace func() *trace.Trace
}

const benchSeed = tracegen.LargeSeed

func newBenchCase(name string) *benchCase {
	opts, _ := tracegen.Large(name)
	// Valid for the queue it is replayed on: upstreamgen copies this file
	// into the modules of the older versions' queues.
	opts.Version = UpstreamVersion
	c := &benchCase{name: name, opts: opts}
	c.trace = sync.OnceValue(func() *trace.Trace { return tracegen.Generate(benchSeed, c.opts) })
	return c
}

// The shapes are described at tracegen.Large.
var benchCases = []*benchCase{newBenchCase("churn"), newBenchCase("backlog")}

func (c *benchCase) large(b *testing.B) *trace.Trace {
	b.Helper()
	tr := c.trace()
	pods := map[string]bool{}
	for i := range tr.Len() {
		if op := tr.Op(i); op.Kind == trace.OpAdd {
			pods[op.Pod] = true
		}
	}
	if tr.Len() < 1_000_000 || len(pods) < 100_000 {
		b.Fatalf("the %s trace has %d ops and %d pods, want ≥ 1,000,000 and ≥ 100,000", c.name, tr.Len(), len(pods))
	}
	return tr
}

// cost is what one replay took: wall time and the process's CPU time (the
// replay and the garbage collector's work for it).
type cost struct{ wall, cpu time.Duration }

func (c *cost) add(o cost) { c.wall += o.wall; c.cpu += o.cpu }

func measure(f func()) cost {
	runtime.GC()
	start, startCPU := time.Now(), cpuTime()
	f()
	// Collect the replay's garbage now, so that its cost is counted here and
	// not in the next replay.
	runtime.GC()
	return cost{wall: time.Since(start), cpu: cpuTime() - startCPU}
}

func replayModelOnce(b *testing.B, tr *trace.Trace) cost {
	return measure(func() {
		if err := trace.Replay(tr, newModel(tr.Config, tr.Plugins()), io.Discard); err != nil {
			b.Fatal(err)
		}
	})
}

func replayUpstreamOnce(b *testing.B, tr *trace.Trace) cost {
	return measure(func() {
		u, err := NewUpstream(tr.Config, tr.Plugins())
		if err != nil {
			b.Fatal(err)
		}
		defer u.Close()
		if err := trace.Replay(tr, u, io.Discard); err != nil {
			b.Fatal(err)
		}
	})
}

func reportOps(b *testing.B, ops int, c cost) {
	n := float64(ops) * float64(b.N)
	b.ReportMetric(n/c.wall.Seconds(), "ops/s")
	if c.cpu > 0 {
		b.ReportMetric(n/c.cpu.Seconds(), "ops/cpu-s")
	}
}

// BenchmarkReplay_Model replays each large trace through the model.
func BenchmarkReplay_Model(b *testing.B) { benchReplay(b, replayModelOnce) }

// BenchmarkReplay_Upstream replays each large trace through upstream's
// PriorityQueue.
func BenchmarkReplay_Upstream(b *testing.B) { benchReplay(b, replayUpstreamOnce) }

func benchReplay(b *testing.B, replayOnce func(*testing.B, *trace.Trace) cost) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			tr := bc.large(b)
			b.ResetTimer()
			var c cost
			for i := 0; i < b.N; i++ {
				c.add(replayOnce(b, tr))
			}
			reportOps(b, tr.Len(), c)
		})
	}
}

// BenchmarkReplay_ModelVsUpstream replays each large trace through both in
// each iteration and reports how many times faster the model is, by wall
// time and by CPU time (steadier on a busy machine).
func BenchmarkReplay_ModelVsUpstream(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			tr := bc.large(b)
			b.ResetTimer()
			var model, upstream cost
			for i := 0; i < b.N; i++ {
				model.add(replayModelOnce(b, tr))
				upstream.add(replayUpstreamOnce(b, tr))
			}
			n := float64(tr.Len()) * float64(b.N)
			b.ReportMetric(n/model.wall.Seconds(), "model-ops/s")
			b.ReportMetric(n/upstream.wall.Seconds(), "upstream-ops/s")
			b.ReportMetric(upstream.wall.Seconds()/model.wall.Seconds(), "x-faster")
			if model.cpu > 0 {
				b.ReportMetric(n/model.cpu.Seconds(), "model-ops/cpu-s")
				b.ReportMetric(n/upstream.cpu.Seconds(), "upstream-ops/cpu-s")
				b.ReportMetric(upstream.cpu.Seconds()/model.cpu.Seconds(), "x-faster-cpu")
			}
		})
	}
}

// TestDifferential_Large compares the model and upstream on the benchmark's
// traces (1,000,000 operations each). It takes minutes, so it runs only with
// SCHEDQ_DIFF_LARGE=1 (make difftest sets it).
func TestDifferential_Large(t *testing.T) {
	if os.Getenv("SCHEDQ_DIFF_LARGE") != "1" {
		t.Skip("set SCHEDQ_DIFF_LARGE=1 to compare on the 1,000,000-operation traces")
	}
	for _, bc := range benchCases {
		t.Run(bc.name, func(t *testing.T) {
			tr := bc.trace()
			// Snapshots along the way, not only the final one.
			ops := make([]trace.Op, 0, tr.Len()+tr.Len()/100000)
			for i := range tr.Len() {
				op := tr.Op(i)
				ops = append(ops, op)
				if i%100000 == 99999 {
					ops = append(ops, trace.Op{At: op.At, Kind: trace.OpSnapshot})
				}
			}
			with := trace.New(tr.Config, ops)
			want, err := replayModel(with)
			if err != nil {
				t.Fatal(err)
			}
			got, errs, err := replayUpstream(with)
			if err != nil {
				t.Fatal(err)
			}
			if len(errs) > 0 {
				t.Errorf("upstream logged errors: %q", errs[:min(len(errs), 5)])
			}
			if d := trace.Compare(want, got); d != "" {
				t.Errorf("model vs upstream on the %s trace (seed %d), %s", bc.name, benchSeed, d)
			}
			t.Logf("%d ops, %d output lines identical", with.Len(), bytes.Count(want, []byte("\n")))
		})
	}
}

const memPods = 100_000

// heapPerPod adds memPods pods to a fresh driver and reports the growth of
// the in-use heap per pod, after a GC, with the driver still alive.
func heapPerPod(b *testing.B, newDriver func() (trace.Driver, func())) {
	for i := 0; i < b.N; i++ {
		names := make([]string, memPods)
		for j := range names {
			names[j] = fmt.Sprintf("default/pod-%d", j)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		d, done := newDriver()
		for j, n := range names {
			d.SetTime(int64(j))
			d.Add(n, int32(j%7), nil)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if s := d.Snapshot(); s.Pending.Active != memPods {
			b.Fatalf("%d pods active, want %d", s.Pending.Active, memPods)
		}
		runtime.KeepAlive(d)
		done()
		b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/memPods, "heap-B/pod")
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/memPods, "live-B/pod")
	}
}

// BenchmarkMemory_Model: heap per pod queued in the model.
func BenchmarkMemory_Model(b *testing.B) {
	heapPerPod(b, func() (trace.Driver, func()) {
		return newModel(trace.DefaultConfig(), []string{"NodeAffinity"}), func() {}
	})
}

// BenchmarkMemory_Upstream: heap per pod queued in upstream's PriorityQueue.
func BenchmarkMemory_Upstream(b *testing.B) {
	heapPerPod(b, func() (trace.Driver, func()) {
		u, err := NewUpstream(trace.DefaultConfig(), []string{"NodeAffinity"})
		if err != nil {
			b.Fatal(err)
		}
		return u, u.Close
	})
}
