package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// runCompare checks that two release directories (make dist's and
// goreleaser's) hold the same archives: the same names, and in each the same
// entries with the same modes and contents. Archive bytes may differ
// (compression, headers); what users unpack may not.
func runCompare(args []string) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	version := fs.String("version", "", "version both were built at")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 || *version == "" {
		return errors.New("usage: release compare -version V DIR1 DIR2")
	}
	a, b := fs.Arg(0), fs.Arg(1)
	na, err := archivesIn(a, *version)
	if err != nil {
		return err
	}
	nb, err := archivesIn(b, *version)
	if err != nil {
		return err
	}
	if strings.Join(na, " ") != strings.Join(nb, " ") {
		return fmt.Errorf("archive names differ:\n  %s: %v\n  %s: %v", a, na, b, nb)
	}
	if len(na) == 0 {
		return fmt.Errorf("no archives of %s in %s", *version, a)
	}
	var problems []string
	for _, name := range na {
		ea, err := readArchive(filepath.Join(a, name))
		if err != nil {
			return err
		}
		eb, err := readArchive(filepath.Join(b, name))
		if err != nil {
			return err
		}
		if d := diffEntries(ea, eb); d != "" {
			problems = append(problems, fmt.Sprintf("%s: %s", name, d))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s and %s differ:\n  %s", a, b, strings.Join(problems, "\n  "))
	}
	fmt.Printf("%d archives of %s agree (names, entries, modes, contents)\n", len(na), *version)
	return nil
}

func archivesIn(dir, version string) ([]string, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, de := range des {
		n := de.Name()
		if strings.HasPrefix(n, binaryName+"_"+version+"_") && (strings.HasSuffix(n, ".tar.gz") || strings.HasSuffix(n, ".zip")) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names, nil
}

// archiveEntry is what an archive holds for one file.
type archiveEntry struct {
	mode   os.FileMode
	sha256 string
}

func readArchive(path string) (map[string]archiveEntry, error) {
	entries := map[string]archiveEntry{}
	add := func(name string, mode os.FileMode, r io.Reader) error {
		h := sha256.New()
		if _, err := io.Copy(h, r); err != nil {
			return err
		}
		entries[name] = archiveEntry{mode.Perm(), hex.EncodeToString(h.Sum(nil))}
		return nil
	}
	if strings.HasSuffix(path, ".zip") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		for _, f := range zr.File {
			if f.FileInfo().IsDir() {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				return nil, err
			}
			err = add(f.Name, f.Mode(), rc)
			rc.Close()
			if err != nil {
				return nil, err
			}
		}
		return entries, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return entries, nil
		}
		if err != nil {
			return nil, err
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		if err := add(hdr.Name, os.FileMode(hdr.Mode), tr); err != nil {
			return nil, err
		}
	}
}

func diffEntries(a, b map[string]archiveEntry) string {
	var names []string
	for n := range a {
		names = append(names, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var d []string
	for _, n := range names {
		x, okx := a[n]
		y, oky := b[n]
		switch {
		case !okx:
			d = append(d, n+" only in the second")
		case !oky:
			d = append(d, n+" only in the first")
		case x.mode != y.mode:
			d = append(d, fmt.Sprintf("%s mode %v vs %v", n, x.mode, y.mode))
		case x.sha256 != y.sha256:
			d = append(d, n+" contents differ")
		}
	}
	return strings.Join(d, "; ")
}
