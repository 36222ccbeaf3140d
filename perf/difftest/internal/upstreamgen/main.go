// Command upstreamgen builds, at test time, a copy of kube-scheduler's
// scheduling queue package (k8s.io/kubernetes/pkg/scheduler/backend/queue, the
// version perf/go.mod requires) plus export.go.txt, which exposes the few
// unexported methods the differential harness needs: the two periodic flushes,
// a would-Pop-block probe and the backoff heap a pod is in.
//
// Upstream's source is read from the module cache and never committed: the
// output directory is gitignored. Run it from anywhere inside the perf module:
//
//	go run ./difftest/internal/upstreamgen            # from perf/
//	go generate ./difftest/                          # the same, via difftest's directive
//
// It rewrites only the files whose content changed, so the build cache stays
// warm.
package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// The non-test files of the package in the version perf/go.mod requires
// (v1.37.2). The generator refuses to run if upstream's package has other
// files, which would mean the required version moved and the export file
// needs a look.
var upstreamFiles = []string{
	"active_queue.go",
	"backoff_queue.go",
	"nominator.go",
	"pod_group_member_pods.go",
	"scheduling_queue.go",
	"testing.go",
	"unschedulable_entities.go",
	"workload_forest.go",
}

const (
	upstreamModule = "k8s.io/kubernetes"
	upstreamPkg    = "pkg/scheduler/backend/queue"
	exportFile     = "zz_export.go"
)

//go:embed export.go.txt
var exportTemplate []byte

func main() {
	out := flag.String("o", "", "output directory (default: difftest/internal/upstreamqueue of the perf module; with -older, out/upstream-versions of the perf module; with -controlplane, out/controlplane-versions)")
	older := flag.Bool("older", false, "generate a Go module per older version instead (see older.go), each with its queue, driver and schedq-upstream-replay")
	bin := flag.String("bin", "", "with -older: build each version's schedq-upstream-replay into this directory as schedq-upstream-replay-<version>")
	only := flag.String("versions", "", "with -older or -controlplane: a comma-separated subset of the versions (default: all of olderVersions, or controlPlaneVersions)")
	controlPlane := flag.Bool("controlplane", false, "generate a Go module per older version of perf/embedded's control plane instead (see controlplane.go), and with -bin build its schedq-controlplane-<version>")
	flag.Parse()
	var err error
	switch {
	case *older && *controlPlane:
		err = fmt.Errorf("-older and -controlplane: one at a time")
	case *controlPlane:
		err = runControlPlane(*out, *bin, *only)
	case *older:
		err = runOlder(*out, *bin, *only)
	default:
		err = run(*out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "upstreamgen:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	if out == "" {
		modDir, err := goCmd("list", "-m", "-f", "{{.Dir}}")
		if err != nil {
			return err
		}
		out = filepath.Join(strings.TrimSpace(modDir), "difftest", "internal", "upstreamqueue")
	}
	// go mod download prints the module's directory and fetches it if the
	// cache lacks it; the version is the one the current module requires.
	js, err := goCmd("mod", "download", "-json", upstreamModule)
	if err != nil {
		return err
	}
	var mod struct{ Dir, Version, Error string }
	if err := json.Unmarshal([]byte(js), &mod); err != nil {
		return fmt.Errorf("go mod download: %v", err)
	}
	if mod.Error != "" || mod.Dir == "" {
		return fmt.Errorf("go mod download %s: %s", upstreamModule, mod.Error)
	}
	src := filepath.Join(mod.Dir, filepath.FromSlash(upstreamPkg))
	if err := checkFileSet(src, upstreamFiles); err != nil {
		return fmt.Errorf("%s@%s: %v", upstreamModule, mod.Version, err)
	}
	want := map[string][]byte{exportFile: exportTemplate}
	for _, f := range upstreamFiles {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return err
		}
		want[f] = b
	}
	return syncDir(out, want)
}

// syncDir makes dir hold the files of want (paths relative to dir, with
// slashes) and drops any other file (of an older layout) except those in
// keep. It rewrites only the files whose content changed, so the build
// cache stays warm.
func syncDir(dir string, want map[string][]byte, keep ...string) error {
	kept := map[string]bool{}
	for _, k := range keep {
		kept[k] = true
	}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if _, ok := want[filepath.ToSlash(rel)]; !ok && !kept[filepath.ToSlash(rel)] {
			return os.Remove(path)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for name, b := range want {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		// Module-cache files are read-only; the copies must not be.
		_ = os.Remove(path)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func checkFileSet(dir string, want []string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var got []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			got = append(got, n)
		}
	}
	sort.Strings(got)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		return fmt.Errorf("%s has non-test files %v, want %v", upstreamPkg, got, want)
	}
	return nil
}

func goCmd(args ...string) (string, error) { return goCmdIn("", args...) }

// goCmdIn runs go in dir ("" for the current directory) and returns its
// standard output.
func goCmdIn(dir string, args ...string) (string, error) {
	gobin := "go"
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			gobin = p
		}
	}
	cmd := exec.Command(gobin, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(b), nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
