package trace_test

import (
	"bytes"
	"io"
	"sync"
	"testing"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace/tracegen"
)

var largeTraces sync.Map

func largeTrace(b *testing.B, shape string) *trace.Trace {
	if t, ok := largeTraces.Load(shape); ok {
		return t.(*trace.Trace)
	}
	opts, _ := tracegen.Large(shape)
	t := tracegen.Generate(tracegen.LargeSeed, opts)
	largeTraces.Store(shape, t)
	return t
}

// BenchmarkReplay replays the large traces (1,000,000 operations, more than
// 100,000 pods) through the model. perf/difftest compares it with upstream.
func BenchmarkReplay(b *testing.B) {
	for _, shape := range tracegen.LargeShapes {
		b.Run(shape, func(b *testing.B) {
			tr := largeTrace(b, shape)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := trace.Replay(tr, trace.NewModel(tr.Config, tr.Plugins()), io.Discard); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(tr.Len())*float64(b.N)/b.Elapsed().Seconds(), "ops/s")
		})
	}
}

// BenchmarkRead reads the large traces as files hold them.
func BenchmarkRead(b *testing.B) {
	for _, shape := range tracegen.LargeShapes {
		b.Run(shape, func(b *testing.B) {
			var file bytes.Buffer
			if err := tracegen.Encode(&file, largeTrace(b, shape)); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(file.Len()))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := trace.Read(bytes.NewReader(file.Bytes())); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
