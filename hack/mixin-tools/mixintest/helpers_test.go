package mixintest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

// The repository's root and the mixin, from this package's directory.
var (
	repoRoot  = filepath.Join("..", "..", "..")
	mixinDir  = filepath.Join(repoRoot, "mixin")
	toolsDir  = ".."
	rendered  = filepath.Join(mixinDir, "rendered")
	alertFile = filepath.Join(rendered, "prometheus_alerts.yaml")
	rulesFile = filepath.Join(rendered, "prometheus_rules.yaml")
)

// goTool runs a tool of this module (`go tool name args…`) in dir and
// returns its stdout; stderr goes to the error.
func goTool(t *testing.T, name string, args ...string) ([]byte, error) {
	t.Helper()
	abs, err := filepath.Abs(toolsDir)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", append([]string{"tool", name}, args...)...)
	cmd.Dir = abs
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), &toolError{err: err, stderr: stderr.String() + stdout.String()}
	}
	return stdout.Bytes(), nil
}

type toolError struct {
	err    error
	stderr string
}

func (e *toolError) Error() string { return e.err.Error() + "\n" + e.stderr }

// render renders a jsonnet file that yields a map of file name → text
// (jsonnet -S -m) into a fresh directory and returns it.
func render(t *testing.T, file string) string {
	t.Helper()
	out := t.TempDir()
	src, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := goTool(t, "jsonnet", "-S", "-c", "-m", out, src); err != nil {
		t.Fatalf("jsonnet %s: %v", file, err)
	}
	return out
}

// ruleGroups is a Prometheus rules file, as far as the tests read it.
type ruleGroups struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []rule `json:"rules"`
	} `json:"groups"`
}

type rule struct {
	Alert       string            `json:"alert,omitempty"`
	Record      string            `json:"record,omitempty"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

func readRules(t *testing.T, path string) []rule {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g ruleGroups
	if err := yaml.UnmarshalStrict(data, &g); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []rule
	for _, grp := range g.Groups {
		out = append(out, grp.Rules...)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no rules", path)
	}
	return out
}
