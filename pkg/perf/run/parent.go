package run

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
)

// A workload's process must not outlive the run: killed with SIGKILL, the
// parent cannot forward an interrupt, and an orphan would go on creating
// nodes and pods. Two signs tell the child its parent is gone, and either
// ends the workload as an interrupt does (the provider's cleanup, then its
// temporary files):
//   - a pipe: the parent keeps the write end and never writes; the child
//     reads the other end (parentPipeFD) and sees end-of-file once no
//     process holds the write end, however the parent ended;
//   - on Linux, the parent-death signal (SIGTERM), which the kernel sends
//     when the thread that started the child exits: StartChild keeps that
//     thread until the child has exited, so that it is the process's end.

// parentPipeFD is the descriptor of the pipe's read end in the child: the
// first of exec.Cmd.ExtraFiles.
const parentPipeFD = 3

// errParentGone is the cause of the child's cancellation when its parent
// has gone.
var errParentGone = errors.New("the parent process is gone")

// tempDirPrefix names the run's temporary directory, which holds the specs
// and results of its workloads' processes.
const tempDirPrefix = "schedq-perf-run-"

// StartChild starts cmd with the pipe's read end as parentPipeFD and the
// parent-death signal set, and returns a channel that receives cmd.Wait's
// result. The write end stays open in this process until the child exits.
// A command that hands a run to another binary (schedq-perf) starts it so
// too: that binary then sees SIGTERM when this process is killed.
func StartChild(cmd *exec.Cmd) (<-chan error, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, r)
	setParentDeathSignal(cmd)
	started := make(chan error, 1)
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := cmd.Start()
		r.Close()
		started <- err
		if err != nil {
			w.Close()
			return
		}
		err = cmd.Wait()
		w.Close()
		done <- err
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return done, nil
}

// watchParent returns ctx canceled with errParentGone once the pipe at
// parentPipeFD reads end-of-file, and gone, which reports whether the
// parent has gone: the pipe ended, or this process has another parent now
// (the parent-death signal, a SIGTERM, may come first and end ctx as an
// interrupt). Without such a pipe (the child started by hand) it returns
// ctx as it is.
func watchParent(ctx context.Context) (_ context.Context, stop context.CancelFunc, gone func() bool) {
	ppid := os.Getppid()
	var ended atomic.Bool
	gone = func() bool { return ended.Load() || os.Getppid() != ppid }
	f := os.NewFile(parentPipeFD, "parent pipe")
	if fi, err := f.Stat(); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		return ctx, func() {}, gone
	}
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		_, _ = io.Copy(io.Discard, f)
		ended.Store(true)
		cancel(errParentGone)
	}()
	return ctx, func() { cancel(nil) }, gone
}

// removeRunTempDir removes the run's temporary directory that holds
// specPath, which a parent killed before its cleanup leaves behind.
func removeRunTempDir(specPath string) {
	dir := filepath.Dir(specPath)
	if strings.HasPrefix(filepath.Base(dir), tempDirPrefix) {
		_ = os.RemoveAll(dir)
	}
}
