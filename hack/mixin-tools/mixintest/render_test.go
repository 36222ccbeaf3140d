package mixintest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestRenderedIsCurrent: what `make mixin` committed is what the jsonnet
// renders now, file for file.
func TestRenderedIsCurrent(t *testing.T) {
	fresh := render(t, filepath.Join(mixinDir, "render.jsonnet"))
	want := files(t, fresh)
	got := files(t, rendered)
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("mixin/rendered/%s is missing: run make mixin", name)
		case !bytes.Equal(g, w):
			t.Errorf("mixin/rendered/%s differs from a fresh render: run make mixin", name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("mixin/rendered/%s is not rendered any more: run make mixin", name)
		}
	}
}

func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		data, err := os.ReadFile(path)
		out[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPromtoolCheckRules: promtool accepts both rules files, and the
// PrometheusRule carries exactly their groups.
func TestPromtoolCheckRules(t *testing.T) {
	out, err := goTool(t, "promtool", "check", "rules", abs(t, alertFile), abs(t, rulesFile))
	if err != nil {
		t.Fatalf("promtool check rules: %v", err)
	}
	t.Logf("%s", out)

	var manifest struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Spec       struct {
			Groups []any `json:"groups"`
		} `json:"spec"`
	}
	readYAML(t, filepath.Join(rendered, "prometheusrule.yaml"), &manifest)
	if manifest.APIVersion != "monitoring.coreos.com/v1" || manifest.Kind != "PrometheusRule" {
		t.Errorf("prometheusrule.yaml is %s %s, want monitoring.coreos.com/v1 PrometheusRule", manifest.APIVersion, manifest.Kind)
	}
	var rules, alerts struct {
		Groups []any `json:"groups"`
	}
	readYAML(t, rulesFile, &rules)
	readYAML(t, alertFile, &alerts)
	want, _ := yaml.Marshal(append(rules.Groups, alerts.Groups...))
	got, _ := yaml.Marshal(manifest.Spec.Groups)
	if !bytes.Equal(got, want) {
		t.Errorf("the PrometheusRule's groups are not the rules files' groups:\n%s\nwant\n%s", got, want)
	}
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func abs(t *testing.T, path string) string {
	t.Helper()
	a, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
