package embedded

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func TestRemoveStaleDirs(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)

	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skipf("no `true` to get a dead pid: %v", err)
	}
	mk := func(name string, pid int, age time.Duration) string {
		dir := filepath.Join(tmp, tempDirPrefix+name)
		if err := os.MkdirAll(filepath.Join(dir, "etcd"), 0o700); err != nil {
			t.Fatal(err)
		}
		if pid > 0 {
			if err := os.WriteFile(filepath.Join(dir, pidFile), []byte(strconv.Itoa(pid)), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		then := time.Now().Add(-age)
		if err := os.Chtimes(dir, then, then); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	tests := []struct {
		dir  string
		kept bool
	}{
		{mk("dead", dead.Process.Pid, 0), false},
		{mk("alive", os.Getppid(), 0), true},
		{mk("self", os.Getpid(), 0), true},
		{mk("no-pid-new", 0, time.Minute), true},
		{mk("no-pid-old", 0, 2*staleDirAge), false},
	}
	other := filepath.Join(tmp, "not-ours")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}

	removeStaleDirs()

	for _, tc := range tests {
		_, err := os.Stat(tc.dir)
		if kept := err == nil; kept != tc.kept {
			t.Errorf("%s: kept = %v, want %v", filepath.Base(tc.dir), kept, tc.kept)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("removed a directory that is not a control plane's: %v", err)
	}
}
