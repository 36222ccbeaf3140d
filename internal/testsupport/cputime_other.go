//go:build !unix

package testsupport

import "time"

// CPUTime is not measured here: it reads 0.
func CPUTime() time.Duration { return 0 }
