package bound

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// zeros is an endless source, like /dev/zero or a server that streams
// without end.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestReadAll(t *testing.T) {
	for _, tc := range []struct {
		name    string
		r       io.Reader
		limit   int64
		wantLen int
		wantErr string
	}{
		{"below the cap", strings.NewReader("abc"), 10, 3, ""},
		{"exactly the cap", strings.NewReader("0123456789"), 10, 10, ""},
		{"one byte beyond", strings.NewReader("0123456789x"), 10, 0, "the source: more than 10 B, the most that is read from it"},
		{"endless", zeros{}, 4 << 10, 0, "the source: more than 4 KiB, the most that is read from it"},
		{"one byte at a time, beyond", iotest.OneByteReader(strings.NewReader("0123456789x")), 10, 0, "more than 10 B"},
		{"empty", strings.NewReader(""), 10, 0, ""},
		{"read error passes", iotest.ErrReader(errors.New("disk on fire")), 10, 0, "disk on fire"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := ReadAll(tc.r, tc.limit, "the source")
			if tc.wantErr == "" {
				if err != nil || len(data) != tc.wantLen {
					t.Fatalf("ReadAll() = %d bytes, %v; want %d bytes", len(data), err, tc.wantLen)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ReadAll() error = %v, want one containing %q", err, tc.wantErr)
			}
			if strings.Contains(tc.wantErr, "more than") != IsTooLarge(err) {
				t.Errorf("IsTooLarge(%v) = %v", err, IsTooLarge(err))
			}
			if int64(len(data)) > tc.limit {
				t.Errorf("ReadAll() returned %d bytes, beyond the cap %d", len(data), tc.limit)
			}
		})
	}
}

// A Reader never hands out a byte beyond its cap, whatever the size of
// the caller's buffer.
func TestReader_neverBeyondTheCap(t *testing.T) {
	r := NewReader(zeros{}, 1000, "x")
	var total int
	buf := make([]byte, 333)
	for {
		n, err := r.Read(buf)
		total += n
		if err != nil {
			if !IsTooLarge(err) {
				t.Fatalf("Read() error = %v, want a TooLargeError", err)
			}
			break
		}
	}
	if total != 1000 {
		t.Fatalf("read %d bytes, want the cap, 1000", total)
	}
	if _, err := r.Read(buf); !IsTooLarge(err) {
		t.Fatalf("a Read after the cap = %v, want the TooLargeError again", err)
	}
}

// ReadAllContext ends when its context does: a source that keeps
// producing, and a read that waits for data that never comes (closed
// under it).
func TestReadAllContext_endsWithItsContext(t *testing.T) {
	stalled, w := io.Pipe()
	defer w.Close()
	for _, tc := range []struct {
		name string
		r    io.Reader
	}{
		{"endless source", zeros{}},
		{"stalled read", stalled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			began := time.Now()
			// The cap is far beyond what 100ms can read, so that the context ends it.
			_, err := ReadAllContext(ctx, tc.r, 1<<40, "the source")
			if took := time.Since(began); took > 2*time.Second {
				t.Errorf("ReadAllContext() took %s after its context ended", took)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("ReadAllContext() = %v, want the context's error", err)
			}
		})
	}
	data, err := ReadAllContext(context.Background(), strings.NewReader("abc"), 10, "x")
	if err != nil || string(data) != "abc" {
		t.Errorf("ReadAllContext() = %q, %v", data, err)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{100: "100 B", 4 << 10: "4 KiB", 64 << 20: "64 MiB", 3 << 29: "1.5 GiB", 1 << 40: "1 TiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
