//go:build unix

package difftest

import (
	"os"
	"runtime"
	"syscall"
	"time"
)

// cpuTime is the process's user and system CPU time so far: on a busy
// machine it measures work where wall time also measures waiting. It is
// internal/testsupport.CPUTime, which the modules generated for older
// versions (upstreamgen -older) copy this file into cannot import.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// maxRSS is a finished process's peak resident set, in bytes.
func maxRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	// Linux reports kilobytes; macOS, bytes.
	if runtime.GOOS == "darwin" {
		return ru.Maxrss
	}
	return ru.Maxrss * 1024
}
