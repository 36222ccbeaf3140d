package workload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
)

// A workload file names other files (templates, the scheduler
// configuration), and errors about them quote what they hold; a file
// someone else wrote must not make the run read, and show, a file of the
// user's elsewhere. So the files a workload names must lie in its tree: the
// Go module or git repository that holds the workload file (upstream's
// configs name ../templates and ../../templates, inside
// k8s.io/kubernetes), else the workload file's own directory. Links are
// followed only as far as they stay inside. LoadWithin names another tree.

// DefaultRoot is the tree the files a workload file at path names must lie
// in: the nearest directory above it holding go.mod or .git, short of the
// user's home directory and the file system's root, else the file's own
// directory.
func DefaultRoot(path string) string {
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return filepath.Dir(path)
	}
	home, _ := os.UserHomeDir()
	for d := dir; ; {
		parent := filepath.Dir(d)
		if d == parent || home != "" && d == filepath.Clean(home) {
			return dir
		}
		for _, marker := range []string{"go.mod", ".git"} {
			if _, err := os.Lstat(filepath.Join(d, marker)); err == nil {
				return d
			}
		}
		d = parent
	}
}

// OutsideRootError is a file a workload names that lies outside the tree
// its files must be in.
type OutsideRootError struct {
	// Path is the file as resolved; Root the tree.
	Path, Root string
	// Err is os.Root's refusal, for a link that leads outside.
	Err error
}

func (e *OutsideRootError) Error() string {
	how := ""
	if e.Err != nil {
		how = " (through a link)"
	}
	return fmt.Sprintf("%s is outside %s%s, the tree the workload's files must be in (the Go module or git repository holding the workload file, else its directory)", e.Path, e.Root, how)
}

func (e *OutsideRootError) Unwrap() error { return e.Err }

// readWithin reads the file at path, which must lie in f.Root, capped as
// the workload file is.
func (f *File) readWithin(path string) ([]byte, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(f.Root, abs)
	if err != nil || !filepath.IsLocal(rel) {
		return nil, &OutsideRootError{Path: abs, Root: f.Root}
	}
	root, err := os.OpenRoot(f.Root)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	data, err := bound.ReadFileIn(context.Background(), root, rel, MaxFileBytes)
	if escapes(err) {
		return nil, &OutsideRootError{Path: abs, Root: f.Root, Err: err}
	}
	return capErrors(path, data, err)
}

// escapes reports os.Root's refusal of a path that leads outside it, which
// it says only in words.
func escapes(err error) bool {
	var pathErr *os.PathError
	return errors.As(err, &pathErr) && pathErr.Err.Error() == "path escapes from parent"
}
