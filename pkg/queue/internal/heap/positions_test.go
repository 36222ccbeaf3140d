package heap

import "testing"

// TestPositions_holders: two heaps on one table see only their own items,
// the table says which holds an ID, and a second holder taking an ID panics
// rather than overwrite the first one's position.
func TestPositions_holders(t *testing.T) {
	var pos Positions
	a := New[int](ByExpiry, nil, &pos, 0)
	b := New[int](ByExpiry, nil, &pos, 3)
	for id := int32(0); id < 100; id++ {
		h := a
		if id%2 == 1 {
			h = b
		}
		h.AddOrUpdate(id, KeyOf(Instant{Sec: int64(100 - id)}, Instant{}, 0), int(id))
	}
	for id := int32(0); id < 100; id++ {
		want := Tag(0)
		if id%2 == 1 {
			want = 3
		}
		if tag, ok := pos.Holder(id); !ok || tag != want {
			t.Fatalf("Holder(%d) = %d, %v, want %d", id, tag, ok, want)
		}
		if a.Has(id) != (want == 0) || b.Has(id) != (want == 3) {
			t.Fatalf("id %d: a.Has %v, b.Has %v", id, a.Has(id), b.Has(id))
		}
	}
	if b.Delete(0) {
		t.Fatal("b deleted a's item 0")
	}
	if v, ok := a.Pop(); !ok || v != 98 {
		t.Fatalf("a.Pop() = %d, want 98 (earliest expiry)", v)
	}
	if _, ok := pos.Holder(98); ok {
		t.Fatal("a popped 98 but the table still has a holder for it")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("b took a's item 2 without a panic")
		}
	}()
	b.AddOrUpdate(2, Key{}, 2)
}
