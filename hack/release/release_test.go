package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const repoRoot = "../.."

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestArchivesAreDeterministic(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"bin": "\x7fELF binary", "LICENSE": "Apache", "README.md": "# hi"})
	entries := []entry{
		{"kubectl-schedq", filepath.Join(dir, "bin"), 0o755},
		{"LICENSE", filepath.Join(dir, "LICENSE"), 0o644},
		{"README.md", filepath.Join(dir, "README.md"), 0o644},
	}
	mt := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, ext := range []string{".tar.gz", ".zip"} {
		a, b := filepath.Join(dir, "a"+ext), filepath.Join(dir, "b"+ext)
		if err := writeArchive(a, entries, mt); err != nil {
			t.Fatal(err)
		}
		// Touch the sources: host mtimes must not leak into the archive.
		later := time.Now().Add(time.Hour)
		for _, e := range entries {
			if err := os.Chtimes(e.src, later, later); err != nil {
				t.Fatal(err)
			}
		}
		if err := writeArchive(b, entries, mt); err != nil {
			t.Fatal(err)
		}
		da, _ := os.ReadFile(a)
		db, _ := os.ReadFile(b)
		if !bytes.Equal(da, db) {
			t.Errorf("%s: two packs of the same files differ", ext)
		}
		got, err := readArchive(a)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(entries) {
			t.Errorf("%s: %d entries, want %d", ext, len(got), len(entries))
		}
		for _, e := range entries {
			sum, _ := sha256File(e.src)
			if g := got[e.name]; g.mode != os.FileMode(e.mode) || g.sha256 != sum {
				t.Errorf("%s: entry %s = %+v, want mode %v and the source's sha256", ext, e.name, g, os.FileMode(e.mode))
			}
		}
	}
}

func TestArchiveName(t *testing.T) {
	for p, want := range map[platform]string{
		{"linux", "amd64"}:   "kubectl-schedq_v0.1.0_linux_amd64.tar.gz",
		{"darwin", "arm64"}:  "kubectl-schedq_v0.1.0_darwin_arm64.tar.gz",
		{"windows", "arm64"}: "kubectl-schedq_v0.1.0_windows_arm64.zip",
	} {
		if got := archiveName("v0.1.0", p); got != want {
			t.Errorf("archiveName(%v) = %s, want %s", p, got, want)
		}
	}
}

// fakeDist writes an archive per platform (made-up contents) and their
// checksums.txt, the way `release dist` lays them out.
func fakeDist(t *testing.T, version string, ps []platform) string {
	t.Helper()
	dir := t.TempDir()
	var names []string
	for _, p := range ps {
		name := archiveName(version, p)
		writeFiles(t, dir, map[string]string{name: "archive for " + p.String()})
		names = append(names, name)
	}
	if err := writeChecksums(dir, names); err != nil {
		t.Fatal(err)
	}
	return dir
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

func TestRenderKrew(t *testing.T) {
	ps := []platform{{"linux", "amd64"}, {"windows", "amd64"}}
	dist := fakeDist(t, "v1.2.3", ps)
	out, err := renderKrew(miniTemplate, dist, "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		name := archiveName("v1.2.3", p)
		sum, _ := sha256File(filepath.Join(dist, name))
		want := fmt.Sprintf("    uri: https://example.com/v1.2.3/%s\n    sha256: %s\n", name, sum)
		if !strings.Contains(string(out), want) {
			t.Errorf("manifest lacks\n%s\ngot:\n%s", want, out)
		}
	}
	if !strings.Contains(string(out), "  version: v1.2.3\n") {
		t.Errorf("manifest lacks the version:\n%s", out)
	}
}

func TestRenderKrewChecksArchives(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ps      []platform
		tamper  func(dist string)
		wantErr string
	}{
		{"an archive is missing", []platform{{"linux", "amd64"}}, nil, "windows_amd64.zip"},
		{"an archive is not in the manifest", []platform{{"linux", "amd64"}, {"windows", "amd64"}, {"darwin", "arm64"}}, nil, "darwin_arm64.tar.gz is in dist but not in the manifest"},
		{"an archive changed after checksums.txt", []platform{{"linux", "amd64"}, {"windows", "amd64"}}, func(dist string) {
			_ = os.WriteFile(filepath.Join(dist, "kubectl-schedq_v1.2.3_linux_amd64.tar.gz"), []byte("changed"), 0o644)
		}, "does not match checksums.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dist := fakeDist(t, "v1.2.3", tc.ps)
			if tc.tamper != nil {
				tc.tamper(dist)
			}
			_, err := renderKrew(miniTemplate, dist, "v1.2.3")
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestSemverTag(t *testing.T) {
	for v, ok := range map[string]bool{
		"v0.1.0": true, "v1.20.3": true, "v1.0.0-rc.1": true,
		"0.1.0": false, "v0.1": false, "e7520b5-dirty": false, "devel": false, "v01.0.0": false,
	} {
		if got := semverTag.MatchString(v); got != ok {
			t.Errorf("semverTag(%q) = %v, want %v", v, got, ok)
		}
	}
}

// TestRepoKrewTemplate renders the repository's .krew.yaml against a dist of
// every default platform and checks the committed krew/schedq.yaml against
// it, as `make krew-validate` does with real archives.
func TestRepoKrewTemplate(t *testing.T) {
	committed, err := os.ReadFile(filepath.Join(repoRoot, "krew", "schedq.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	version := ""
	for _, line := range strings.Split(string(committed), "\n") {
		if v, ok := strings.CutPrefix(line, "  version: "); ok {
			version = strings.TrimSpace(v)
		}
	}
	if !semverTag.MatchString(version) {
		t.Fatalf("krew/schedq.yaml has version %q", version)
	}
	text, err := os.ReadFile(filepath.Join(repoRoot, ".krew.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := renderKrew(string(text), fakeDist(t, version, defaultPlatforms), version)
	if err != nil {
		t.Fatal(err)
	}
	if d := diffIgnoringSHA(string(committed), string(out)); d != "" {
		t.Errorf("krew/schedq.yaml is stale (make krew-manifest):\n%s", d)
	}
	for _, p := range defaultPlatforms {
		sel := fmt.Sprintf("        os: %s\n        arch: %s\n", p.OS, p.Arch)
		if n := strings.Count(string(out), sel); n != 1 {
			t.Errorf("%s: %d platform entries, want 1", p, n)
		}
		if !strings.Contains(string(out), "    bin: "+p.exe()+"\n") && p.OS == "windows" {
			t.Errorf("%s: no bin %s", p, p.exe())
		}
	}
	spec := string(out)
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

func TestIndentLikeTheBot(t *testing.T) {
	in := "uri: https://x/a.tar.gz\n    sha256: abc"
	if got, want := indent(6, in), "uri: https://x/a.tar.gz\n      sha256: abc"; got != want {
		t.Errorf("indent(6) = %q, want %q", got, want)
	}
}

// TestGoreleaserConfigAgrees is a cheap cross-check of .goreleaser.yaml with
// this program (make goreleaser-check runs goreleaser itself).
func TestGoreleaserConfigAgrees(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(data)
	for _, want := range []string{
		"version: 2",
		"main: " + mainPkg,
		"binary: " + binaryName,
		"CGO_ENABLED=0",
		"-trimpath",
		"-buildvcs=false",
		"-s -w -X github.com/kubectl-schedq/kubectl-schedq/pkg/cmd.version={{ .Tag }}",
		"goos: [linux, darwin, windows]",
		"goarch: [amd64, arm64]",
		`name_template: "kubectl-schedq_{{ .Tag }}_{{ .Os }}_{{ .Arch }}"`,
		"formats: [tar.gz]",
		"formats: [zip]",
		"name_template: checksums.txt",
		"algorithm: sha256",
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf(".goreleaser.yaml lacks %q", want)
		}
	}
	if len(defaultPlatforms) != 6 {
		t.Errorf("defaultPlatforms has %d entries; .goreleaser.yaml builds 3 OSes × 2 arches", len(defaultPlatforms))
	}
	for _, e := range archiveEntries(repoRoot, "bin", platform{"linux", "amd64"})[1:] {
		if !strings.Contains(cfg, "- src: "+e.name+"\n") {
			t.Errorf(".goreleaser.yaml does not pack %s", e.name)
		}
		if _, err := os.Stat(e.src); err != nil {
			t.Errorf("archive file: %v", err)
		}
	}
	makefile, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(makefile), "LDFLAGS   := -s -w -X github.com/kubectl-schedq/kubectl-schedq/pkg/cmd.version=$(VERSION)") {
		t.Errorf("the Makefile's LDFLAGS no longer match .goreleaser.yaml's ldflags")
	}
}
