package trace

import (
	"errors"
	"fmt"
	"io"
)

// ReplayAll replays t through d and writes the output to w only once the
// whole trace has replayed: a trace found invalid half-way prints nothing.
// The output is held in blocks: unlike a bytes.Buffer, growing never copies
// what is held, and a replay's output can be tens of megabytes.
func ReplayAll(t *Trace, d Driver, w io.Writer) error {
	var out blockBuffer
	if err := Replay(t, d, &out); err != nil {
		return err
	}
	return out.writeTo(w)
}

// FileError names the trace in err: "name:line: problem" for a LineError.
func FileError(name string, err error) error {
	var le *LineError
	if errors.As(err, &le) {
		return fmt.Errorf("%s:%d: %v", name, le.Line, le.Err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

type blockBuffer struct{ blocks [][]byte }

const outputBlock = 1 << 20

func (b *blockBuffer) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		last := len(b.blocks) - 1
		if last < 0 || len(b.blocks[last]) == cap(b.blocks[last]) {
			b.blocks = append(b.blocks, make([]byte, 0, outputBlock))
			last++
		}
		blk := &b.blocks[last]
		c := min(len(p), cap(*blk)-len(*blk))
		*blk = append(*blk, p[:c]...)
		p = p[c:]
	}
	return n, nil
}

func (b *blockBuffer) writeTo(w io.Writer) error {
	for _, blk := range b.blocks {
		if _, err := w.Write(blk); err != nil {
			return err
		}
	}
	return nil
}
