package workload

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixtureFiles maps the base name of every file below testdata to its
// content, so that fuzzed configs can name templates without touching the
// file system.
func fixtureFiles(tb testing.TB) map[string][]byte {
	files := map[string][]byte{}
	err := filepath.WalkDir("testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files[filepath.Base(path)] = b
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return files
}

// FuzzParse feeds arbitrary bytes to Parse and, when they parse, selects
// every workload and renders the first object of each op: nothing may panic,
// and every error must be an *Error.
func FuzzParse(f *testing.F) {
	files := fixtureFiles(f)
	for name, b := range files {
		if strings.Contains(name, "performance-config") || name == "all-ops.yaml" {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"",
		"[]",
		"- null",
		"- name: A\n  workloadTemplate: [null]\n",
		"- name: A\n  workloads: [null]\n",
		"- name: A\n  workloadTemplate:\n  - {opcode: createPods, countParam: $n, collectMetrics: true}\n  workloads:\n  - {name: w, params: {n: 1e3}}\n",
		"- name: A\n  workloadTemplate:\n  - {opcode: createPodSets, countParam: $n, namespacePrefix: s, createPodsOp: {opcode: createPods, count: 1, collectMetrics: true, podTemplatePath: pod-indexed.yaml}}\n  workloads:\n  - {name: w, params: {n: 3}}\n",
		"- name: A\n  workloadTemplate:\n  - {opcode: createAny, templatePath: priorityclass.yaml, count: 2}\n  - {opcode: stopCollectingMetrics}\n  workloads: [{name: w}]\n",
		"- &a {name: A}\n- *a\n",
		"- name: A\n  threshold: {x: 1}\n",
		"- name: A\n  workloadTemplate:\n  - {opcode: createPodGroups, countParam: $g, namespace: n, templatePath: podgroup.yaml, templateParams: {podsPerGroup: '$s|2'}}\n  - {opcode: createPods, count: 2, countMultiplierParam: $g, signatureBatchSize: 2, podTemplatePath: pod-params.yaml, templateParams: {group: a, tier: $t}, collectMetrics: true}\n  workloads:\n  - {name: w, params: {g: 2, t: x}}\n",
	} {
		f.Add([]byte(s))
	}
	readFile := func(path string) ([]byte, error) {
		if b, ok := files[filepath.Base(path)]; ok {
			return b, nil
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz/x.yaml", data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse error is %T, want *Error: %v", err, err)
			}
			return
		}
		file.readFile = readFile
		sel, err := file.Select("", "", "")
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Select error is %T, want *Error: %v", err, err)
			}
			return
		}
		for _, s := range sel {
			for i, op := range s.Ops {
				if op.Pos().Index != i {
					t.Fatalf("%s: op %d has index %d", s.Name(), i, op.Pos().Index)
				}
				if i >= 50 {
					continue
				}
				switch op := op.(type) {
				case *CreateNodes:
					if op.Count > 0 {
						_, _ = op.Node(0)
					}
				case *CreatePods:
					if op.Count > 0 {
						_, _ = op.Pod(0, op.Count)
					}
				case *CreateAny:
					if op.Count > 0 {
						_, _ = op.Object(0)
					}
				case *UpdateAny:
					if op.Count > 0 {
						_, _ = op.Object(0)
					}
				case *CreatePodGroups:
					_, _ = op.PodGroup(0)
				}
			}
		}
	})
}
