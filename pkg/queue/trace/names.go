package trace

import "unsafe"

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

// add appends name and returns it as at will.
func (n *podNames) add(name []byte) string {
	n.data = append(n.data, name...)
	return n.ended()
}

// addString is add for a string.
func (n *podNames) addString(name string) string {
	n.data = append(n.data, name...)
	return n.ended()
}

func (n *podNames) ended() string {
	n.end = append(n.end, uint32(len(n.data)))
	return n.at(int32(len(n.end) - 1))
}

// grow makes room for pods more names of about size bytes each.
func (n *podNames) grow(pods, size int) {
	n.data = append(make([]byte, 0, len(n.data)+pods*size), n.data...)
	n.end = append(make([]uint32, 0, len(n.end)+pods), n.end...)
}
