package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// runModProxy writes a file:// module proxy serving the working tree's root
// module at one version, so that CI can run the exact command users run,
// `go install <module>/cmd/kubectl-schedq@<version>`, against this checkout:
// outside any workspace, with go.mod's replace directives refused, and the
// version recorded in the binary's build info.
func runModProxy(args []string) error {
	fs := flag.NewFlagSet("modproxy", flag.ContinueOnError)
	root := fs.String("root", ".", "repository root")
	version := fs.String("version", "v0.0.0-check", "version to serve the module at")
	out := fs.String("out", "", "proxy directory (GOPROXY=file://<out>)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("-out is required")
	}
	gomod, err := os.ReadFile(filepath.Join(*root, "go.mod"))
	if err != nil {
		return err
	}
	modPath := modulePath(gomod)
	if modPath == "" {
		return errors.New("go.mod has no module line")
	}
	files, err := moduleFiles(*root)
	if err != nil {
		return err
	}
	dir := filepath.Join(*out, filepath.FromSlash(escapeModPath(modPath)), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	prefix := modPath + "@" + *version + "/"
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(*root, filepath.FromSlash(f)))
		if err != nil {
			return err
		}
		w, err := zw.Create(prefix + f)
		if err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	info, _ := json.Marshal(map[string]string{"Version": *version, "Time": time.Now().UTC().Format(time.RFC3339)})
	for name, data := range map[string][]byte{
		"list":             []byte(*version + "\n"),
		*version + ".info": info,
		*version + ".mod":  gomod,
		*version + ".zip":  zbuf.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("%s@%s: %d files, %s\n", modPath, *version, len(files), mb(int64(zbuf.Len())))
	return nil
}

func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// escapeModPath is the module cache's case encoding: "!" before each
// upper-case letter, lower-cased.
func escapeModPath(p string) string {
	var b strings.Builder
	for _, r := range p {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// moduleFiles lists the files a module zip of the root module holds: those
// git tracks or would track (not ignored), minus nested modules' trees and
// vendor directories, sorted.
func moduleFiles(root string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	all := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	// Directories below the root that hold a go.mod start other modules.
	var nested []string
	for _, f := range all {
		if path.Base(f) == "go.mod" && f != "go.mod" {
			nested = append(nested, path.Dir(f)+"/")
		}
	}
	var files []string
	seen := map[string]bool{}
next:
	for _, f := range all {
		if f == "" || seen[f] {
			continue
		}
		seen[f] = true
		for _, n := range nested {
			if strings.HasPrefix(f, n) {
				continue next
			}
		}
		if strings.HasPrefix(f, "vendor/") || strings.Contains(f, "/vendor/") {
			continue
		}
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) { // deleted, not yet committed
				continue
			}
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		files = append(files, f)
	}
	sort.Strings(files)
	return files, nil
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }
