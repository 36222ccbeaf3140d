package trace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// TestLineSplitter_matchesScanner: the splitter gives the lines, numbers and
// error bufio.Scanner with ScanLines gives, whatever the chunk size and
// however the reader hands the bytes over.
func TestLineSplitter_matchesScanner(t *testing.T) {
	long := strings.Repeat("x", splitterBuffer+17)
	boom := errors.New("boom")
	tests := []struct {
		name  string
		input string
		err   error // the reader fails after input
	}{
		{name: "empty", input: ""},
		{name: "one line", input: "a\n"},
		{name: "no final newline", input: "a\nbc"},
		{name: "empty lines and CRLF", input: "\n\na\r\n\r\n b \n\n"},
		{name: "line longer than the buffer", input: "a\n" + long + "\nb\n" + long},
		{name: "reader error mid-line", input: "a\nb\npartial", err: boom},
		{name: "reader error after a newline", input: "a\n", err: boom},
	}
	for _, tc := range tests {
		reader := func() io.Reader {
			r := io.Reader(strings.NewReader(tc.input))
			if tc.err != nil {
				r = io.MultiReader(r, iotest.ErrReader(tc.err))
			}
			return r
		}
		var want []string
		sc := bufio.NewScanner(reader())
		sc.Buffer(make([]byte, 64*1024), maxLineBytes)
		for sc.Scan() {
			want = append(want, fmt.Sprintf("%d:%s", len(want)+1, sc.Bytes()))
		}
		wantErr := sc.Err()
		for _, chunk := range []int{1, 3, readChunk} {
			for _, oneByte := range []bool{false, true} {
				r := reader()
				if oneByte {
					r = iotest.OneByteReader(r)
				}
				sp := newLineSplitter(r)
				var got []string
				var err error
				dst := make([]rawLine, chunk)
				for {
					var n int
					if n, err = sp.chunk(dst); err != nil {
						break
					}
					for _, l := range dst[:n] {
						// Scanner drops a final CR, which the reader trims.
						got = append(got, fmt.Sprintf("%d:%s", l.line, strings.TrimSuffix(string(l.b), "\r")))
					}
				}
				if err == io.EOF {
					err = nil
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s, chunk %d, one byte %v: lines (-want, +got):\n%s", tc.name, chunk, oneByte, diff)
				}
				if !errors.Is(err, wantErr) {
					t.Errorf("%s, chunk %d, one byte %v: error %v, want %v", tc.name, chunk, oneByte, err, wantErr)
				}
			}
		}
	}
}

// TestLineSplitter_tooLong: a line longer than maxLineBytes is
// errLineTooLong once the lines before it are read, as for bufio.Scanner.
func TestLineSplitter_tooLong(t *testing.T) {
	input := "a\nb\n" + strings.Repeat("x", maxLineBytes+1) + "\nc\n"
	sp := newLineSplitter(strings.NewReader(input))
	dst := make([]rawLine, readChunk)
	var lines int
	var err error
	for {
		var n int
		if n, err = sp.chunk(dst); err != nil {
			break
		}
		lines += n
	}
	if lines != 2 || !errors.Is(err, errLineTooLong) {
		t.Errorf("read %d lines, then %v; want 2 lines, then %v", lines, err, errLineTooLong)
	}
}
