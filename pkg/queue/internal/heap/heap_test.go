package heap

import (
	"math/rand"
	"slices"
	"testing"
)

type item struct {
	id  int32
	val int
}

// TestHeap_againstSort: random adds, updates and deletes, then pops come out
// sorted, and membership is exact throughout.
func TestHeap_againstSort(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	h := New[*item](ByExpiry, nil, &Positions{}, 1)
	live := map[int32]int{}
	for n := 0; n < 5000; n++ {
		id := int32(r.Intn(300))
		switch r.Intn(3) {
		case 0, 1:
			v := r.Intn(1000)
			h.AddOrUpdate(id, KeyOf(Instant{Sec: int64(v)}, Instant{}, 0), &item{id, v})
			live[id] = v
		case 2:
			_, had := live[id]
			if got := h.Delete(id); got != had {
				t.Fatalf("Delete(%d) = %v, want %v", id, got, had)
			}
			delete(live, id)
		}
		if h.Len() != len(live) {
			t.Fatalf("Len %d, want %d", h.Len(), len(live))
		}
	}
	var want []int
	for id, v := range live {
		if !h.Has(id) {
			t.Fatalf("Has(%d) = false", id)
		}
		want = append(want, v)
	}
	slices.Sort(want)
	for i, w := range want {
		got, ok := h.Pop()
		if !ok || got.val != w {
			t.Fatalf("pop %d = %v, want %d", i, got, w)
		}
	}
	if _, ok := h.Pop(); ok {
		t.Fatal("pop from an empty heap")
	}
}
