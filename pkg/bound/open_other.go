//go:build !unix

package bound

const openNonblock = 0
