package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	binaryName = "kubectl-schedq"
	mainPkg    = "./cmd/kubectl-schedq"
)

// platform is one GOOS/GOARCH pair of the release.
type platform struct{ OS, Arch string }

func (p platform) String() string { return p.OS + "/" + p.Arch }

// defaultPlatforms are the release targets; .goreleaser.yaml and .krew.yaml
// list the same six.
var defaultPlatforms = []platform{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

func parsePlatforms(s string) ([]platform, error) {
	var ps []platform
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		osName, arch, ok := strings.Cut(f, "/")
		if !ok || osName == "" || arch == "" {
			return nil, fmt.Errorf("platform %q: want os/arch", f)
		}
		ps = append(ps, platform{osName, arch})
	}
	if len(ps) == 0 {
		return nil, errors.New("no platforms")
	}
	return ps, nil
}

// exe is the binary's file name on p.
func (p platform) exe() string {
	if p.OS == "windows" {
		return binaryName + ".exe"
	}
	return binaryName
}

// archiveName is kubectl-schedq_<version>_<os>_<arch>.tar.gz (.zip on
// windows), the name goreleaser gives the same archive.
func archiveName(version string, p platform) string {
	ext := ".tar.gz"
	if p.OS == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("%s_%s_%s_%s%s", binaryName, version, p.OS, p.Arch, ext)
}

// entry is one file of an archive.
type entry struct {
	name string // name in the archive (all entries sit at its root)
	src  string // path on disk
	mode int64
}

// archiveEntries lists what goes into p's archive, in archive order: the
// binary, then the files every archive ships (see .goreleaser.yaml).
func archiveEntries(root, bin string, p platform) []entry {
	return []entry{
		{p.exe(), bin, 0o755},
		{"LICENSE", filepath.Join(root, "LICENSE"), 0o644},
		{"README.md", filepath.Join(root, "README.md"), 0o644},
		{"kubectl_complete-schedq", filepath.Join(root, "kubectl_complete-schedq"), 0o755},
		{"kubectl_complete-schedq.cmd", filepath.Join(root, "kubectl_complete-schedq.cmd"), 0o644},
	}
}

// minZipTime is the earliest time a zip header can hold (MS-DOS epoch).
var minZipTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

func runDist(args []string) error {
	fs := flag.NewFlagSet("dist", flag.ContinueOnError)
	root := fs.String("root", ".", "repository root (where go.mod, LICENSE and README.md are)")
	out := fs.String("out", "dist", "output directory; emptied first")
	version := fs.String("version", "", "version for the archive names (vX.Y.Z)")
	ldflags := fs.String("ldflags", "", "go build -ldflags, which must stamp the same version")
	plats := fs.String("platforms", joinPlatforms(defaultPlatforms), "comma-separated os/arch list")
	mtime := fs.Int64("mtime", envInt("SOURCE_DATE_EPOCH"), "modification time of every archive entry, unix seconds (default $SOURCE_DATE_EPOCH)")
	parallel := fs.Int("parallel", 2, "builds run at once")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *version == "" {
		return errors.New("-version is required")
	}
	if !strings.Contains(*ldflags, *version) {
		return fmt.Errorf("-ldflags %q does not stamp version %q", *ldflags, *version)
	}
	ps, err := parsePlatforms(*plats)
	if err != nil {
		return err
	}
	absRoot, err := filepath.Abs(*root)
	if err != nil {
		return err
	}
	mt := time.Unix(*mtime, 0).UTC()
	if mt.Before(minZipTime) {
		mt = minZipTime
	}

	if err := os.RemoveAll(*out); err != nil {
		return err
	}
	buildDir := filepath.Join(*out, "build")
	if err := os.MkdirAll(buildDir, 0o755); err != nil {
		return err
	}

	start := time.Now()
	bins, err := buildAll(absRoot, buildDir, *ldflags, ps, *parallel)
	if err != nil {
		return err
	}
	buildTime := time.Since(start)

	var names []string
	for i, p := range ps {
		name := archiveName(*version, p)
		if err := writeArchive(filepath.Join(*out, name), archiveEntries(absRoot, bins[i], p), mt); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		names = append(names, name)
	}
	if err := writeChecksums(*out, names); err != nil {
		return err
	}
	if err := smokeTest(ps, bins, *version); err != nil {
		return err
	}

	fmt.Printf("%-45s %10s %10s\n", "archive", "binary", "archive")
	for i, name := range names {
		bi, err := os.Stat(bins[i])
		if err != nil {
			return err
		}
		ai, err := os.Stat(filepath.Join(*out, name))
		if err != nil {
			return err
		}
		fmt.Printf("%-45s %10s %10s\n", name, mb(bi.Size()), mb(ai.Size()))
	}
	fmt.Printf("built %d platforms in %s, packed in %s; %s\n",
		len(ps), buildTime.Round(time.Second), (time.Since(start) - buildTime).Round(100*time.Millisecond),
		filepath.Join(*out, "checksums.txt"))
	return nil
}

func joinPlatforms(ps []platform) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

func envInt(name string) int64 {
	n, _ := strconv.ParseInt(os.Getenv(name), 10, 64)
	return n
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// buildAll cross-compiles the plugin for every platform, returning the
// binaries' paths in platform order.
func buildAll(root, buildDir, ldflags string, ps []platform, parallel int) ([]string, error) {
	if parallel < 1 {
		parallel = 1
	}
	bins := make([]string, len(ps))
	errs := make([]error, len(ps))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, p := range ps {
		bins[i], _ = filepath.Abs(filepath.Join(buildDir, p.OS+"_"+p.Arch, p.exe()))
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			t := time.Now()
			cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", bins[i], mainPkg)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch)
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = os.Stderr, &stderr
			if err := cmd.Run(); err != nil {
				errs[i] = fmt.Errorf("go build for %s: %v\n%s", p, err, stderr.String())
				return
			}
			fmt.Fprintf(os.Stderr, "built %s in %s\n", p, time.Since(t).Round(100*time.Millisecond))
		}()
	}
	wg.Wait()
	return bins, errors.Join(errs...)
}

// writeArchive packs entries into path: a .zip for names ending in .zip, a
// .tar.gz otherwise. The bytes depend only on the entries' contents, modes
// and mt: no owners, no host times, fixed order.
func writeArchive(path string, entries []entry, mt time.Time) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if strings.HasSuffix(path, ".zip") {
		err = writeZip(f, entries, mt)
	} else {
		err = writeTarGz(f, entries, mt)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func writeTarGz(w io.Writer, entries []entry, mt time.Time) error {
	gz, err := gzip.NewWriterLevel(w, gzip.DefaultCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		data, err := os.ReadFile(e.src)
		if err != nil {
			return err
		}
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     e.name,
			Mode:     e.mode,
			Size:     int64(len(data)),
			ModTime:  mt,
			Format:   tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeZip(w io.Writer, entries []entry, mt time.Time) error {
	zw := zip.NewWriter(w)
	for _, e := range entries {
		data, err := os.ReadFile(e.src)
		if err != nil {
			return err
		}
		hdr := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: mt}
		hdr.SetMode(os.FileMode(e.mode))
		fw, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if _, err := fw.Write(data); err != nil {
			return err
		}
	}
	return zw.Close()
}

// writeChecksums writes dir/checksums.txt in sha256sum's format, the one
// goreleaser writes too.
func writeChecksums(dir string, names []string) error {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	var b strings.Builder
	for _, name := range sorted {
		sum, err := sha256File(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, name)
	}
	return os.WriteFile(filepath.Join(dir, "checksums.txt"), []byte(b.String()), 0o644)
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// smokeTest runs the host platform's binary, if it was built, and checks
// that `version` prints the stamped version.
func smokeTest(ps []platform, bins []string, version string) error {
	for i, p := range ps {
		if p.OS != runtime.GOOS || p.Arch != runtime.GOARCH {
			continue
		}
		out, err := exec.Command(bins[i], "version").CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s version: %v\n%s", bins[i], err, out)
		}
		if !strings.Contains(string(out), " "+version+" ") {
			return fmt.Errorf("%s version printed %q, want version %s", bins[i], strings.TrimSpace(string(out)), version)
		}
	}
	return nil
}
