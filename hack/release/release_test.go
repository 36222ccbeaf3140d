package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const repoRoot = "../.."

// platforms are the archives .goreleaser.yaml makes: os, arch, extension.
var platforms = [][3]string{
	{"linux", "amd64", ".tar.gz"}, {"linux", "arm64", ".tar.gz"},
	{"darwin", "amd64", ".tar.gz"}, {"darwin", "arm64", ".tar.gz"},
	{"windows", "amd64", ".zip"}, {"windows", "arm64", ".zip"},
}

func archiveName(tag string, p [3]string) string {
	return fmt.Sprintf("%s_%s_%s_%s%s", binaryName, tag, p[0], p[1], p[2])
}

// fakeDist writes an archive (made-up contents) per platform, the way
// goreleaser names them, and returns the directory and each one's sha256.
func fakeDist(t *testing.T, tag string, ps [][3]string) (string, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	sums := map[string]string{}
	for _, p := range ps {
		name := archiveName(tag, p)
		data := []byte("archive for " + name)
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		sums[name] = hex.EncodeToString(sum[:])
	}
	return dir, sums
}

const miniTemplate = `apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: schedq
spec:
  version: {{ .TagName }}
  platforms:
  - selector:
      matchLabels:
        os: linux
        arch: amd64
    {{addURIAndSha "https://example.com/{{ .TagName }}/kubectl-schedq_{{ .TagName }}_linux_amd64.tar.gz" .TagName }}
    bin: kubectl-schedq
  - selector:
      matchLabels:
        os: windows
        arch: amd64
    {{addURIAndSha "https://example.com/{{ .TagName }}/kubectl-schedq_{{ .TagName }}_windows_amd64.zip" .TagName | indent 4 }}
    bin: kubectl-schedq.exe
`

func writeTemplate(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), ".krew.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRenderKrew: the bot's rendering, each archive's uri and sha256 from
// dist, both ways a template may call addURIAndSha.
func TestRenderKrew(t *testing.T) {
	ps := [][3]string{platforms[0], platforms[4]}
	dist, sums := fakeDist(t, "v1.2.3", ps)
	out, err := renderKrew(writeTemplate(t, miniTemplate), dist, "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		name := archiveName("v1.2.3", p)
		want := fmt.Sprintf("    uri: https://example.com/v1.2.3/%s\n    sha256: %s\n", name, sums[name])
		if !strings.Contains(string(out), want) {
			t.Errorf("manifest lacks\n%s\ngot:\n%s", want, out)
		}
	}
	if !strings.Contains(string(out), "  version: v1.2.3\n") {
		t.Errorf("manifest lacks the version:\n%s", out)
	}
}

func TestRenderKrew_checksArchives(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ps      [][3]string
		wantErr string
	}{
		{"an archive is missing", [][3]string{platforms[0]}, "kubectl-schedq_v1.2.3_windows_amd64.zip failed. status code: 410"},
		{"an archive is not in the manifest", [][3]string{platforms[0], platforms[4], platforms[3]},
			"kubectl-schedq_v1.2.3_darwin_arm64.tar.gz is in " /* dist */},
		{"no archive of the tag", nil, "holds no archive of v1.2.3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dist, _ := fakeDist(t, "v1.2.3", tc.ps)
			_, err := renderKrew(writeTemplate(t, miniTemplate), dist, "v1.2.3")
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

var shaLine = regexp.MustCompile(`(?m)^(\s*sha256:\s*)[0-9a-f]{64}\s*$`)

// withoutSHAs masks sha256 values and drops comment lines.
func withoutSHAs(s string) string {
	var lines []string
	for _, l := range strings.Split(shaLine.ReplaceAllString(s, "${1}<sha256>"), "\n") {
		if !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// TestRepoKrewTemplate renders the repository's .krew.yaml against an
// archive of every platform goreleaser builds: each is named once, the
// committed krew/schedq.yaml is what it renders (sha256 values aside), and
// the texts keep to krew-index's rules.
func TestRepoKrewTemplate(t *testing.T) {
	committed, err := os.ReadFile(filepath.Join(repoRoot, "krew", "schedq.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tag := between(string(committed), "\n  version: ", "\n")
	if !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(tag) {
		t.Fatalf("krew/schedq.yaml has version %q", tag)
	}
	dist, _ := fakeDist(t, tag, platforms)
	out, err := renderKrew(filepath.Join(repoRoot, ".krew.yaml"), dist, tag)
	if err != nil {
		t.Fatal(err)
	}
	spec := string(out)
	if got, want := withoutSHAs(string(committed)), withoutSHAs(spec); got != want {
		t.Errorf("krew/schedq.yaml is stale (make krew-manifest):\n got %s\nwant %s", got, want)
	}
	for _, p := range platforms {
		sel := fmt.Sprintf("        os: %s\n        arch: %s\n", p[0], p[1])
		if n := strings.Count(spec, sel); n != 1 {
			t.Errorf("%s/%s: %d platform entries, want 1", p[0], p[1], n)
		}
	}
	if !strings.Contains(spec, "    bin: kubectl-schedq.exe\n") {
		t.Errorf("no windows bin kubectl-schedq.exe")
	}
	short := between(spec, "  shortDescription: ", "\n")
	if short == "" || len(short) > 70 {
		t.Errorf("shortDescription %q: want one line of at most 70 characters", short)
	}
	for _, line := range strings.Split(spec, "\n") {
		if len(line) > 80 && !strings.Contains(line, "uri: ") {
			t.Errorf("line over 80 characters: %q", line)
		}
	}
	desc := between(spec, "  description: |\n", "  caveats:")
	if strings.Contains(desc, " --") || strings.Contains(desc, "\n    -") {
		t.Errorf("description should not list flags:\n%s", desc)
	}
	caveats := between(spec, "  caveats: |\n", "  platforms:")
	for _, want := range []string{`nonResourceURLs: ["/metrics"]`, `verbs: ["get"]`, "pods/portforward", "kube-system"} {
		if !strings.Contains(caveats, want) {
			t.Errorf("caveats do not mention %s:\n%s", want, caveats)
		}
	}
}

func between(s, from, to string) string {
	_, after, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	before, _, _ := strings.Cut(after, to)
	return before
}

// TestLdflagsWrittenOnce: .goreleaser.yaml holds the version stamp, and the
// Makefile's build reads it from there instead of writing its own.
func TestLdflagsWrittenOnce(t *testing.T) {
	const stamp = "-X github.com/kubectl-schedq/kubectl-schedq/pkg/cmd.version="
	for file, want := range map[string]int{".goreleaser.yaml": 1, "Makefile": 0, ".ci/run": 0} {
		data, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(data), stamp); n != want {
			t.Errorf("%s writes the version stamp %d times, want %d", file, n, want)
		}
	}
}
