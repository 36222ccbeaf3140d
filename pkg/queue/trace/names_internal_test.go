package trace

import (
	"fmt"
	"testing"
)

// TestNameIndex: names added one by one (the index growing from its
// smallest size, an empty name among them) are found at their indices, as
// bytes and as strings; names never added are not; and a copy of podNames
// taken early still reads its names after the original grew.
func TestNameIndex(t *testing.T) {
	var names podNames
	x := newNameIndex(0)
	var early podNames
	const n = 5000
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprintf("ns-%d/pod-%d", i%7, i)
		if i == 100 {
			want[i] = ""
		}
		if _, ok := x.find(&names, []byte(want[i])); ok {
			t.Fatalf("%q found before it was added", want[i])
		}
		if id := x.add(&names, []byte(want[i])); id != int32(i) {
			t.Fatalf("add(%q) = %d, want %d", want[i], id, i)
		}
		if i == 10 {
			early = names
		}
	}
	for i, w := range want {
		if id, ok := x.find(&names, []byte(w)); !ok || id != int32(i) {
			t.Errorf("find(%q) = %d, %v, want %d", w, id, ok, i)
		}
		if id, ok := x.findString(&names, w); !ok || id != int32(i) {
			t.Errorf("findString(%q) = %d, %v, want %d", w, id, ok, i)
		}
		if got := names.at(int32(i)); got != w {
			t.Errorf("at(%d) = %q, want %q", i, got, w)
		}
	}
	for _, absent := range []string{"ns-0/pod-1", "ns-1/pod-", "ns-1/pod-10", "x"} {
		if id, ok := x.findString(&names, absent); ok {
			t.Errorf("findString(%q) = %d, want absent", absent, id)
		}
	}
	if early.len() != 11 || early.at(10) != want[10] || early.at(3) != want[3] {
		t.Errorf("the early copy holds %d names, name 10 %q, want 11 and %q", early.len(), early.at(10), want[10])
	}
}
