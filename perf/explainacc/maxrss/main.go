// Command maxrss runs a command and writes to OUT its wall time in
// nanoseconds, its peak resident set size in bytes (getrusage's ru_maxrss of
// the child) and its CPU time (user and system) in nanoseconds, as
// "NANOSECONDS BYTES CPU_NANOSECONDS". It exists because a
// child that a large process starts directly reports that process's RSS:
// Go starts children with vfork, sharing the parent's memory until exec,
// and Linux carries that memory's high-water mark into the child's
// ru_maxrss. Started from this small program, the child's figure is its own.
//
//	maxrss OUT COMMAND [ARG...]
package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: maxrss OUT COMMAND [ARG...]")
		os.Exit(2)
	}
	c := exec.Command(os.Args[2], os.Args[3:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := c.Run()
	d := time.Since(start)
	if c.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "maxrss:", err)
		os.Exit(1)
	}
	var rss int64
	if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss << 10 // Linux gives kilobytes
	}
	cpu := c.ProcessState.UserTime() + c.ProcessState.SystemTime()
	if werr := os.WriteFile(os.Args[1], []byte(fmt.Sprintf("%d %d %d\n", d.Nanoseconds(), rss, cpu.Nanoseconds())), 0o644); werr != nil {
		fmt.Fprintln(os.Stderr, "maxrss:", werr)
		os.Exit(1)
	}
	if err != nil {
		os.Exit(c.ProcessState.ExitCode())
	}
}
