package kubeversion

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	for _, tc := range []struct {
		name string
		deps []*debug.Module
		want string
	}{
		{name: "required", deps: []*debug.Module{{Path: "k8s.io/api", Version: "v0.37.2"}, {Path: Module, Version: "v1.37.2"}}, want: "v1.37.2"},
		{name: "replaced", deps: []*debug.Module{{Path: Module, Version: "v1.36.3", Replace: &debug.Module{Path: Module, Version: "v1.37.2"}}}, want: "v1.37.2"},
		{name: "absent", deps: []*debug.Module{{Path: "k8s.io/api", Version: "v0.37.2"}}, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fromBuildInfo(&debug.BuildInfo{Deps: tc.deps}); got != tc.want {
				t.Errorf("fromBuildInfo = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFromGoMod(t *testing.T) {
	for _, tc := range []struct {
		name, gomod string
		want        string
		wantOK      bool
	}{
		{name: "block", gomod: "module " + perfModule + "\n\nrequire (\n\tgo.etcd.io/etcd/server/v3 v3.7.0\n\tk8s.io/kubernetes v1.37.2\n)\n", want: "v1.37.2", wantOK: true},
		{name: "single line", gomod: "module " + perfModule + "\n\nrequire k8s.io/kubernetes v1.36.3\n", want: "v1.36.3", wantOK: true},
		{name: "replace line not read", gomod: "module " + perfModule + "\n\nrequire k8s.io/kubernetes v1.37.2\n\nreplace (\n\tk8s.io/api => k8s.io/api v0.37.2\n)\n", want: "v1.37.2", wantOK: true},
		{name: "another module", gomod: "module example.com/other\n\nrequire k8s.io/kubernetes v1.37.2\n", want: "", wantOK: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := fromGoMod(tc.gomod)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("fromGoMod = %q, %t, want %q, %t", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// TestFromGoModAbove: the perf module's go.mod is found from a directory
// below it, past another module's go.mod on the way.
func TestFromGoModAbove(t *testing.T) {
	root := t.TempDir()
	nested := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(path, s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "go.mod"), "module "+perfModule+"\n\nrequire k8s.io/kubernetes v1.37.2\n")
	write(filepath.Join(root, "a", "go.mod"), "module example.com/a\n")
	if got := fromGoModAbove(nested); got != "v1.37.2" {
		t.Errorf("fromGoModAbove = %q, want v1.37.2", got)
	}
}

// TestGet_MatchesGoMod: in this test binary (no dependency list) Get reads
// perf/go.mod.
func TestGet_MatchesGoMod(t *testing.T) {
	b, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	want, ok := fromGoMod(string(b))
	if !ok || want == "" {
		t.Fatalf("../../go.mod is not the perf module's or requires no %s", Module)
	}
	if got := Get(); got != want {
		t.Errorf("Get() = %q, go.mod requires %s %s", got, Module, want)
	}
}
