package cmd

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// errInterrupted is what a command returns when SIGINT or SIGTERM ended
// what it was doing.
var errInterrupted = errors.New("interrupted")

// interruptible returns ctx, ended by SIGINT or SIGTERM (Ctrl-C, timeout(1),
// a CI runner), and a function that reports whether a signal ended it. Once
// the signals are caught the process no longer dies of them at once: what
// reads ends through ctx, within its read, and the command cleans up and
// says so. A process started with SIGINT ignored (a shell's background
// job) is interruptible too.
func interruptible(ctx context.Context) (context.Context, func() bool, context.CancelFunc) {
	sigCtx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	return sigCtx, func() bool { return sigCtx.Err() != nil && ctx.Err() == nil }, stop
}
