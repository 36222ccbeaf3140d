// Package workloads holds this project's scheduler_perf-format workloads
// (the *.yaml files here, with the objects they create in templates/),
// embedded in the binary so that `kubectl schedq perf run NAME` has them
// wherever the plugin is installed.
package workloads

import (
	"bufio"
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// FS holds the workload files and their templates, at the paths they have
// in the repository's workloads/ directory.
//
//go:embed *.yaml templates
var FS embed.FS

// Info describes one embedded workload file.
type Info struct {
	// Name is the file's name without .yaml: what `perf run NAME` takes.
	Name string `json:"name"`
	// File is its path in FS.
	File string `json:"file"`
	// Purpose is the first sentence of the comment the file opens with.
	Purpose   string         `json:"purpose"`
	TestCases []TestCaseInfo `json:"testCases"`
}

// TestCaseInfo is a test case and its workloads (its sizes).
type TestCaseInfo struct {
	Name      string         `json:"name"`
	Workloads []WorkloadInfo `json:"workloads"`
}

// WorkloadInfo is one size of a test case.
type WorkloadInfo struct {
	Name   string         `json:"name"`
	Labels []string       `json:"labels,omitempty"`
	Params map[string]any `json:"params,omitempty"`
}

// List returns every embedded workload file, sorted by name.
func List() ([]Info, error) {
	names, err := fs.Glob(FS, "*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]Info, 0, len(names))
	for _, file := range names {
		data, err := fs.ReadFile(FS, file)
		if err != nil {
			return nil, err
		}
		f, err := workload.LoadFS(FS, file)
		if err != nil {
			return nil, err
		}
		info := Info{Name: strings.TrimSuffix(file, ".yaml"), File: file, Purpose: purpose(data)}
		for _, tc := range f.TestCases {
			ti := TestCaseInfo{Name: tc.Name}
			for _, w := range tc.Workloads {
				ti.Workloads = append(ti.Workloads, WorkloadInfo{Name: w.Name, Labels: append(append([]string(nil), tc.Labels...), w.Labels...), Params: w.Params})
			}
			info.TestCases = append(info.TestCases, ti)
		}
		out = append(out, info)
	}
	return out, nil
}

// Load returns the embedded workload file NAME (with or without .yaml).
func Load(name string) (*workload.File, error) {
	if !Has(name) {
		return nil, fmt.Errorf("no embedded workload %q (see `kubectl schedq perf list`)", name)
	}
	return workload.LoadFS(FS, fileOf(name))
}

// Has says whether NAME is an embedded workload.
func Has(name string) bool {
	if strings.Contains(name, "/") {
		return false
	}
	_, err := fs.Stat(FS, fileOf(name))
	return err == nil
}

func fileOf(name string) string { return strings.TrimSuffix(name, ".yaml") + ".yaml" }

var scenarioPrefix = regexp.MustCompile(`^Scenario \d+ — `)

// purpose is the opening comment's first sentence, without its
// "Scenario N — " numbering.
func purpose(data []byte) string {
	var para []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "#") {
			break
		}
		text := strings.TrimSpace(strings.TrimPrefix(line, "#"))
		if text == "" {
			if len(para) > 0 {
				break
			}
			continue
		}
		para = append(para, text)
	}
	s := scenarioPrefix.ReplaceAllString(strings.Join(para, " "), "")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return s
}
