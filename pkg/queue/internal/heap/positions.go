package heap

// Tag names one of the (at most four) holders that share a Positions.
type Tag uint8

// Positions is one table of positions by ID for several holders (heaps, and
// whatever else keeps items in a slice) of which at most one holds an ID at
// a time, as a pod is in at most one of the scheduling queue's sub-queues.
// An entry is the position plus one, shifted left by two and tagged with
// its holder in the low two bits; a holder's lookup that finds another's tag
// finds the ID absent. Asking every holder about a pod then reads one word,
// where a table per holder would read one per holder, each in a different
// place in memory.
type Positions struct{ p []int32 }

// Reserve makes room for IDs below n, so that the table grows once rather
// than as IDs arrive.
func (t *Positions) Reserve(n int) {
	if n > len(t.p) {
		t.p = append(t.p, make([]int32, n-len(t.p))...)
	}
}

// Get returns the ID's position with holder tag, or -1.
func (t *Positions) Get(id int32, tag Tag) int {
	if int(id) >= len(t.p) {
		return -1
	}
	v := t.p[id]
	if Tag(v&3) != tag {
		return -1
	}
	return int(v>>2) - 1
}

// Holder returns the tag of the ID's holder, if any.
func (t *Positions) Holder(id int32) (Tag, bool) {
	if int(id) >= len(t.p) || t.p[id] == 0 {
		return 0, false
	}
	return Tag(t.p[id] & 3), true
}

// Claim is what a holder calls before it takes an ID it does not hold: it
// makes room for the ID and panics if another holder has it, which would
// otherwise corrupt the other's positions.
func (t *Positions) Claim(id int32) {
	if n := int(id) + 1; n > len(t.p) {
		t.p = append(t.p, make([]int32, max(n-len(t.p), len(t.p)/2))...)
	}
	if t.p[id] != 0 {
		panic("heap: an ID taken by a second holder of one Positions")
	}
}

// Set records the ID's position i under tag; the ID must have been claimed.
func (t *Positions) Set(id int32, tag Tag, i int) { t.p[id] = int32(i+1)<<2 | int32(tag) }

// Clear records that no holder has the ID.
func (t *Positions) Clear(id int32) { t.p[id] = 0 }
