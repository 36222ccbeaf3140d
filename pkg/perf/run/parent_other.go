//go:build !linux

package run

import "os/exec"

// setParentDeathSignal: only Linux has a parent-death signal; the pipe
// serves everywhere.
func setParentDeathSignal(*exec.Cmd) {}
