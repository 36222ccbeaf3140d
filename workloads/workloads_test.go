// Package workloads holds this project's scheduler_perf-format workloads
// (the *.yaml files beside this test, with the objects they create in
// templates/). The test checks each file the way upstream's harness reads
// it, through pkg/workload, so that a file that passes here runs unmodified
// in k8s.io/kubernetes' test/integration/scheduler_perf (perf/upstreamcompat
// runs them there).
package workloads_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
	"github.com/kubectl-schedq/kubectl-schedq/workloads"
)

// popFromBackoffQ is the KEP-5142 gate. Runners compare it on and off
// (schedq-perf run --compare), so no workload may fix it.
const popFromBackoffQ = "SchedulerPopFromBackoffQ"

func workloadFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no workload files (*.yaml) in workloads/")
	}
	return files
}

// TestWorkloadsParse loads every workload file and binds every workload in
// it (all sizes): params, templates, namespaces and collection windows must
// all be valid, as upstream would find them while running.
func TestWorkloadsParse(t *testing.T) {
	for _, path := range workloadFiles(t) {
		t.Run(path, func(t *testing.T) {
			f, err := workload.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			sel, err := f.Select("", "", "")
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range sel {
				if _, ok := s.FeatureGates[popFromBackoffQ]; ok {
					t.Errorf("%s: sets %s; leave it to the runner (--compare %s)", s.Name(), popFromBackoffQ, popFromBackoffQ)
				}
			}
		})
	}
}

// TestWorkloadsHaveBothSizes checks that every test case has a workload that
// upstream's integration jobs select (integration-test, not performance) and
// one its benchmark job selects (performance), and that the integration size
// stays small enough for CI.
func TestWorkloadsHaveBothSizes(t *testing.T) {
	for _, path := range workloadFiles(t) {
		f, err := workload.Load(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, tc := range f.TestCases {
			integration, err := f.Select(tc.Name, "", workload.DefaultIntegrationLabelFilter)
			if err != nil {
				t.Errorf("%s: test case %s: integration-test size: %v", path, tc.Name, err)
			}
			if _, err := f.Select(tc.Name, "", workload.DefaultPerfLabelFilter); err != nil {
				t.Errorf("%s: test case %s: performance size: %v", path, tc.Name, err)
			}
			for _, s := range integration {
				if n := podsCreated(s); n > 500 {
					t.Errorf("%s: %s: the integration-test size creates %d pods; keep it under 500 so CI stays fast", path, s.Name(), n)
				}
			}
		}
	}
}

// podsCreated counts the pods a workload's createPods ops create.
func podsCreated(s *workload.Selected) int {
	n := 0
	for _, op := range s.Ops {
		if cp, ok := op.(*workload.CreatePods); ok {
			n += cp.Count
		}
	}
	return n
}

// The comment block a workload file must open with: what it reproduces,
// what it measures, and what KEP-5142 predicts.
var requiredSections = []*regexp.Regexp{
	regexp.MustCompile(`(?m)^# Reproduces:`),
	regexp.MustCompile(`(?m)^# Measures`),
	regexp.MustCompile(`(?m)^# KEP-5142 predicts:`),
}

func TestWorkloadsAreDocumented(t *testing.T) {
	for _, path := range workloadFiles(t) {
		f, err := workload.Load(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		header := leadingComment(data)
		for _, re := range requiredSections {
			if !re.MatchString(header) {
				t.Errorf("%s: the opening comment has no %q section", path, strings.TrimPrefix(re.String(), "(?m)^# "))
			}
		}
		// Every test case is named in the header, so a reader can find
		// what each one is for.
		for _, tc := range f.TestCases {
			if !strings.Contains(header, tc.Name) && len(f.TestCases) > 1 {
				t.Errorf("%s: the opening comment does not mention test case %s", path, tc.Name)
			}
		}
	}
}

// leadingComment returns the file's first block of comment lines.
func leadingComment(data []byte) string {
	var b strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "#") {
			if b.Len() > 0 {
				break
			}
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestList checks what `perf list` shows: every file, its purpose and both
// sizes of every test case, and that each embedded file selects its
// integration-test workloads from the embedded templates alone.
func TestList(t *testing.T) {
	infos, err := workloads.List()
	if err != nil {
		t.Fatal(err)
	}
	files := workloadFiles(t)
	if len(infos) != len(files) {
		t.Fatalf("List has %d workloads, the directory %d files", len(infos), len(files))
	}
	for _, info := range infos {
		if !strings.HasSuffix(info.Purpose, ".") && !strings.HasSuffix(info.Purpose, "?") || strings.HasPrefix(info.Purpose, "Scenario") || len(info.Purpose) < 20 {
			t.Errorf("%s: purpose %q: want the first sentence of the opening comment", info.Name, info.Purpose)
		}
		for _, tc := range info.TestCases {
			var labels []string
			for _, w := range tc.Workloads {
				labels = append(labels, w.Labels...)
			}
			for _, want := range []string{"integration-test", "performance"} {
				if !slices.Contains(labels, want) {
					t.Errorf("%s/%s: no %s size", info.Name, tc.Name, want)
				}
			}
		}
		f, err := workloads.Load(info.Name)
		if err != nil {
			t.Fatalf("Load(%q): %v", info.Name, err)
		}
		if _, err := f.Select("", "", "integration-test"); err != nil {
			t.Errorf("%s: Select from the embedded files: %v", info.Name, err)
		}
	}
	if _, err := workloads.Load("no-such-workload"); err == nil || !strings.Contains(err.Error(), "perf list") {
		t.Errorf("Load of an unknown name: %v, want an error that points to perf list", err)
	}
}
