package runner

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime/pprof"
	"strings"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/outfile"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// ProfileName is the file a startCollectingProfile's filePath becomes in
// Options.ProfileDir: a plain name, its directories joined with "_", so
// that a workload file cannot name a place outside the results
// ("../x" and "/home/u/x" become "x" and "home_u_x").
func ProfileName(filePath string) string {
	var parts []string
	for _, p := range strings.FieldsFunc(filepath.ToSlash(filePath), func(r rune) bool { return r == '/' }) {
		if p != "." && p != ".." {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return "cpu.pprof"
	}
	return strings.Join(parts, "_")
}

// startProfile is upstream's runStartCollectingProfileOp: a CPU profile of
// this process into Options.ProfileDir (upstream's -data-items-dir), named
// by ProfileName. Upstream's scheduler runs in its test process; where the
// scheduler runs elsewhere the profile is the runner's own, and a warning
// says so.
func (e *executor) startProfile(op *workload.StartCollectingProfile) (string, error) {
	if e.profile != nil {
		return "", errors.New("a CPU profile is being collected already (stopCollectingProfile ends it)")
	}
	if e.opts.ProfileDir == "" {
		return "", errors.New("no directory for the CPU profile")
	}
	dir, err := outfile.OpenDir(e.opts.ProfileDir)
	if err != nil {
		return "", fmt.Errorf("the directory for the CPU profile: %w", err)
	}
	name := ProfileName(op.FilePath)
	f, err := dir.Create(name, 0o644)
	if err != nil {
		dir.Close()
		return "", fmt.Errorf("create the CPU profile file: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Discard()
		dir.Close()
		return "", fmt.Errorf("start the CPU profile: %w", err)
	}
	e.profile, e.profileDir = f, dir
	e.profileName = name
	if !e.cluster.InProcess {
		e.warnf("%s: the scheduler does not run in this process: %s profiles the runner only", op.Pos(), name)
	}
	return "CPU profile into " + name, nil
}

// stopProfile is upstream's runStopCollectingProfileOp.
func (e *executor) stopProfile() (string, error) {
	if e.profile == nil {
		return "", errors.New("no CPU profile is being collected (startCollectingProfile must come first)")
	}
	pprof.StopCPUProfile()
	err := e.profile.Commit()
	e.profileDir.Close()
	e.profile, e.profileDir = nil, nil
	if err != nil {
		return "", fmt.Errorf("write the CPU profile file: %w", err)
	}
	e.result.Profiles = append(e.result.Profiles, e.profileName)
	return "CPU profile in " + e.profileName, nil
}
