//go:build !unix

package difftest

import (
	"os"
	"time"
)

// cpuTime is not measured here; the CPU metrics read 0.
func cpuTime() time.Duration { return 0 }

// maxRSS is not measured here; the RSS metrics are left out.
func maxRSS(*os.ProcessState) int64 { return 0 }
