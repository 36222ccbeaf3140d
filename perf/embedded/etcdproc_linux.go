package embedded

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal kills etcd if this process dies without stopping it.
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
