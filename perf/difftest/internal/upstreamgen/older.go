package main

// -older: the queues of the Kubernetes versions before perf/go.mod's. perf/
// requires one k8s.io/kubernetes; each older version gets a Go module of its
// own, generated here and gitignored (out/upstream-versions/<version> of the
// perf module), that requires that version, pins its ./staging modules at the
// matching v0.x.y (as e2e/infra/kind-node/build.sh does) and takes the
// plugin's module (the model, trace and tracegen) from this checkout. Each
// holds:
//
//	upstreamqueue/               the version's pkg/scheduler/backend/queue, byte
//	                             for byte from the module cache, and
//	                             older/export.go.txt
//	difftest/                    the driver (older/upstream.go.txt), the files
//	                             of the version's API rules, and perf/difftest's
//	                             replay_test.go, bench_test.go and cputime files
//	                             (BenchmarkReplay_ModelVsUpstream in process)
//	cmd/schedq-upstream-replay/  perf/difftest/cmd's command on that driver
//
// The driver is written once for v1.34–v1.36; where their APIs differ, the
// rule is written once, in older/before-v1.X.go.txt and
// older/from-v1.X.go.txt for the version v1.X where it changes, and each
// version lists the files it takes.

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// olderVersion is a row of the version table.
type olderVersion struct {
	version string
	// files are the queue package's non-test files at that version.
	files []string
	// rules are the driver's files for that version's API (older/): one of
	// before-v1.X and from-v1.X for each version v1.X where it changed.
	rules []string
}

// The six non-test files of the queue package in v1.34–v1.36, which queue
// pods (v1.37 queues entities: unschedulable_entities.go and more).
var podQueueFiles = []string{
	"active_queue.go",
	"backoff_queue.go",
	"nominator.go",
	"scheduling_queue.go",
	"testing.go",
	"unschedulable_pods.go",
}

// olderVersions is the version table: a new supported version is a new row.
var olderVersions = []olderVersion{
	{"v1.34.4", podQueueFiles, []string{"before-v1.35.go.txt", "before-v1.36.go.txt"}},
	{"v1.35.4", podQueueFiles, []string{"from-v1.35.go.txt", "before-v1.36.go.txt"}},
	{"v1.36.3", podQueueFiles, []string{"from-v1.35.go.txt", "from-v1.36.go.txt"}},
}

const (
	// olderModule is the module path of each generated module.
	olderModule = "schedq.local/upstream"
	// selfModule and perfModule are the plugin's module and perf/'s.
	selfModule = "github.com/kubectl-schedq/kubectl-schedq"
	perfModule = selfModule + "/perf"
)

// perfDifftestFiles are perf/difftest's files that each generated module
// takes: the batch record, the replays, the in-process benchmark and the end-to-end one, whose
// upstream command is the generated module's own.
var perfDifftestFiles = []string{"batch.go", "replay_test.go", "bench_test.go", "cputime_unix_test.go", "cputime_other_test.go", "simulate_e2e_test.go"}

// upstreamReplayPkg is the upstream replay command's package, in perf/ and
// in a generated module.
const upstreamReplayPkg = "/difftest/cmd/schedq-upstream-replay"

//go:embed older
var olderFS embed.FS

var stagingReplace = regexp.MustCompile(`(?m)^\s*(?:replace\s+)?(\S+)\s*=>\s*\./staging/`)

func runOlder(out, bin, only string) error {
	perf, err := perfModuleInfo("-older")
	if err != nil {
		return err
	}
	if out == "" {
		out = filepath.Join(perf.Dir, "out", "upstream-versions")
	}
	rows, err := selectVersions(olderVersions, func(r olderVersion) string { return r.version }, only, "olderVersions in upstreamgen's older.go")
	if err != nil {
		return err
	}
	for _, row := range rows {
		dir := filepath.Join(out, row.version)
		if err := generateOlder(row, dir, filepath.Dir(perf.Dir), perf); err != nil {
			return fmt.Errorf("%s: %w", row.version, err)
		}
		fmt.Printf("%s %s\n", row.version, dir)
		if bin != "" {
			abs, err := filepath.Abs(filepath.Join(bin, "schedq-upstream-replay-"+row.version))
			if err != nil {
				return err
			}
			if _, err := goCmdIn(dir, "build", "-o", abs, "./cmd/schedq-upstream-replay"); err != nil {
				return fmt.Errorf("%s: %w", row.version, err)
			}
			fmt.Printf("%s %s\n", row.version, abs)
		}
	}
	return nil
}

// perfModuleDir is the module go runs in (go list -m), which must be perf/;
// perfModuleInfo says so, naming flag, when it is not.
type perfModuleDir struct{ Path, Dir, GoVersion string }

func perfModuleInfo(flag string) (perfModuleDir, error) {
	// A go.work above the repository must not take over the generated
	// modules.
	os.Setenv("GOWORK", "off")
	var perf perfModuleDir
	js, err := goCmd("list", "-m", "-json")
	if err != nil {
		return perf, err
	}
	if err := json.Unmarshal([]byte(js), &perf); err != nil || perf.Path != perfModule {
		return perf, fmt.Errorf("run upstreamgen %s inside the perf module (%s), not %q", flag, perfModule, perf.Path)
	}
	return perf, nil
}

// selectVersions returns the rows of table named by only, a comma-separated
// list of versions, in its order (all of them when only is empty); a version
// not in the table is an error that names the table, never skipped.
func selectVersions[T any](table []T, version func(T) string, only, where string) ([]T, error) {
	if only == "" {
		return table, nil
	}
	var rows []T
	for _, v := range strings.Split(only, ",") {
		v = strings.TrimSpace(v)
		i := slices.IndexFunc(table, func(r T) bool { return version(r) == v })
		if i < 0 {
			known := make([]string, len(table))
			for j, r := range table {
				known[j] = version(r)
			}
			return nil, fmt.Errorf("-versions: %q is not in the version table (%s): %s", v, where, strings.Join(known, ", "))
		}
		rows = append(rows, table[i])
	}
	return rows, nil
}

func generateOlder(row olderVersion, dir, root string, perf perfModuleDir) error {
	js, err := goCmd("mod", "download", "-json", upstreamModule+"@"+row.version)
	if err != nil {
		return err
	}
	var mod struct{ Dir, GoMod, Error string }
	if err := json.Unmarshal([]byte(js), &mod); err != nil {
		return fmt.Errorf("go mod download: %v", err)
	}
	if mod.Error != "" || mod.Dir == "" {
		return fmt.Errorf("go mod download %s@%s: %s", upstreamModule, row.version, mod.Error)
	}
	src := filepath.Join(mod.Dir, filepath.FromSlash(upstreamPkg))
	if err := checkFileSet(src, row.files); err != nil {
		return err
	}
	subst := strings.NewReplacer("SCHEDQ_UPSTREAM_MODULE", olderModule, "SCHEDQ_KUBE_VERSION", row.version)
	template := func(name string) ([]byte, error) {
		b, err := olderFS.ReadFile("older/" + name)
		return []byte(subst.Replace(string(b))), err
	}
	want := map[string][]byte{}
	for _, f := range row.files {
		if want["upstreamqueue/"+f], err = os.ReadFile(filepath.Join(src, f)); err != nil {
			return err
		}
	}
	if want["upstreamqueue/"+exportFile], err = template("export.go.txt"); err != nil {
		return err
	}
	if want["difftest/upstream.go"], err = template("upstream.go.txt"); err != nil {
		return err
	}
	for _, r := range row.rules {
		if want["difftest/"+strings.TrimSuffix(r, ".txt")], err = template(r); err != nil {
			return err
		}
	}
	for _, f := range perfDifftestFiles {
		b, err := os.ReadFile(filepath.Join(perf.Dir, "difftest", f))
		if err != nil {
			return err
		}
		want["difftest/"+f] = bytes.ReplaceAll(b, []byte(`"`+perfModule+upstreamReplayPkg+`"`), []byte(`"`+olderModule+"/cmd/schedq-upstream-replay"+`"`))
	}
	cmd, err := os.ReadFile(filepath.Join(perf.Dir, "difftest", "cmd", "schedq-upstream-replay", "main.go"))
	if err != nil {
		return err
	}
	driverImport := `"` + perfModule + `/difftest"`
	if strings.Count(string(cmd), driverImport) != 1 {
		return fmt.Errorf("perf/difftest/cmd/schedq-upstream-replay/main.go: want one import of %s", driverImport)
	}
	want["cmd/schedq-upstream-replay/main.go"] = []byte(strings.Replace(string(cmd), driverImport, `"`+olderModule+`/difftest"`, 1))

	// go.mod: k8s.io/kubernetes requires its staging modules at v0.0.0 and
	// replaces them with ./staging paths that a consumer cannot see: pin
	// each at the matching v0.x.y.
	kgomod, err := os.ReadFile(mod.GoMod)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(dir, root)
	if err != nil {
		return err
	}
	gm, err := olderGoMod("-older", olderModule, row.version, perf.GoVersion, filepath.ToSlash(rel), kgomod, mod.GoMod)
	if err != nil {
		return err
	}
	want["go.mod.in"] = []byte(gm)
	// The module path replaced in the imports sorts them differently.
	for name, b := range want {
		if strings.HasSuffix(name, ".go") && !strings.HasPrefix(name, "upstreamqueue/") {
			if want[name], err = format.Source(b); err != nil {
				return fmt.Errorf("%s: %v", name, err)
			}
		}
	}

	old, _ := os.ReadFile(filepath.Join(dir, "go.mod.in"))
	if err := syncDir(dir, want, "go.mod", "go.sum"); err != nil {
		return err
	}
	return tidyIfChanged(dir, old, gm)
}

// tidyIfChanged writes go.mod and runs go mod tidy, unless go.mod.in was
// already gm (old) and go.sum exists.
func tidyIfChanged(dir string, old []byte, gm string) error {
	if _, err := os.Stat(filepath.Join(dir, "go.sum")); err == nil && string(old) == gm {
		return nil
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gm), 0o644); err != nil {
		return err
	}
	_, err := goCmdIn(dir, "mod", "tidy")
	return err
}

// olderGoMod is the go.mod of a generated module: it requires the plugin's
// module (replaced by the checkout at rel) and k8s.io/kubernetes at
// version, whose go.mod (kgomod, read from path) requires its staging
// modules at v0.0.0 and replaces them with ./staging paths that a consumer
// cannot see: each is pinned at the matching v0.x.y. extra are more
// "module version" requirements.
func olderGoMod(flag, module, version, goVersion, rel string, kgomod []byte, path string, extra ...string) (string, error) {
	var gm strings.Builder
	fmt.Fprintf(&gm, "// Code generated by upstreamgen %s. DO NOT EDIT.\n\nmodule %s\n\ngo %s\n\n", flag, module, goVersion)
	fmt.Fprintf(&gm, "require (\n\t%s v0.0.0\n\t%s %s\n", selfModule, upstreamModule, version)
	for _, e := range extra {
		fmt.Fprintf(&gm, "\t%s\n", e)
	}
	fmt.Fprintf(&gm, ")\n\nreplace %s => %s\n\nreplace (\n", selfModule, rel)
	staging := stagingReplace.FindAllStringSubmatch(string(kgomod), -1)
	if len(staging) == 0 {
		return "", fmt.Errorf("%s: no ./staging replace directives", path)
	}
	for _, m := range staging {
		fmt.Fprintf(&gm, "\t%s => %s v0.%s\n", m[1], m[1], strings.TrimPrefix(version, "v1."))
	}
	gm.WriteString(")\n")
	return gm.String(), nil
}
