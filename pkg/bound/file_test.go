package bound

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

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
		{"one byte over", write("over", limit+1), 0, "over: more than 1000 B, the most that is read from it"},
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

// TestReadFileIn: inside the root as ReadFile; a name or a link that leads
// outside is refused.
func TestReadFileIn(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "root")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"root/in": "in", "secret": "secret"} {
		if err := os.WriteFile(filepath.Join(base, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../secret", filepath.Join(dir, "out-link")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if data, err := ReadFileIn(context.Background(), root, "in", 10); err != nil || string(data) != "in" {
		t.Errorf("ReadFileIn(in) = %q, %v", data, err)
	}
	for _, name := range []string{"../secret", "out-link"} {
		if data, err := ReadFileIn(context.Background(), root, name, 10); err == nil {
			t.Errorf("ReadFileIn(%s) = %q, want it refused", name, data)
		}
	}
	if _, err := ReadFileIn(context.Background(), root, "missing", 10); err == nil || !strings.Contains(err.Error(), "open "+filepath.Join(dir, "missing")) {
		t.Errorf("ReadFileIn(missing) error = %v, want it named by its path", err)
	}
}
