package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/outfile"
)

// Profiles --profile takes, as kubectl's flag of that name does: cpu over
// the whole command, the others as the command ends.
var profileNames = []string{"none", "cpu", "heap", "allocs", "goroutine", "threadcreate", "block", "mutex"}

// profiling is the state of --profile and --profile-output for one command
// line.
type profiling struct {
	name, output string
	cpu          *outfile.File
}

func (p *profiling) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&p.name, "profile", "none", "Name of profile to capture, as kubectl's flag: one of ("+strings.Join(profileNames, "|")+")")
	fs.StringVar(&p.output, "profile-output", "profile.pprof", "Name of the file to write the profile to (replaced whole, never written through a link)")
	// For those tuning the plugin itself; kubectl hides its own from a
	// command's help likewise (kubectl options lists them).
	_ = fs.MarkHidden("profile")
	_ = fs.MarkHidden("profile-output")
}

// start checks the flags and starts a CPU profile.
func (p *profiling) start() error {
	if !slices.Contains(profileNames, p.name) {
		return fmt.Errorf("--profile %q: want one of %s", p.name, strings.Join(profileNames, ", "))
	}
	if p.name == "none" {
		return nil
	}
	if p.output == "" {
		return fmt.Errorf("--profile-output: name a file")
	}
	switch p.name {
	case "cpu":
		f, err := p.create()
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Discard()
			return fmt.Errorf("--profile cpu: %w", err)
		}
		p.cpu = f
	case "block":
		runtime.SetBlockProfileRate(1)
	case "mutex":
		runtime.SetMutexProfileFraction(1)
	}
	return nil
}

func (p *profiling) create() (*outfile.File, error) {
	d, err := outfile.OpenDir(filepath.Dir(p.output))
	if err != nil {
		return nil, fmt.Errorf("--profile-output %s: %w", p.output, err)
	}
	f, err := d.Create(filepath.Base(p.output), 0o644)
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("--profile-output: %w", err)
	}
	return f, nil
}

// stop writes the profile; it is called once the command has ended, on
// success or error.
func (p *profiling) stop() error {
	switch p.name {
	case "none", "":
		return nil
	case "cpu":
		if p.cpu == nil {
			return nil
		}
		pprof.StopCPUProfile()
		f := p.cpu
		p.cpu = nil
		return f.Commit()
	}
	prof := pprof.Lookup(p.name)
	if prof == nil {
		return nil
	}
	if p.name == "heap" {
		runtime.GC() // the heap profile is as of the last collection
	}
	f, err := p.create()
	if err != nil {
		return err
	}
	if err := prof.WriteTo(f, 0); err != nil {
		f.Discard()
		return fmt.Errorf("--profile %s: %w", p.name, err)
	}
	return f.Commit()
}

// The command line's profile, ended by cobra's finalizer: a command's
// PersistentPostRun does not run when it fails, and its profile is wanted
// then too.
var (
	activeProfile   *profiling
	activeProfileMu sync.Mutex
	finalizeOnce    sync.Once
)

// setUpProfiling adds --profile and --profile-output to root.
func setUpProfiling(root *cobra.Command) {
	p := &profiling{}
	p.addFlags(root.PersistentFlags())
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if err := p.start(); err != nil {
			return err
		}
		activeProfileMu.Lock()
		activeProfile = p
		activeProfileMu.Unlock()
		return nil
	}
	finalizeOnce.Do(func() {
		cobra.OnFinalize(func() {
			activeProfileMu.Lock()
			p := activeProfile
			activeProfile = nil
			activeProfileMu.Unlock()
			if p != nil {
				if err := p.stop(); err != nil {
					fmt.Fprintf(os.Stderr, "warning: %v\n", err)
				}
			}
		})
	})
}
