package provider

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/kind/pkg/apis/config/defaults"
)

// TestREADME_claims holds README's claims about the perf providers and the
// plugin to the program: the message printed without a container runtime,
// the image kind pulls, the binary size said twice, the runner's fidelity
// ratio said twice, and the RBAC explain needs.
func TestREADME_claims(t *testing.T) {
	data, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)

	// The no-Docker row quotes what is printed, and suggests nothing the
	// plugin refuses.
	printed, _, _ := strings.Cut(ErrNoContainerRuntime.Error(), ";")
	if !strings.Contains(readme, "`"+printed+"`") {
		t.Errorf("README does not quote the message printed without a container runtime: %q", printed)
	}
	if strings.Contains(readme, "use the default embedded cluster") {
		t.Error("README suggests the embedded cluster as a default; the plugin's default is kind and it runs embedded only through schedq-perf")
	}

	// The Quick start's kind run names the image kind pulls.
	image, _, _ := strings.Cut(defaults.Image, "@")
	if !strings.Contains(readme, "pulls kind's default node image ("+image+")") {
		t.Errorf("README's kind run does not say it pulls %s", image)
	}

	// One size for the plugin.
	sizes := regexp.MustCompile(`(?:weighs|Stripped linux/amd64 plugin) \*\*([0-9.]+ MB)\*\*`).FindAllStringSubmatch(readme, -1)
	if len(sizes) != 2 || sizes[0][1] != sizes[1][1] {
		t.Errorf("README gives the plugin's size as %v, want one figure twice", sizes)
	}

	// One current fidelity ratio.
	fidelity := regexp.MustCompile(`\| WAL fsynced, as upstream's harness runs etcd \(the default now\) \|[^\n]*\*\*([0-9.]+×)\*\*`).FindStringSubmatch(readme)
	if fidelity == nil || !strings.Contains(readme, "`make perf-compare-upstream` (3 interleaved runs, load 8–9) | median ratio **"+fidelity[1]+"**") {
		t.Errorf("the performance section does not quote the fidelity section's ratio %v", fidelity)
	}

	// explain lists nodes (explain_list.go): RBAC says so.
	if !strings.Contains(readme, "and list on nodes") {
		t.Error("README's RBAC leaves out list on nodes, which explain uses")
	}
}
