//go:build unix

package cmd

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
)

// actAsPluginEnv makes the test binary run the plugin's command line
// (TestMain).
const actAsPluginEnv = "SCHEDQ_TEST_ACT_AS_PLUGIN"

// TestPerfRun_oneSignalIsOneInterrupt runs perf run as a real process, in
// a process group of its own as a shell starts it, against an API server
// slow to answer, and interrupts it while its workload process connects:
// SIGTERM to the process and then to its group (coreutils' timeout, CI
// runners) and SIGINT to the group (a terminal's Ctrl-C) are each one
// interrupt: the run stops and cleans up, never "interrupted again".
func TestPerfRun_oneSignalIsOneInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the plugin as a process")
	}
	kubeconfig := kubeconfigFor(t, testsupport.StalledTLSServer(t).URL)
	for _, tc := range []struct {
		name string
		send func(pid int) error
	}{
		{"SIGTERM to the process, then to its group (timeout)", func(pid int) error {
			if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
				return err
			}
			time.Sleep(20 * time.Millisecond)
			if err := syscall.Kill(-pid, syscall.SIGTERM); !errors.Is(err, syscall.ESRCH) { // ESRCH: it has finished already
				return err
			}
			return nil
		}},
		{"SIGINT to the group (Ctrl-C in a terminal)", func(pid int) error { return syscall.Kill(-pid, syscall.SIGINT) }},
		{"SIGTERM to the group", func(pid int) error { return syscall.Kill(-pid, syscall.SIGTERM) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			c := exec.Command(os.Args[0], "perf", "run", "backoff-drain", "--workload", "4Nodes_40Blocked",
				"--cluster", "kubeconfig", "--allow-existing-cluster", "--kubeconfig", kubeconfig, "--out", out)
			c.Env = append(os.Environ(), actAsPluginEnv+"=1")
			c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			stderr := &testsupport.TailBuffer{Max: 1 << 20}
			c.Stdout, c.Stderr = stderr, stderr
			// The workload's process, in a group of its own, may outlive a
			// failed test: Wait must not wait on its output.
			c.WaitDelay = 2 * time.Second
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- c.Wait() }()
			exited := false
			defer func() {
				if !exited {
					_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
					<-done
				}
			}()
			testsupport.Eventually(t, 30*time.Second, 50*time.Millisecond, func() string {
				if strings.Contains(stderr.String(), "connecting to the kubeconfig's cluster") {
					return ""
				}
				return "the workload's process did not start connecting:\n" + stderr.String()
			})
			time.Sleep(300 * time.Millisecond) // in its first call to the slow server
			if err := tc.send(c.Process.Pid); err != nil {
				t.Fatal(err)
			}
			var err error
			select {
			case err = <-done:
				exited = true
			case <-time.After(20 * time.Second):
				t.Fatalf("still running 20s after one interrupt:\n%s", stderr)
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() == 0 {
				t.Errorf("exit %v, want a failure", err)
			}
			msg := stderr.String()
			if strings.Contains(msg, "interrupted again") {
				t.Errorf("one interrupt counted twice:\n%s", msg)
			}
			if !strings.Contains(msg, "error: interrupted") {
				t.Errorf("stderr does not end in the interrupt:\n%s", msg)
			}
		})
	}
}
