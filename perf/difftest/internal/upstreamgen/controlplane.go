package main

// -controlplane: perf/embedded's control plane (etcd, kube-apiserver and
// kube-scheduler in one process) built against an older Kubernetes version,
// for perf/explainacc to measure explain against that version's own queue
// (make explain-accuracy-versions). Each version gets a Go module of its
// own, generated here and gitignored (out/controlplane-versions/<version> of
// the perf module), that requires that k8s.io/kubernetes and pins its
// ./staging modules as -older does, and holds:
//
//	embedded/                    perf/embedded's non-test files, but for
//	                             provider.go (the perf runner's provider,
//	                             whose packages need perf/go.mod's API
//	                             version); workload.go written out with its
//	                             values, and the version's files of
//	                             controlplane/ in place of the newer ones
//	groundtruth/                 perf/groundtruth
//	metricscrape/                pkg/metricscrape's extension.go (the
//	                             kubeconfig's scheduler endpoint), alone:
//	                             the rest of the package needs perf/go.mod's
//	                             client-go
//	cmd/schedq-controlplane/     controlplane/main.go.txt
//
// Building it compiles that version's kube-apiserver and kube-scheduler:
// minutes, cold.

import (
	"embed"
	"encoding/json"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// controlPlaneVersions are the versions -controlplane builds, each with the
// files of controlplane/ that replace perf/embedded's (by the name they
// take).
var controlPlaneVersions = []controlPlaneVersion{
	{"v1.36.3", map[string]string{"queue.go": "queue-before-v1.37.go.txt", "controllers.go": "controllers-before-v1.37.go.txt"}},
}

type controlPlaneVersion struct {
	version   string
	overrides map[string]string
}

const (
	// controlPlaneModule is the module path of each generated module.
	controlPlaneModule = "schedq.local/controlplane"
	// etcdModule is etcd's server, at perf/go.mod's version.
	etcdModule = "go.etcd.io/etcd/server/v3"
)

//go:embed controlplane
var controlPlaneFS embed.FS

func runControlPlane(out, bin, only string) error {
	perf, err := perfModuleInfo("-controlplane")
	if err != nil {
		return err
	}
	if out == "" {
		out = filepath.Join(perf.Dir, "out", "controlplane-versions")
	}
	etcdVersion, err := goCmd("list", "-m", "-f", "{{.Version}}", etcdModule)
	if err != nil {
		return err
	}
	rows, err := selectVersions(controlPlaneVersions, func(r controlPlaneVersion) string { return r.version }, only, "controlPlaneVersions in upstreamgen's controlplane.go")
	if err != nil {
		return err
	}
	for _, row := range rows {
		dir := filepath.Join(out, row.version)
		if err := generateControlPlane(row.version, row.overrides, dir, filepath.Dir(perf.Dir), perf.Dir, perf.GoVersion, strings.TrimSpace(etcdVersion)); err != nil {
			return fmt.Errorf("%s: %w", row.version, err)
		}
		fmt.Printf("%s %s\n", row.version, dir)
		if bin != "" {
			abs, err := filepath.Abs(filepath.Join(bin, "schedq-controlplane-"+row.version))
			if err != nil {
				return err
			}
			ldflags := "-X k8s.io/component-base/version.gitVersion=" + row.version
			if _, err := goCmdIn(dir, "build", "-trimpath", "-ldflags", ldflags, "-o", abs, "./cmd/schedq-controlplane"); err != nil {
				return fmt.Errorf("%s: %w", row.version, err)
			}
			fmt.Printf("%s %s\n", row.version, abs)
		}
	}
	return nil
}

func generateControlPlane(version string, overrides map[string]string, dir, root, perfDir, goVersion, etcdVersion string) error {
	js, err := goCmd("mod", "download", "-json", upstreamModule+"@"+version)
	if err != nil {
		return err
	}
	var mod struct{ GoMod, Error string }
	if err := json.Unmarshal([]byte(js), &mod); err != nil || mod.Error != "" {
		return fmt.Errorf("go mod download %s@%s: %v%s", upstreamModule, version, err, mod.Error)
	}
	imports := strings.NewReplacer(
		`"`+perfModule+`/groundtruth"`, `"`+controlPlaneModule+`/groundtruth"`,
		`"`+selfModule+`/pkg/metricscrape"`, `"`+controlPlaneModule+`/metricscrape"`,
		"SCHEDQ_CONTROLPLANE_MODULE", controlPlaneModule,
		"SCHEDQ_KUBE_VERSION", version,
		// pkg/workload does not build against an older API: its values
		// are written out in embedded/workload.go.
		`"`+selfModule+`/pkg/workload"`, "",
		"workload.MaxFileBytes", "maxFileBytes")
	want := map[string][]byte{}
	for _, pkg := range []string{"embedded", "groundtruth"} {
		entries, err := os.ReadDir(filepath.Join(perfDir, pkg))
		if err != nil {
			return err
		}
		for _, e := range entries {
			n := e.Name()
			if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") || pkg == "embedded" && n == "provider.go" {
				continue
			}
			b, err := os.ReadFile(filepath.Join(perfDir, pkg, n))
			if err != nil {
				return err
			}
			want[pkg+"/"+n] = []byte(imports.Replace(string(b)))
		}
	}
	ext, err := os.ReadFile(filepath.Join(root, "pkg", "metricscrape", "extension.go"))
	if err != nil {
		return err
	}
	want["metricscrape/extension.go"] = ext
	for name, tmpl := range overrides {
		b, err := controlPlaneFS.ReadFile("controlplane/" + tmpl)
		if err != nil {
			return err
		}
		want["embedded/"+name] = []byte(imports.Replace(string(b)))
	}
	want["embedded/workload.go"] = []byte(fmt.Sprintf(`// Code generated by upstreamgen -controlplane. DO NOT EDIT.

package embedded

import (
	"fmt"
	"sort"
	"strings"
)

// perf/embedded/workload.go's values, written out: pkg/workload does not
// build against this version's API packages.

func defaultSchedulerConfig() []byte { return []byte(%q) }

// maxFileBytes caps a scheduler configuration file as workload files are.
const maxFileBytes = %d

func formatGates(gates map[string]bool) string {
	names := make([]string, 0, len(gates))
	for k := range gates {
		names = append(names, k)
	}
	sort.Strings(names)
	for i, k := range names {
		names[i] = fmt.Sprintf("%%s=%%t", k, gates[k])
	}
	return strings.Join(names, ",")
}
`, workload.DefaultSchedulerConfig, workload.MaxFileBytes))
	main, err := controlPlaneFS.ReadFile("controlplane/main.go.txt")
	if err != nil {
		return err
	}
	want["cmd/schedq-controlplane/main.go"] = []byte(imports.Replace(string(main)))
	for name, b := range want {
		if want[name], err = format.Source(b); err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
	}
	kgomod, err := os.ReadFile(mod.GoMod)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(dir, root)
	if err != nil {
		return err
	}
	gm, err := olderGoMod("-controlplane", controlPlaneModule, version, goVersion, filepath.ToSlash(rel), kgomod, mod.GoMod, etcdModule+" "+etcdVersion)
	if err != nil {
		return err
	}
	want["go.mod.in"] = []byte(gm)
	old, _ := os.ReadFile(filepath.Join(dir, "go.mod.in"))
	if err := syncDir(dir, want, "go.mod", "go.sum"); err != nil {
		return err
	}
	return tidyIfChanged(dir, old, gm)
}
