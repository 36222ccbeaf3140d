// Package kubeversion reports the version of k8s.io/kubernetes that perf/
// builds: the one perf/go.mod requires, so that the version is written in
// go.mod only.
package kubeversion

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
)

const (
	// Module is the module whose version Get reports.
	Module = "k8s.io/kubernetes"
	// perfModule is the module whose go.mod requires it.
	perfModule = "github.com/kubectl-schedq/kubectl-schedq/perf"
)

// Get returns the version of Module (e.g. "v1.37.2"): from the running
// binary's build information, or, in a test binary, which carries no list
// of dependencies, from the go.mod of the perf module that holds the working
// directory (go test runs a test in its package's directory). It returns ""
// when neither says.
func Get() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		if v := fromBuildInfo(info); v != "" {
			return v
		}
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	return fromGoModAbove(dir)
}

func fromBuildInfo(info *debug.BuildInfo) string {
	for _, d := range info.Deps {
		if d.Path != Module {
			continue
		}
		if d.Replace != nil && d.Replace.Version != "" {
			return d.Replace.Version
		}
		return d.Version
	}
	return ""
}

// fromGoModAbove reads the version of Module that the perf module's go.mod
// requires, looking in dir and its parents.
func fromGoModAbove(dir string) string {
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			if v, ok := fromGoMod(string(b)); ok {
				return v
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// fromGoMod returns the version of Module that a go.mod of the perf module
// requires, in a require block or a single-line require; ok is false for
// another module's go.mod.
func fromGoMod(gomod string) (version string, ok bool) {
	inRequire := false
	for _, line := range strings.Split(gomod, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "module":
			if len(f) < 2 || f[1] != perfModule {
				return "", false
			}
			ok = true
		case f[0] == "require" && len(f) >= 2 && f[1] == "(":
			inRequire = true
		case f[0] == ")":
			inRequire = false
		case f[0] == "require" && len(f) >= 3 && f[1] == Module:
			version = f[2]
		case inRequire && len(f) >= 2 && f[0] == Module:
			version = f[1]
		}
	}
	return version, ok
}
