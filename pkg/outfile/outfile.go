// Package outfile is the one rule for the files kubectl-schedq and
// schedq-perf write: into the directory the user named, never through a
// symbolic link, never outside that directory, and whole or not at all.
//
// A file is written to a temporary file beside it (created exclusively, so
// never through a link) and renamed over its name: a link planted there is
// replaced, never followed, and a reader sees the old content or the new,
// never half. Names are plain file names; every operation goes through an
// os.Root, so nothing resolves outside the directory. A directory named for
// output must not be a symbolic link itself.
package outfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Dir is a directory files are written into.
type Dir struct {
	path string
	root *os.Root
}

// OpenDir opens the directory path for writing files into, making it (and
// its parents) when it does not exist. path itself must be a directory, not
// a symbolic link to one: the files go where the user named, and a link
// there would take them elsewhere.
func OpenDir(path string) (*Dir, error) {
	if err := os.MkdirAll(path, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return openDir(path, false)
}

// CheckDir says, before anything is written, whether OpenDir would refuse
// path: nil when path does not exist yet or is a directory, not a link.
func CheckDir(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return fmt.Errorf("%s is a symbolic link (to %s): name the directory itself, never a link, for files to be written in", path, target)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", path)
	}
	return nil
}

// openDir opens path as a Root; unless followLink, a link as path is
// refused, and so is one swapped in between the check and the open.
func openDir(path string, followLink bool) (*Dir, error) {
	var before fs.FileInfo
	if !followLink {
		if err := CheckDir(path); err != nil {
			return nil, err
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return nil, err
		}
		before = fi
	}
	root, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	if before != nil {
		if now, err := root.Stat("."); err != nil || !os.SameFile(before, now) {
			root.Close()
			return nil, fmt.Errorf("%s changed while it was opened (replaced by a link?)", path)
		}
	}
	return &Dir{path: path, root: root}, nil
}

// Path is the directory as it was named.
func (d *Dir) Path() string { return d.path }

// Close releases the directory.
func (d *Dir) Close() error { return d.root.Close() }

// checkName refuses anything but a plain file name: no separator, no "..",
// not absolute.
func (d *Dir) checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || !filepath.IsLocal(name) {
		return fmt.Errorf("%q is not a plain file name: refusing to write it in %s", name, d.path)
	}
	return nil
}

// File is a file being written: its content goes to a temporary file in
// the same directory until Commit renames it over the file's name.
type File struct {
	*os.File
	dir       *Dir
	name, tmp string
	done      bool
}

// Create starts writing name in d. Nothing appears under name until Commit;
// Discard, or an error, leaves name as it was.
func (d *Dir) Create(name string, perm fs.FileMode) (*File, error) {
	if err := d.checkName(name); err != nil {
		return nil, err
	}
	for range 10 {
		tmp := "." + name + ".tmp-" + randomSuffix()
		// O_EXCL: the temporary name is ours alone, and never a link.
		f, err := d.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(d.path, name), err)
		}
		return &File{File: f, dir: d, name: name, tmp: tmp}, nil
	}
	return nil, fmt.Errorf("%s: no free temporary name beside it", filepath.Join(d.path, name))
}

// Commit closes the file and renames it over its name, replacing whatever
// entry was there (a link included, never its target).
func (f *File) Commit() error {
	if f.done {
		return errors.New(f.Name() + ": committed or discarded already")
	}
	f.done = true
	err := f.File.Close()
	if err == nil {
		err = f.dir.root.Rename(f.tmp, f.name)
	}
	if err != nil {
		_ = f.dir.root.Remove(f.tmp)
		return fmt.Errorf("%s: %w", filepath.Join(f.dir.path, f.name), err)
	}
	return nil
}

// Discard closes the file and removes what was written; after Commit it
// does nothing.
func (f *File) Discard() {
	if f.done {
		return
	}
	f.done = true
	_ = f.File.Close()
	_ = f.dir.root.Remove(f.tmp)
}

// Write writes name in d with what write writes, whole or not at all.
func (d *Dir) Write(name string, perm fs.FileMode, write func(io.Writer) error) error {
	f, err := d.Create(name, perm)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Discard()
		return err
	}
	return f.Commit()
}

// WriteFile writes data to name in d, whole or not at all.
func (d *Dir) WriteFile(name string, data []byte, perm fs.FileMode) error {
	return d.Write(name, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteNew writes data to name in d, which must not exist (not even as a
// link): for a file that is later removed by name, such as a kubeconfig,
// whose name must be the writer's alone.
func (d *Dir) WriteNew(name string, data []byte, perm fs.FileMode) error {
	f, err := d.CreateNew(name, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = d.root.Remove(name)
		return fmt.Errorf("%s: %w", filepath.Join(d.path, name), err)
	}
	return nil
}

// CreateNew creates name in d, which must not exist (not even as a link),
// and opens it for writing as it goes (a log): WriteNew's rule for a file
// that is not written whole. The caller closes it.
func (d *Dir) CreateNew(name string, perm fs.FileMode) (*os.File, error) {
	if err := d.checkName(name); err != nil {
		return nil, err
	}
	f, err := d.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%s exists already: give a path that does not exist", filepath.Join(d.path, name))
	}
	return f, err
}

// Remove removes name from d (a link itself, never its target).
func (d *Dir) Remove(name string) error {
	if err := d.checkName(name); err != nil {
		return err
	}
	return d.root.Remove(name)
}

// WriteFile writes data to the file at path, whole or not at all, as
// Dir.WriteFile does in path's directory. The directory is taken as named,
// links in it included; the file itself is never written through a link.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	d, err := openDir(filepath.Dir(path), true)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.WriteFile(filepath.Base(path), data, perm)
}

// WriteNew writes data to path, which must not exist, as Dir.WriteNew does
// in path's directory.
func WriteNew(path string, data []byte, perm fs.FileMode) error {
	d, err := openDir(filepath.Dir(path), true)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.WriteNew(filepath.Base(path), data, perm)
}

// CreateNew creates path, which must not exist, as Dir.CreateNew does in
// path's directory.
func CreateNew(path string, perm fs.FileMode) (*os.File, error) {
	d, err := openDir(filepath.Dir(path), true)
	if err != nil {
		return nil, err
	}
	// The file stays open after the directory's root is closed.
	defer d.Close()
	return d.CreateNew(filepath.Base(path), perm)
}

// Stage is a fresh directory inside a Dir where a set of files is written
// before Publish moves them into the Dir.
type Stage struct {
	*Dir
	parent *Dir
	name   string
	done   bool
}

// Stage makes a fresh, private directory in d for files to be published
// together.
func (d *Dir) Stage() (*Stage, error) {
	for range 10 {
		name := ".partial-" + randomSuffix()
		err := d.root.Mkdir(name, 0o700)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		root, err := d.root.OpenRoot(name)
		if err != nil {
			_ = d.root.Remove(name)
			return nil, err
		}
		return &Stage{Dir: &Dir{path: filepath.Join(d.path, name), root: root}, parent: d, name: name}, nil
	}
	return nil, fmt.Errorf("%s: no free name for a staging directory", d.path)
}

// Publish moves every file of the stage into its Dir, replacing files of
// the same names (links included, never their targets), the files named in
// last after all others and in that order, then removes the stage.
func (s *Stage) Publish(last ...string) error {
	if s.done {
		return errors.New(s.path + ": published or discarded already")
	}
	defer s.Discard()
	entries, err := fs.ReadDir(s.root.FS(), ".")
	if err != nil {
		return err
	}
	rank := func(name string) int { return slices.Index(last, name) }
	slices.SortStableFunc(entries, func(a, b fs.DirEntry) int { return rank(a.Name()) - rank(b.Name()) })
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if err := s.parent.root.Rename(s.name+"/"+e.Name(), e.Name()); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(s.parent.path, e.Name()), err)
		}
	}
	return nil
}

// Discard removes the stage and what is left in it.
func (s *Stage) Discard() {
	if s.done {
		return
	}
	s.done = true
	_ = s.root.Close()
	_ = s.parent.root.RemoveAll(s.name)
}

// randomSuffix makes a name of the writer's own; a clash is retried.
func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
