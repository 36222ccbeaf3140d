// Package testsupport holds what the tests of both modules share: a log tail
// for control planes started in tests, a poller, and golden files.
package testsupport

import (
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TailBuffer keeps the last Max bytes written to it, so that a test can show
// a control plane's recent logs when it fails.
type TailBuffer struct {
	Max int

	mu  sync.Mutex
	buf []byte
}

// Write implements io.Writer.
func (b *TailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.Max {
		b.buf = b.buf[len(b.buf)-b.Max:]
	}
	return len(p), nil
}

// String returns what is kept.
func (b *TailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// Eventually calls cond every interval until it returns "" or timeout
// passes, then fails the test with cond's last complaint.
func Eventually(t testing.TB, timeout, interval time.Duration, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		msg := cond()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", timeout, msg)
		}
		time.Sleep(interval)
	}
}

// Golden compares got with the golden file at path, after rewriting the
// file with got when update is set (a test's -update flag).
func Golden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want, +got):\n%s", path, diff)
	}
}
