package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary plays the parent (which starts a workload's process with
// StartChild and then waits to be killed) and the workload's process (which
// watches its parent, ignoring SIGTERM so that only the pipe can tell it,
// and writes why its context ended).
const (
	roleEnv   = "SCHEDQ_RUN_TEST_ROLE"
	markerEnv = "SCHEDQ_RUN_TEST_MARKER"
)

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "parent":
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), roleEnv+"=child")
		setProcessGroup(child)
		if _, err := StartChild(child); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println(child.Process.Pid)
		time.Sleep(time.Hour)
	case "child":
		signal.Ignore(syscall.SIGTERM)
		ctx, stop, _ := watchParent(context.Background())
		defer stop()
		<-ctx.Done()
		// Written beside it and renamed: the test polls for the marker
		// and, between WriteFile's create and its write, read it empty.
		marker := os.Getenv(markerEnv)
		_ = os.WriteFile(marker+".tmp", []byte(context.Cause(ctx).Error()), 0o600)
		_ = os.Rename(marker+".tmp", marker)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestStartChild_parentKilled: a parent killed with SIGKILL, which can
// forward nothing, still ends its workload's process: the pipe reads
// end-of-file and the child's context ends with errParentGone at once.
func TestStartChild_parentKilled(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "marker")
	parent := exec.Command(os.Args[0])
	parent.Env = append(os.Environ(), roleEnv+"=parent", markerEnv+"="+marker)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	var childPID int
	if _, err := fmt.Fscan(out, &childPID); err != nil {
		_ = parent.Process.Kill()
		t.Fatalf("the parent did not start its child: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Kill(childPID, syscall.SIGKILL) })
	// The child is running and waiting on its parent.
	time.Sleep(200 * time.Millisecond)
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the child ended while its parent lives: %v", err)
	}
	killed := time.Now()
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	for time.Since(killed) < 5*time.Second {
		if data, err := os.ReadFile(marker); err == nil {
			if took := time.Since(killed); took > 2*time.Second {
				t.Errorf("the child saw its parent gone %v after SIGKILL", took)
			}
			if !strings.Contains(string(data), errParentGone.Error()) {
				t.Errorf("the child's context ended with %q, want %q", data, errParentGone)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the child did not notice within 5s that its parent was killed")
}
