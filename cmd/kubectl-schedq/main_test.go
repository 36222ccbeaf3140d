package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// buildPlugin builds the plugin the way `make build` does, with version
// stamped, into a temporary directory.
func buildPlugin(t *testing.T, version string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the plugin")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "kubectl-schedq")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin,
		"-ldflags", "-s -w -X github.com/kubectl-schedq/kubectl-schedq/pkg/cmd.version="+version, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr)
	}
	return string(out)
}

// TestBuiltPlugin runs the built binary: the stamped version, cobra's
// completion scripts, __complete (what kubectl_complete-schedq runs), and the
// kubectl_complete-schedq script itself as kubectl ≥ 1.26 calls it.
func TestBuiltPlugin(t *testing.T) {
	const version = "v9.8.7-test"
	bin := buildPlugin(t, version)

	if out := run(t, nil, bin, "version"); !strings.HasPrefix(out, "kubectl-schedq "+version+" (") {
		t.Errorf("version printed %q, want the stamped %s", out, version)
	}

	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		if out := run(t, nil, bin, "completion", shell); !strings.Contains(out, "kubectl-schedq") || len(out) < 1000 {
			t.Errorf("completion %s: %d bytes, not a script for kubectl-schedq", shell, len(out))
		}
	}

	// Commands at the top level.
	top := run(t, nil, bin, "__complete", "")
	for _, want := range []string{"simulate\t", "version\t", "completion\t"} {
		if !strings.Contains(top, want) {
			t.Errorf("__complete '' lacks %q:\n%s", want, top)
		}
	}
	// Flags of a subcommand, then the directive line cobra ends with.
	flags := run(t, nil, bin, "__complete", "simulate", "--")
	for _, want := range []string{"--trace\t", "--pop-from-backoffq\t", "--kubeconfig\t"} {
		if !strings.Contains(flags, want) {
			t.Errorf("__complete simulate -- lacks %q:\n%s", want, flags)
		}
	}
	if !strings.HasSuffix(flags, "\n:4\n") { // ShellCompDirectiveNoFileComp
		t.Errorf("__complete simulate -- does not end with the no-file directive:\n%s", flags)
	}

	if runtime.GOOS == "windows" {
		return
	}
	script, err := filepath.Abs("../../kubectl_complete-schedq")
	if err != nil {
		t.Fatal(err)
	}
	path := "PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")
	// kubectl passes the words after the plugin's name, the last one being
	// the word under the cursor ("" for a new word).
	got := run(t, []string{path}, script, "simulate", "--tr")
	if got != "--trace\tTrace file to replay, or - for stdin\n:4\n" {
		t.Errorf("kubectl_complete-schedq simulate --tr printed %q", got)
	}
	if got := run(t, []string{path}, script, "simulate", "--trace", ""); !strings.Contains(got, "jsonl\n") {
		t.Errorf("kubectl_complete-schedq simulate --trace '' printed %q, want the trace file extensions", got)
	}
}
