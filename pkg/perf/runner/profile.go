package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// startProfile is upstream's runStartCollectingProfileOp: a CPU profile of
// this process into FilePath, relative to Options.ProfileDir. Upstream's
// scheduler runs in its test process; where the scheduler runs elsewhere
// the profile is the runner's own, and a warning says so.
func (e *executor) startProfile(op *workload.StartCollectingProfile) (string, error) {
	if e.profile != nil {
		return "", errors.New("a CPU profile is being collected already (stopCollectingProfile ends it)")
	}
	path := op.FilePath
	if e.opts.ProfileDir != "" && !filepath.IsAbs(path) {
		path = filepath.Join(e.opts.ProfileDir, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return "", fmt.Errorf("create the directory for the CPU profile: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return "", fmt.Errorf("create the CPU profile file: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return "", errors.Join(fmt.Errorf("start the CPU profile: %w", err), f.Close())
	}
	e.profile = f
	if !e.cluster.InProcess {
		e.warnf("%s: the scheduler does not run in this process: %s profiles the runner only", op.Pos(), path)
	}
	return "CPU profile into " + path, nil
}

// stopProfile is upstream's runStopCollectingProfileOp.
func (e *executor) stopProfile() (string, error) {
	if e.profile == nil {
		return "", errors.New("no CPU profile is being collected (startCollectingProfile must come first)")
	}
	pprof.StopCPUProfile()
	name := e.profile.Name()
	err := e.profile.Close()
	e.profile = nil
	if err != nil {
		return "", fmt.Errorf("close the CPU profile file: %w", err)
	}
	return "CPU profile in " + name, nil
}
