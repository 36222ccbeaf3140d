package trace

import (
	"hash/maphash"
	"unsafe"
)

// podNames are pod names by index, held in one byte array with each name's
// end offset, so that a trace of hundreds of thousands of pods holds no
// pointer per name: the garbage collector, which would visit every name's
// string at each cycle (a replay of either queue paid for it), visits two
// pointer-free arrays. Names are only appended: the bytes of a name never
// change, so that the strings at hands out may point into them, and a copy
// of podNames (a stream's view) stays valid while the original grows.
type podNames struct {
	data []byte
	end  []uint32
}

// len is the number of names.
func (n *podNames) len() int { return len(n.end) }

// at returns name i, without copying it.
func (n *podNames) at(i int32) string {
	start := uint32(0)
	if i > 0 {
		start = n.end[i-1]
	}
	if l := n.end[i] - start; l > 0 {
		return unsafe.String(&n.data[start], l)
	}
	return ""
}

// add appends name.
func (n *podNames) add(name []byte) {
	n.data = append(n.data, name...)
	n.end = append(n.end, uint32(len(n.data)))
}

// grow makes room for pods more names of about size bytes each.
func (n *podNames) grow(pods, size int) {
	n.data = append(make([]byte, 0, len(n.data)+pods*size), n.data...)
	n.end = append(make([]uint32, 0, len(n.end)+pods), n.end...)
}

// nameIndex finds a name's index in a podNames: an open-addressing table
// whose slots hold 32 bits of the name's hash beside its index, so that a
// lookup reads one slot and compares only a name whose hash bits match, and
// growing moves slots without hashing a name again. A Go map of the names
// would hash each name again at each growth, keep a string header per name
// for the collector to visit, and read two or three places per lookup.
type nameIndex struct {
	// slots[i] is hash<<32 | index+1; 0 is empty.
	slots []uint64
	n     int
	seed  maphash.Seed
	// touched keeps touch's reads from being left out.
	touched uint64
}

func newNameIndex(capacity int) nameIndex {
	size := 16
	for size < 2*capacity {
		size *= 2
	}
	return nameIndex{slots: newSlots(size), seed: maphash.MakeSeed()}
}

// newSlots returns an empty table of size slots. Written once now, its
// pages fault in once each; else a lookup's read would map each page to
// the zero page and the first insert there fault again to copy it.
func newSlots(size int) []uint64 {
	slots := make([]uint64, size)
	clear(slots)
	return slots
}

// find returns the index of name in names.
func (x *nameIndex) find(names *podNames, name []byte) (int32, bool) {
	return x.findHashed(names, name, x.hash(name))
}

// hash is the hash of name that findHashed and addHashed take.
func (x *nameIndex) hash(name []byte) uint32 { return uint32(maphash.Bytes(x.seed, name)) }

// touch reads the slot where a lookup of hash h starts, so that the lookups
// of a chunk of lines wait for memory together rather than in turn.
func (x *nameIndex) touch(h uint32) {
	x.touched ^= x.slots[h&uint32(len(x.slots)-1)]
}

// findString is find for a string.
func (x *nameIndex) findString(names *podNames, name string) (int32, bool) {
	return x.findHashed(names, unsafe.Slice(unsafe.StringData(name), len(name)), uint32(maphash.String(x.seed, name)))
}

func (x *nameIndex) findHashed(names *podNames, name []byte, h uint32) (int32, bool) {
	mask := uint32(len(x.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == 0 {
			return 0, false
		}
		if uint32(s>>32) == h {
			if id := int32(uint32(s) - 1); names.at(id) == string(name) {
				return id, true
			}
		}
	}
}

// add appends name, which names does not hold, to names and indexes it.
func (x *nameIndex) add(names *podNames, name []byte) int32 {
	return x.addHashed(names, name, x.hash(name))
}

// addHashed is add for a name whose hash is h.
func (x *nameIndex) addHashed(names *podNames, name []byte, h uint32) int32 {
	id := int32(names.len())
	names.add(name)
	x.insert(h, id)
	return id
}

func (x *nameIndex) insert(h uint32, id int32) {
	if 2*(x.n+1) > len(x.slots) {
		x.grow()
	}
	mask := uint32(len(x.slots) - 1)
	i := h & mask
	for x.slots[i] != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = uint64(h)<<32 | uint64(uint32(id)+1)
	x.n++
}

// grow doubles the table, placing each slot by its stored hash bits.
func (x *nameIndex) grow() {
	old := x.slots
	x.slots = newSlots(max(16, 2*len(old)))
	mask := uint32(len(x.slots) - 1)
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := uint32(s>>32) & mask
		for x.slots[i] != 0 {
			i = (i + 1) & mask
		}
		x.slots[i] = s
	}
}
