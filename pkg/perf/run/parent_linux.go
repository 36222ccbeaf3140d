package run

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal asks the kernel for SIGTERM in the child when the
// thread that starts it exits (prctl PR_SET_PDEATHSIG).
func setParentDeathSignal(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
}
