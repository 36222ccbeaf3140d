//go:build linux

package metricscrape

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFileSource_memory reads an exposition of maxExpositionBytes (about a
// million series, most of them of families a Snapshot does not read) in a
// child process and holds its peak memory. Parsed whole, such a text took
// about 600 MB; as a stream it takes about 60 MB.
func TestFileSource_memory(t *testing.T) {
	if path := os.Getenv("SCHEDQ_MEMORY_CHILD"); path != "" {
		snap, err := (&FileSource{Path: path}).Scrape(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("pending %v\n", snap.PendingTotal())
		return
	}
	if testing.Short() {
		t.Skip("writes and reads 64 MiB")
	}
	path := filepath.Join(t.TempDir(), "big.prom")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	writeBigExposition(t, f, maxExpositionBytes)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFileSource_memory$", "-test.count=1")
	cmd.Env = append(os.Environ(), "SCHEDQ_MEMORY_CHILD="+path)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "pending 14") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("no peak memory on this platform")
	}
	peak := ru.Maxrss << 10 // Linux reports KiB
	const limit = 256 << 20
	t.Logf("peak RSS %d MiB reading %d MiB", peak>>20, maxExpositionBytes>>20)
	if peak > limit {
		t.Errorf("peak RSS %d MiB reading %d MiB, want at most %d MiB", peak>>20, maxExpositionBytes>>20, limit>>20)
	}
}
