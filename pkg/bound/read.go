package bound

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// TooLargeError is a body, file or stream larger than the cap on what is
// read from it.
type TooLargeError struct {
	// What names the source, e.g. "results.json" or "the answer of
	// Prometheus at https://prom:9090/api/v1/query".
	What  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: more than %s, the most that is read from it", e.What, FormatBytes(e.Limit))
}

// Reader reads from R at most Limit bytes and fails with a *TooLargeError
// on the first byte beyond, where io.LimitReader would end silently and
// leave a truncated body to be misread.
type Reader struct {
	R     io.Reader
	Limit int64
	// What names the source in the error.
	What string
	n    int64
}

// NewReader returns a Reader of r capped at limit bytes.
func NewReader(r io.Reader, limit int64, what string) *Reader {
	return &Reader{R: r, Limit: limit, What: what}
}

func (l *Reader) Read(p []byte) (int, error) {
	if l.n > l.Limit {
		return 0, l.tooLarge()
	}
	// Ask for one byte more than is left, to tell "ends at the cap" from
	// "goes on beyond it".
	if room := l.Limit - l.n + 1; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := l.R.Read(p)
	l.n += int64(n)
	if l.n > l.Limit {
		return n - int(l.n-l.Limit), l.tooLarge()
	}
	return n, err
}

func (l *Reader) tooLarge() error { return &TooLargeError{What: l.What, Limit: l.Limit} }

// ReadCloser is a Reader that closes the underlying body.
type ReadCloser struct {
	Reader
	io.Closer
}

// NewReadCloser caps rc (an HTTP response body) at limit bytes.
func NewReadCloser(rc io.ReadCloser, limit int64, what string) *ReadCloser {
	return &ReadCloser{Reader: Reader{R: rc, Limit: limit, What: what}, Closer: rc}
}

// ReadAll reads r to its end, at most limit bytes; beyond, it fails with a
// *TooLargeError naming what. Memory stays within about twice limit.
func ReadAll(r io.Reader, limit int64, what string) ([]byte, error) {
	return io.ReadAll(NewReader(r, limit, what))
}

// ReadAllContext is ReadAll that also ends when ctx does (Ctrl-C): between
// reads for a source that keeps producing (a device, a stream), and, when
// r is an io.Closer (a file, a pipe, a response body), by closing r, so
// that a read that waits for data returns. It then returns ctx's error.
func ReadAllContext(ctx context.Context, r io.Reader, limit int64, what string) ([]byte, error) {
	if ctx.Done() == nil {
		return ReadAll(r, limit, what)
	}
	if c, ok := r.(io.Closer); ok {
		var closed sync.Once
		stop := context.AfterFunc(ctx, func() { closed.Do(func() { _ = c.Close() }) })
		defer stop()
	}
	data, err := io.ReadAll(&ctxReader{ctx: ctx, r: NewReader(r, limit, what)})
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return data, err
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// IsTooLarge reports whether err is a read that reached its cap.
func IsTooLarge(err error) bool {
	var tl *TooLargeError
	return errors.As(err, &tl)
}

// FormatBytes writes n in the largest binary unit that divides it, or
// with one decimal: 64 MiB, 4 KiB, 1.5 GiB, 100 B.
func FormatBytes(n int64) string {
	const unit = 1024
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, i := float64(n), 0
	for v >= unit && i < len(units)-1 {
		v /= unit
		i++
	}
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %s", int64(v), units[i])
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}
