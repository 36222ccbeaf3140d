package workload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoad_capped loads what is not a workload file: a device that never
// ends, a file larger than the cap, a directory. Each is an error that names
// the path, with no more than the cap read.
func TestLoad_capped(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.yaml")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: a gigabyte that takes no disk.
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, tc := range []struct {
		name, path, want string
	}{
		{"a device", "/dev/zero", "/dev/zero is a character device, not a regular file: give a scheduler_perf workload file"},
		{"a huge file", huge, huge + ": more than 16 MiB"},
		{"a directory", dir, dir + " is a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := os.Stat(tc.path); err != nil {
				t.Skip(err)
			}
			_, err := Load(tc.path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load(%s) = %v, want %q", tc.path, err, tc.want)
			}
		})
	}
}
