package bound

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

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

// ReadFile reads the regular file at path through ReadAllContext: at most
// limit bytes (more is a *TooLargeError naming path), and given up when ctx
// ends. Anything but a regular file is a *NotRegularError, found before a
// byte is read: a device such as /dev/zero never ends, and a FIFO may never
// answer, so neither is read from (the open does not wait for a FIFO's
// writer). Where a pipe is meant, as standard input for "-", read it with
// ReadAllContext.
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

// readOpened reads f as ReadFile does; path names it.
func readOpened(ctx context.Context, f *os.File, path string, limit int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	if fi.Size() > limit { // known before reading; files of /proc say 0 and are read
		return nil, &TooLargeError{What: path, Limit: limit}
	}
	data, err := readAllContext(ctx, f, limit, path, fi.Size())
	if err != nil && ctx.Err() == nil && !IsTooLarge(err) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, err
}
