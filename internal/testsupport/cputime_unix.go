//go:build unix

package testsupport

import (
	"syscall"
	"time"
)

// CPUTime is the process's user and system CPU time so far: on a busy
// machine it measures work where wall time also measures waiting.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
