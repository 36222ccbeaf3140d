package trace

import (
	"fmt"
	"slices"
	"testing"
)

// TestPlugins: every name once, sorted, whether few or many.
func TestPlugins(t *testing.T) {
	for _, n := range []int{0, 3, 40} {
		var ops []Op
		want := []string{}
		for i := 0; i < n; i++ {
			p := fmt.Sprintf("P%02d", i)
			want = append(want, p)
			ops = append(ops, Op{Kind: OpFail, Plugins: []string{p, "P00"}, Pending: []string{p}}, Op{Kind: OpEvent, Queue: []string{p}})
		}
		slices.Reverse(ops)
		if got := New(DefaultConfig(), ops).Plugins(); !slices.Equal(got, want) || got == nil {
			t.Errorf("%d plugins: got %v, want %v", n, got, want)
		}
	}
}
