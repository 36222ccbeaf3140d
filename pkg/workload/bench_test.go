package workload_test

import (
	"testing"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// BenchmarkCreatePods_Pod measures what the runner pays per pod: a template
// with actions is rendered and decoded each time, a static one is copied.
func BenchmarkCreatePods_Pod(b *testing.B) {
	f, err := workload.Load(allOps)
	if err != nil {
		b.Fatal(err)
	}
	sel, err := f.Select("AllOps", "small", "")
	if err != nil {
		b.Fatal(err)
	}
	ops := sel[0].Ops
	for _, bc := range []struct {
		name string
		op   *workload.CreatePods
	}{
		{"templated", ops[3].(*workload.CreatePods)},
		{"static", ops[8].(*workload.CreatePods)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := bc.op.Pod(i%1000, 1000); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkLoadSelect(b *testing.B) {
	for b.Loop() {
		f, err := workload.Load("testdata/upstream/volumes/performance-config.yaml")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Select("", "", ""); err != nil {
			b.Fatal(err)
		}
	}
}
