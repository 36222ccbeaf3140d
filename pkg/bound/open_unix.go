//go:build unix

package bound

import "syscall"

// openNonblock opens a FIFO at once rather than when a writer comes; a
// regular file ignores it.
const openNonblock = syscall.O_NONBLOCK
