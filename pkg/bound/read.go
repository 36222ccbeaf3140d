package bound

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// TooLargeError is a body that went past the cap of what is read of it.
type TooLargeError struct {
	// Limit is the cap, in bytes.
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("larger than %s, the most that is read of it", FormatBytes(e.Limit))
}

// NotRegularError is a path that names something other than a regular file
// (a directory, a device such as /dev/zero, a FIFO, a socket) where a file's
// content is read whole.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, describeMode(e.Mode))
}

func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	default:
		return "a special file"
	}
}

// FormatBytes says n in the largest binary unit that divides it
// ("64 MiB", "512 KiB", "100 bytes").
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// readChunk is how much is read between two looks at the context: small
// enough that a source as fast as /dev/zero is stopped within milliseconds.
const readChunk = 256 << 10

// ReadAll reads r to its end and returns what it read. More than limit
// bytes is a *TooLargeError, found on reading byte limit+1: memory stays
// within about twice limit whatever r holds. When ctx ends, ReadAll returns
// context.Cause(ctx) at once: a read that keeps returning data stops at the
// next chunk, and one that blocks (a FIFO or a terminal nobody writes to)
// is abandoned, and ended too where r has SetReadDeadline.
func ReadAll(ctx context.Context, r io.Reader, limit int64) ([]byte, error) {
	return readAll(ctx, r, limit, 0)
}

// ReadFile reads the regular file at path, at most limit bytes (more is a
// *TooLargeError), as ReadAll does: interruptible through ctx. Anything but
// a regular file is a *NotRegularError, found before a byte is read: a
// device such as /dev/zero never ends, and a FIFO may never answer, so
// neither is opened for reading in earnest. Errors name path.
func ReadFile(ctx context.Context, path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpened(ctx, f, path, limit)
}

// ReadFileIn is ReadFile for name inside root: neither name nor a link on
// its way may lead outside root (os.Root's rule).
func ReadFileIn(ctx context.Context, root *os.Root, name string, limit int64) ([]byte, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if pathErr, ok := err.(*os.PathError); ok {
		// Named as the user knows it, not as the call inside the root.
		pathErr.Op, pathErr.Path = "open", filepath.Join(root.Name(), name)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpened(ctx, f, filepath.Join(root.Name(), name), limit)
}

// readOpened reads f, opened without waiting for a FIFO's writer, as
// ReadFile does; path names it.
func readOpened(ctx context.Context, f *os.File, path string, limit int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	if fi.Size() > limit { // known before reading; files of /proc say 0 and are read
		return nil, fmt.Errorf("%s: %w", path, &TooLargeError{Limit: limit})
	}
	data, err := readAll(ctx, f, limit, fi.Size())
	if err != nil && !errors.Is(err, context.Cause(ctx)) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, err
}

// readAll is ReadAll with the size the source says it has (0: unknown), to
// size the buffer once.
func readAll(ctx context.Context, r io.Reader, limit, size int64) ([]byte, error) {
	if ctx.Done() == nil {
		return readChunks(ctx, r, limit, size)
	}
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := readChunks(ctx, r, limit, size)
		done <- result{data, err}
	}()
	select {
	case res := <-done:
		return res.data, res.err
	case <-ctx.Done():
		// A pollable file (a FIFO, a pipe) ends its blocked read now; any
		// other leaves the goroutine until its read returns, which then
		// stops at the context.
		if d, ok := r.(interface{ SetReadDeadline(time.Time) error }); ok {
			_ = d.SetReadDeadline(time.Unix(1, 0))
		}
		return nil, context.Cause(ctx)
	}
}

func readChunks(ctx context.Context, r io.Reader, limit, size int64) ([]byte, error) {
	initial := int64(512)
	if size > 0 {
		initial = size + 1 // the extra byte finds the end without growing
	}
	buf := make([]byte, 0, min(initial, limit+1))
	for {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return nil, &TooLargeError{Limit: limit}
			}
			next := max(2*int64(cap(buf)), 512)
			if next >= limit {
				next = limit + 1 // one allocation at the cap, not one below it and one above
			}
			grown := make([]byte, len(buf), next)
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), len(buf)+readChunk)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, &TooLargeError{Limit: limit}
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
