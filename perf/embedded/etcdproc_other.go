//go:build !linux

package embedded

import "os/exec"

// setParentDeathSignal has no portable equivalent outside Linux; Stop ends
// the process.
func setParentDeathSignal(*exec.Cmd) {}
