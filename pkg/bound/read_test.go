package bound

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// zeros reads as /dev/zero does: forever, as fast as asked.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, size int) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, bytes.Repeat([]byte("x"), size), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "zero-link")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	const limit = 1000
	for _, tc := range []struct {
		name    string
		path    string
		wantLen int
		wantErr string
	}{
		{"empty", write("empty", 0), 0, ""},
		{"under the cap", write("small", 999), 999, ""},
		{"at the cap", write("at", limit), limit, ""},
		{"one byte over", write("over", limit+1), 0, "over: larger than 1000 bytes, the most that is read of it"},
		{"a device", "/dev/zero", 0, "/dev/zero is a character device, not a regular file"},
		{"a link to a device", link, 0, "zero-link is a character device, not a regular file"},
		{"a FIFO nobody writes to", fifo, 0, "fifo is a named pipe (FIFO), not a regular file"},
		{"a directory", dir, 0, "is a directory, not a regular file"},
		{"missing", filepath.Join(dir, "missing"), 0, "no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			began := time.Now()
			data, err := ReadFile(ctx, tc.path, limit)
			if took := time.Since(began); took > 2*time.Second {
				t.Errorf("ReadFile took %v", took)
			}
			if tc.wantErr == "" {
				if err != nil || len(data) != tc.wantLen {
					t.Fatalf("ReadFile() = %d bytes, %v; want %d bytes", len(data), err, tc.wantLen)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ReadFile() error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestReadAll_interrupted: a source that never ends and one that never
// answers both give way within 2 s of the context's end.
func TestReadAll_interrupted(t *testing.T) {
	pipe := func() *os.File { // nobody writes to it
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); w.Close() })
		return r
	}
	for _, tc := range []struct {
		name string
		r    io.Reader
	}{
		{"endless", zeros{}},
		{"a pipe nobody writes to", pipe()},
		{"a reader that blocks without deadlines", io.MultiReader(pipe())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			began := time.Now()
			_, err := ReadAll(ctx, tc.r, 1<<50)
			if took := time.Since(began); took > 2*time.Second {
				t.Errorf("ReadAll took %v after the interrupt", took)
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("ReadAll() error = %v, want the context's", err)
			}
		})
	}
}

// TestReadAll_memory: reading past the cap of an endless source allocates
// about twice the cap, never the source.
func TestReadAll_memory(t *testing.T) {
	const limit = 64 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := ReadAll(context.Background(), zeros{}, limit)
	runtime.ReadMemStats(&after)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Limit != limit {
		t.Fatalf("ReadAll() error = %v, want a TooLargeError at %d", err, limit)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 5*limit/2 {
		t.Errorf("ReadAll allocated %d MiB for a cap of %d MiB", got>>20, limit>>20)
	}
	if err.Error() != "larger than 64 MiB, the most that is read of it" {
		t.Errorf("error = %q", err)
	}
}
