package provider

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/kind/pkg/apis/config/defaults"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain/gather"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
)

// readDocs reads README.md and docs/*.md, keyed by their path from the
// repository's root.
func readDocs(t *testing.T) map[string]string {
	t.Helper()
	const root = "../../.."
	paths, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	for _, p := range append([]string{filepath.Join(root, "README.md")}, paths...) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		docs[filepath.ToSlash(rel)] = string(data)
	}
	for _, want := range []string{"README.md", "docs/results.md"} {
		if docs[want] == "" {
			t.Fatalf("%s is missing or empty", want)
		}
	}
	return docs
}

// figures returns the first submatch of re in every document, with the
// document each came from.
func figures(docs map[string]string, re *regexp.Regexp) (values, where []string) {
	for name, text := range docs {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			values = append(values, m[1])
			where = append(where, name)
		}
	}
	return values, where
}

// sameFigure fails unless re finds one value, the same everywhere, in each
// document of in.
func sameFigure(t *testing.T, docs map[string]string, what string, re *regexp.Regexp, in ...string) {
	t.Helper()
	values, where := figures(docs, re)
	for _, name := range in {
		if !strings.Contains(strings.Join(where, " "), name) {
			t.Errorf("%s does not give %s (pattern %s)", name, what, re)
		}
	}
	for i := range values {
		if values[i] != values[0] {
			t.Errorf("%s is given as %s in %s and as %s in %s, want one figure", what, values[0], where[0], values[i], where[i])
		}
	}
}

// TestREADME_claims holds the claims of README.md and docs/*.md about the
// perf providers and the plugin to the program: the message printed without
// a container runtime, the image kind pulls, the plugin's size, the runner's
// fidelity ratio, and the role explain and status need.
func TestREADME_claims(t *testing.T) {
	docs := readDocs(t)
	readme := docs["README.md"]

	// The no-Docker row quotes what is printed, and nothing suggests what
	// the plugin refuses.
	printed, _, _ := strings.Cut(ErrNoContainerRuntime.Error(), ";")
	if !strings.Contains(readme, "`"+printed+"`") {
		t.Errorf("README does not quote the message printed without a container runtime: %q", printed)
	}
	for name, text := range docs {
		if strings.Contains(text, "use the default embedded cluster") {
			t.Errorf("%s suggests the embedded cluster as a default; the plugin's default is kind and it runs embedded only through schedq-perf", name)
		}
	}

	// The README's kind run names the image kind pulls.
	image, _, _ := strings.Cut(defaults.Image, "@")
	if !strings.Contains(readme, "pulls kind's default node image ("+image+")") {
		t.Errorf("README's kind run does not say it pulls %s", image)
	}

	// One size for the plugin, in the README's summary and in the results.
	sameFigure(t, docs, "the plugin's size",
		regexp.MustCompile(`(?:weighs|Stripped linux/amd64 plugin) \*\*([0-9.]+ MB)\*\*`), "README.md", "docs/results.md")

	// One current fidelity ratio per workload: the fidelity table's
	// (make perf-compare-upstream's set), quoted by the performance runs'
	// table and the README's summary.
	sameFigure(t, docs, "the runner's fidelity ratio on SchedulingBasic", regexp.MustCompile(
		"(?:\\| 1 \\(`make perf-compare-upstream`\\) \\| SchedulingBasic 500/5000 \\|[^\\n]*?|"+
			"`make perf-compare-upstream` \\(3 interleaved runs per set, v1\\.37\\.2, quiet machine\\) \\| median ratio |"+
			`SchedulingBasic 500/5000 at )\*\*([0-9.]+×)\*\*`), "README.md", "docs/results.md")
	sameFigure(t, docs, "the runner's fidelity ratio on SchedulingPodAffinity", regexp.MustCompile(
		`(?:\| 1 \| SchedulingPodAffinity/500Nodes \|[^\n]*?|\(SchedulingBasic 500/5000\) and |SchedulingPodAffinity at )\*\*([0-9.]+×)\*\*`),
		"README.md", "docs/results.md")

	// The README's role grants what explain and status read: list on nodes
	// (explain's gather lists them), on PodGroups (v1.37's pod groups) and
	// the scheduler's paths.
	role := readmeRole(t, readme)
	for _, want := range []struct{ group, resource, verb string }{
		{"", "pods", "list"}, {"", "events", "list"}, {"", "nodes", "list"},
		{"", "pods/portforward", "create"}, {"scheduling.k8s.io", "podgroups", "list"},
	} {
		if !grants(role, want.group, want.resource, want.verb) {
			t.Errorf("README's role does not grant %s on %s %q, which the plugin uses", want.verb, want.resource, want.group)
		}
	}
	for _, path := range []string{metricscrape.MetricsPath, gather.ConfigzPath, gather.FlagzPath} {
		if !grants(role, "", path, "get") {
			t.Errorf("README's role does not grant get on %s", path)
		}
	}
}

// readmeRole is the ClusterRole the README's RBAC section gives.
func readmeRole(t *testing.T, readme string) *rbacv1.ClusterRole {
	t.Helper()
	m := regexp.MustCompile("(?s)```yaml\n(apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\n.*?)```").FindStringSubmatch(readme)
	if m == nil {
		t.Fatal("README has no ClusterRole in a yaml block")
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict([]byte(m[1]), &role); err != nil {
		t.Fatalf("README's ClusterRole: %v", err)
	}
	return &role
}

// grants reports whether a rule of role allows verb on resource (or, with
// group "", on the non-resource URL resource when it starts with "/").
func grants(role *rbacv1.ClusterRole, group, resource, verb string) bool {
	for _, r := range role.Rules {
		if !slices.Contains(r.Verbs, verb) {
			continue
		}
		if strings.HasPrefix(resource, "/") {
			if slices.Contains(r.NonResourceURLs, resource) {
				return true
			}
			continue
		}
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) {
			return true
		}
	}
	return false
}
