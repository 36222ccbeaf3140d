package workload_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// TestLoad_root: the files a workload names must lie in its tree (the Go
// module or git repository holding it, else its own directory), links
// included; upstream's layout, with templates in ../templates, is inside.
// An error about a file outside quotes none of it.
func TestLoad_root(t *testing.T) {
	const secret = "password: hunter2-TOPSECRET\n"
	config := func(podTemplatePath string) string {
		return "- name: Foo\n  workloadTemplate:\n  - {opcode: createPods, count: 1, collectMetrics: true, podTemplatePath: " + podTemplatePath + "}\n  workloads:\n  - name: bar\n"
	}
	for _, tc := range []struct {
		name string
		// files are written under a temporary directory, with links made
		// after them; config is the workload file's path.
		files   map[string]string
		links   map[string]string // link name → target (SECRET: the file outside)
		config  string
		root    string // LoadWithin's, relative to the directory; "" the default
		wantErr string
	}{
		{name: "upstream's layout in a module", config: "k/sp/misc/performance-config.yaml", files: map[string]string{
			"k/go.mod": "module k8s.io/kubernetes\n", "k/sp/misc/performance-config.yaml": config("../templates/pod.yaml"), "k/sp/templates/pod.yaml": podYAML}},
		{name: "two levels up in a git repository", config: "k/sp/dra/x/y/performance-config.yaml", files: map[string]string{
			"k/.git/HEAD": "ref: x\n", "k/sp/dra/x/y/performance-config.yaml": config("../../templates/pod.yaml"), "k/sp/dra/templates/pod.yaml": podYAML}},
		{name: "beside the file, no module", config: "w/x.yaml", files: map[string]string{"w/x.yaml": config("pod.yaml"), "w/pod.yaml": podYAML}},
		{name: "a link inside the tree", config: "w/x.yaml", files: map[string]string{"w/x.yaml": config("link.yaml"), "w/t/pod.yaml": podYAML},
			links: map[string]string{"w/link.yaml": "t/pod.yaml"}},
		{name: "up and out, no module", config: "w/x.yaml", files: map[string]string{"w/x.yaml": config("../secret")}, wantErr: "secret is outside "},
		{name: "out of the module", config: "k/w/x.yaml", files: map[string]string{"k/go.mod": "module m\n", "k/w/x.yaml": config("../../secret")}, wantErr: "secret is outside "},
		{name: "an absolute path", config: "w/x.yaml", files: map[string]string{"w/x.yaml": config("SECRET")}, wantErr: "secret is outside "},
		{name: "a link that leads out", config: "w/x.yaml", files: map[string]string{"w/x.yaml": config("pod.yaml")},
			links: map[string]string{"w/pod.yaml": "SECRET"}, wantErr: "pod.yaml is outside "},
		{name: "a relative link that leads out", config: "w/x.yaml", files: map[string]string{"w/x.yaml": config("pod.yaml")},
			links: map[string]string{"w/pod.yaml": "../secret"}, wantErr: "(through a link)"},
		{name: "a wider tree named", config: "w/x.yaml", root: ".", files: map[string]string{"w/x.yaml": config("../t/pod.yaml"), "t/pod.yaml": podYAML}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{"secret": secret}
			for name, content := range tc.files {
				files[name] = content
			}
			for name, content := range files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				content = strings.ReplaceAll(content, "SECRET", filepath.Join(dir, "secret"))
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for name, target := range tc.links {
				if target == "SECRET" {
					target = filepath.Join(dir, "secret")
				}
				if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
					t.Fatal(err)
				}
			}
			root := ""
			if tc.root != "" {
				root = filepath.Join(dir, tc.root)
			}
			f, err := workload.LoadWithin(filepath.Join(dir, tc.config), root)
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.Select("Foo", "bar", "")
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Select() error = %v", err)
				}
				return
			}
			var outside *workload.OutsideRootError
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &outside) {
				t.Fatalf("Select() error = %v, want an OutsideRootError containing %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error shows the file outside: %v", err)
			}
		})
	}
}
