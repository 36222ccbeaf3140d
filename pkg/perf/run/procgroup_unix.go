//go:build unix

package run

import (
	"os/exec"
	"os/signal"
	"syscall"
)

func setProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// killGroup kills the child and whatever it started (an etcd, a kind
// CLI), which would otherwise hold its output open.
func killGroup(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

func ignoreBrokenPipe() { signal.Ignore(syscall.SIGPIPE) }
