package trace

import "io"

// ReadJSON reads a trace decoding every line with encoding/json: the
// reference the fast reader is tested against.
func ReadJSON(r io.Reader) (*Trace, error) { return read(r, false) }

// ReadsFast reports whether the fast reader takes line itself rather than
// handing it to encoding/json.
func ReadsFast(line string) bool {
	var lr lineReader
	if !lr.parse([]byte(line)) {
		return false
	}
	tb := newBuilder(DefaultConfig())
	var h uint32
	if lr.has&(1<<fPod) != 0 {
		h = tb.ids.hash(lr.str(lr.vals[fPod]))
	}
	_, ok := tb.fastLine(&lr, h, 1)
	return ok
}

// SetStreamBatch makes ReadAndReplay hand over n operations at a time, until
// the returned function is called.
func SetStreamBatch(n int) (restore func()) {
	old := streamBatch
	streamBatch = n
	return func() { streamBatch = old }
}

// StepFlushes makes replays step through every flush instant of a gap, as
// they did before they jumped over idle ones, until the returned function
// is called.
func StepFlushes() (restore func()) {
	planFlushes = false
	return func() { planFlushes = true }
}
