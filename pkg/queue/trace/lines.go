package trace

import (
	"bytes"
	"errors"
	"io"
)

// rawLine is a line of a trace as read: its bytes without the newline and
// its number, from 1.
type rawLine struct {
	b    []byte
	line int
}

// lineSplitter splits a reader into lines as bufio.Scanner with ScanLines
// does (a final line without a newline is a line; so is the rest of the
// input when the reader fails), but a chunk of lines at a time, each of them
// valid until the next chunk: the reader parses a chunk's lines first and
// then looks their pods up together, so that the name index's cache misses
// overlap rather than come one after another.
type lineSplitter struct {
	r          io.Reader
	buf        []byte
	start, end int
	line       int
	err        error // the reader's; io.EOF at its end
}

// The splitter's first buffer, and the longest line it takes (then
// errLineTooLong): bufio.Scanner's limit as the reader set it.
const (
	splitterBuffer = 256 << 10
	maxLineBytes   = 16 << 20
)

var errLineTooLong = errors.New("line too long")

func newLineSplitter(r io.Reader) *lineSplitter {
	return &lineSplitter{r: r, buf: make([]byte, splitterBuffer)}
}

// chunk fills dst with the next lines, as many as are buffered (at least
// one, reading if none is); the lines of the previous chunk are then no
// longer valid. With no line left it returns 0 and io.EOF, or the reader's
// error, or errLineTooLong for a line longer than maxLineBytes.
func (s *lineSplitter) chunk(dst []rawLine) (int, error) {
	n := 0
	for n < len(dst) {
		if i := bytes.IndexByte(s.buf[s.start:s.end], '\n'); i >= 0 {
			s.line++
			dst[n] = rawLine{b: s.buf[s.start : s.start+i], line: s.line}
			n++
			s.start += i + 1
			continue
		}
		if n > 0 {
			// Read no further while the chunk's lines are in the buffer.
			return n, nil
		}
		if s.err != nil {
			if s.start < s.end {
				s.line++
				dst[0] = rawLine{b: s.buf[s.start:s.end], line: s.line}
				s.start = s.end
				return 1, nil
			}
			return 0, s.err
		}
		if err := s.fill(); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// fill reads more after the unfinished line, making room first.
func (s *lineSplitter) fill() error {
	if s.start > 0 {
		s.end = copy(s.buf, s.buf[s.start:s.end])
		s.start = 0
	}
	if s.end == len(s.buf) {
		if len(s.buf) >= maxLineBytes {
			return errLineTooLong
		}
		buf := make([]byte, min(2*len(s.buf), maxLineBytes))
		s.end = copy(buf, s.buf[:s.end])
		s.buf = buf
	}
	// As bufio.Scanner, give up on a reader that returns nothing again and
	// again.
	for range 100 {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.err = err
			return nil
		}
		if n > 0 {
			return nil
		}
	}
	s.err = io.ErrNoProgress
	return nil
}
