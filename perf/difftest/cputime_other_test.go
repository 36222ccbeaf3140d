//go:build !unix

package difftest

import "time"

// cpuTime is not measured here; the CPU metrics read 0.
func cpuTime() time.Duration { return 0 }
