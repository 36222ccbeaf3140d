package outfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWrite_links: whatever a name in the directory is beforehand, a link
// to a file, to a directory, dangling, or a name that climbs out, nothing
// outside the directory changes, and a write replaces the link itself.
func TestWrite_links(t *testing.T) {
	type setup struct {
		dir, outside string // the output directory, and a directory beside it
	}
	const secret = "the secret, unchanged\n"
	for _, tc := range []struct {
		name string
		// prepare makes the output directory's entry for "f" (or more).
		prepare func(t *testing.T, s setup)
		// file is the name written; write is WriteFile, writeNew WriteNew.
		file     string
		writeNew bool
		wantErr  string
	}{
		{name: "a new file", file: "f"},
		{name: "an existing file", file: "f", prepare: func(t *testing.T, s setup) { mustWrite(t, filepath.Join(s.dir, "f"), "old") }},
		{name: "a link to a file outside", file: "f", prepare: func(t *testing.T, s setup) {
			mustLink(t, filepath.Join(s.outside, "secret"), filepath.Join(s.dir, "f"))
		}},
		{name: "a relative link to a file outside", file: "f", prepare: func(t *testing.T, s setup) {
			mustLink(t, "../outside/secret", filepath.Join(s.dir, "f"))
		}},
		{name: "a link to a directory outside", file: "f", prepare: func(t *testing.T, s setup) {
			mustLink(t, s.outside, filepath.Join(s.dir, "f"))
		}},
		{name: "a dangling link", file: "f", prepare: func(t *testing.T, s setup) {
			mustLink(t, filepath.Join(s.outside, "created-through-the-link"), filepath.Join(s.dir, "f"))
		}},
		{name: "a directory", file: "f", wantErr: "f", prepare: func(t *testing.T, s setup) {
			if err := os.Mkdir(filepath.Join(s.dir, "f"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a name that climbs out", file: "../outside/secret", wantErr: `"../outside/secret" is not a plain file name`},
		{name: "a name with a directory", file: "sub/f", wantErr: `"sub/f" is not a plain file name`},
		{name: "dot-dot", file: "..", wantErr: `".." is not a plain file name`},
		{name: "an absolute name", file: "/tmp/f", wantErr: `"/tmp/f" is not a plain file name`},
		{name: "new: a new file", file: "f", writeNew: true},
		{name: "new: an existing file", file: "f", writeNew: true, wantErr: "exists already", prepare: func(t *testing.T, s setup) {
			mustWrite(t, filepath.Join(s.dir, "f"), "old")
		}},
		{name: "new: a link to a file outside", file: "f", writeNew: true, wantErr: "exists already", prepare: func(t *testing.T, s setup) {
			mustLink(t, filepath.Join(s.outside, "secret"), filepath.Join(s.dir, "f"))
		}},
		{name: "new: a dangling link", file: "f", writeNew: true, wantErr: "exists already", prepare: func(t *testing.T, s setup) {
			mustLink(t, filepath.Join(s.outside, "created-through-the-link"), filepath.Join(s.dir, "f"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			s := setup{dir: filepath.Join(base, "out"), outside: filepath.Join(base, "outside")}
			for _, d := range []string{s.dir, s.outside} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			mustWrite(t, filepath.Join(s.outside, "secret"), secret)
			if tc.prepare != nil {
				tc.prepare(t, s)
			}
			d, err := OpenDir(s.dir)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if tc.writeNew {
				err = d.WriteNew(tc.file, []byte("new"), 0o600)
			} else {
				err = d.WriteFile(tc.file, []byte("new"), 0o644)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error = %v, want one containing %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatalf("error = %v", err)
			} else {
				fi, err := os.Lstat(filepath.Join(s.dir, tc.file))
				if err != nil || !fi.Mode().IsRegular() {
					t.Fatalf("%s after the write: %v, %v; want a regular file", tc.file, fi, err)
				}
				if got := mustRead(t, filepath.Join(s.dir, tc.file)); got != "new" {
					t.Errorf("%s = %q, want %q", tc.file, got, "new")
				}
			}
			// Outside: unchanged, nothing created.
			if got := mustRead(t, filepath.Join(s.outside, "secret")); got != secret {
				t.Errorf("the file outside now reads %q", got)
			}
			entries, _ := os.ReadDir(s.outside)
			if len(entries) != 1 {
				t.Errorf("outside holds %v, want only secret", entries)
			}
			// No temporary file left behind.
			entries, _ = os.ReadDir(s.dir)
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".") {
					t.Errorf("left behind: %s", e.Name())
				}
			}
		})
	}
}

// TestOpenDir: a directory named for output must be a directory, not a
// link to one; one that does not exist is made.
func TestOpenDir(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	mustLink(t, real, filepath.Join(base, "link"))
	mustLink(t, filepath.Join(base, "nowhere"), filepath.Join(base, "dangling"))
	mustWrite(t, filepath.Join(base, "file"), "x")
	if err := os.Mkdir(filepath.Join(base, "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, wantErr string
	}{
		{"a directory", filepath.Join(base, "other"), ""},
		{"a new directory", filepath.Join(base, "new", "deeper"), ""},
		{"a link to a directory", filepath.Join(base, "link"), "link is a symbolic link (to " + real + "): name the directory itself"},
		{"a dangling link", filepath.Join(base, "dangling"), "dangling is a symbolic link"},
		{"a file", filepath.Join(base, "file"), "not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := OpenDir(tc.path)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				defer d.Close()
				if err := d.WriteFile("f", []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("OpenDir() error = %v, want one containing %q", err, tc.wantErr)
			}
			if entries, _ := os.ReadDir(real); len(entries) != 0 {
				t.Errorf("the link's target holds %v", entries)
			}
			if _, err := os.Lstat(filepath.Join(base, "nowhere")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the dangling link's target was made: %v", err)
			}
		})
	}
}

// TestStage_Publish: staged files replace the directory's (links too,
// never their targets), and the stage is gone afterwards.
func TestStage_Publish(t *testing.T) {
	base := t.TempDir()
	out, outside := filepath.Join(base, "out"), filepath.Join(base, "outside")
	for _, d := range []string{out, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(t, filepath.Join(outside, "secret"), "secret")
	mustLink(t, filepath.Join(outside, "secret"), filepath.Join(out, "report.html"))
	mustWrite(t, filepath.Join(out, "kept"), "kept")
	d, err := OpenDir(out)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s, err := d.Stage()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"report.html", "results.json", "a.json"} {
		if err := s.WriteFile(name, []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Publish("results.json"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"report.html": "report.html", "results.json": "results.json", "a.json": "a.json", "kept": "kept"} {
		if got := mustRead(t, filepath.Join(out, name)); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if got := mustRead(t, filepath.Join(outside, "secret")); got != "secret" {
		t.Errorf("the link's target now reads %q", got)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 4 {
		t.Errorf("out holds %v, want the 4 files only", entries)
	}
}

// TestWriteFile_path: the one-path form writes in the file's directory as
// named, links among its parents included, and never through a link at the
// file itself.
func TestWriteFile_path(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	mustLink(t, real, filepath.Join(base, "via"))
	if err := WriteFile(filepath.Join(base, "via", "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, filepath.Join(real, "f")); got != "x" {
		t.Errorf("f = %q", got)
	}
	mustWrite(t, filepath.Join(base, "secret"), "secret")
	mustLink(t, filepath.Join(base, "secret"), filepath.Join(real, "kubeconfig"))
	if err := WriteNew(filepath.Join(real, "kubeconfig"), []byte("token"), 0o600); err == nil {
		t.Error("WriteNew wrote over a link")
	}
	if got := mustRead(t, filepath.Join(base, "secret")); got != "secret" {
		t.Errorf("the link's target now reads %q", got)
	}
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustLink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCreateNew: a file written as it goes (a log) is created only where
// nothing is, not even a link, and stays writable after the directory's
// root is closed.
func TestCreateNew(t *testing.T) {
	dir := t.TempDir()
	f, err := CreateNew(filepath.Join(dir, "log"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"one\n", "two\n"} {
		if _, err := f.WriteString(line); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, filepath.Join(dir, "log")); got != "one\ntwo\n" {
		t.Errorf("log = %q", got)
	}
	if _, err := CreateNew(filepath.Join(dir, "log"), 0o600); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("CreateNew over a file: err = %v, want exists already", err)
	}
	mustWrite(t, filepath.Join(dir, "secret"), "secret")
	mustLink(t, filepath.Join(dir, "secret"), filepath.Join(dir, "link"))
	if _, err := CreateNew(filepath.Join(dir, "link"), 0o600); err == nil {
		t.Error("CreateNew opened a link")
	}
	if got := mustRead(t, filepath.Join(dir, "secret")); got != "secret" {
		t.Errorf("the link's target now reads %q", got)
	}
}
