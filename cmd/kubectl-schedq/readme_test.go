package main

import (
	"bufio"
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/cmd"
)

var update = flag.Bool("update", false, "rewrite testdata/readme/*.golden from the plugin's output")

// readmeCommand is one shell command of README.md's code blocks.
type readmeCommand struct {
	line   int    // README.md line the command is on
	text   string // as written, comment stripped
	output string // what a console block shows after it ("" in sh blocks)
	shown  bool   // a console block shows its output
}

// readmeCommands reads the commands of README.md's ```console blocks (lines
// starting with "$ ", the lines after it being its output) and ```sh blocks
// (every line, a trailing "# comment" dropped).
func readmeCommands(t *testing.T, path string) []readmeCommand {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var (
		cmds []readmeCommand
		lang string
		in   bool
		cur  *readmeCommand
	)
	flush := func() {
		if cur != nil {
			cur.output = strings.TrimRight(cur.output, "\n")
			cmds = append(cmds, *cur)
			cur = nil
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			if in {
				flush()
				in = false
			} else {
				in, lang = true, strings.TrimPrefix(line, "```")
			}
			continue
		}
		if !in {
			continue
		}
		switch lang {
		case "console":
			if text, ok := strings.CutPrefix(line, "$ "); ok {
				flush()
				cur = &readmeCommand{line: n, text: text, shown: true}
			} else if cur != nil {
				cur.output += line + "\n"
			}
		case "sh":
			if i := strings.Index(line, " #"); i >= 0 {
				line = line[:i]
			} else if strings.HasPrefix(strings.TrimSpace(line), "#") {
				line = ""
			}
			if text := strings.TrimSpace(line); text != "" {
				cmds = append(cmds, readmeCommand{line: n, text: text})
			}
		}
	}
	flush()
	return cmds
}

// How a README command is checked.
type check int

const (
	// runOffline: run as written against the built plugin, with no
	// kubeconfig; it must succeed, and its output must be what the README
	// shows, or (shown nowhere) its golden file.
	runOffline check = iota
	// runOfflineAnyOutput: as runOffline, but the output depends on the
	// build (version, Go), so only its start is compared.
	runOfflineAnyOutput
	// needsCluster: not run here; its subcommand, flags and arguments are
	// parsed by the plugin's own command tree, and reason says where it runs.
	needsCluster
	// notPlugin: a command of another tool; reason says how it is checked.
	notPlugin
)

// readmeExpect lists every command README.md gives, as written. A command in
// the README but not here fails the test, and so does one here but no longer
// in the README.
var readmeExpect = map[string]struct {
	check  check
	prefix string // runOfflineAnyOutput: the output starts with it
	reason string
}{
	// Offline.
	"kubectl schedq simulate --trace pkg/queue/trace/testdata/upstream/pop_from_backoffq_pfb_on.trace.jsonl": {check: runOffline},
	"kubectl schedq perf list": {check: runOffline},
	"kubectl schedq status --metrics-file testdata/metrics/v1.36-parked.prom": {check: runOffline},
	"kubectl schedq version": {check: runOfflineAnyOutput, prefix: "kubectl-schedq development build, not a release (go"},

	// A cluster.
	"kubectl schedq status": {check: needsCluster,
		reason: "reads a live scheduler: make demo runs it on the embedded control plane; e2e/kind (make test-kind) on kind"},
	"kubectl schedq explain -A": {check: needsCluster,
		reason: "lists a cluster's pods: make demo runs it on the embedded control plane; e2e/kind (make test-kind) on kind"},
	"kubectl schedq explain -n demo big-0": {check: needsCluster,
		reason: "the pods make demo creates: make demo runs it"},
	"kubectl schedq perf run backoff-drain --label-filter integration-test --compare SchedulerPopFromBackoffQ": {check: needsCluster,
		reason: "needs Docker for kind: e2e/kind (make test-kind) runs backoff-drain with --compare SchedulerPopFromBackoffQ --cluster kind"},
	"kubectl schedq perf run backoff-drain --workload 4Nodes_40Blocked --cluster kubeconfig --allow-existing-cluster": {check: needsCluster,
		reason: "needs a cluster: perf/cmd/schedq-perf's TestPlugin_perfOnKubeconfig runs the plugin's backoff-drain on a kubeconfig"},

	// A managed or multi-tenant Prometheus.
	"kubectl schedq status --prometheus-url https://monitoring.googleapis.com/v1/projects/PROJECT_ID/location/global/prometheus --prometheus-bearer-token-file gmp-token --prometheus-selector 'cluster=\"CLUSTER_NAME\"'": {check: needsCluster,
		reason: "needs a GKE project; make test-prometheus runs status with --prometheus-bearer-token-file through a proxy that wants a token and a tenant"},
	"kubectl schedq status --prometheus-url https://WORKSPACE.REGION.prometheus.monitor.azure.com --prometheus-bearer-token-file azure-token --prometheus-selector 'job=\"controlplane-kube-scheduler\"'": {check: needsCluster,
		reason: "needs an Azure Monitor workspace; make test-prometheus runs status with --prometheus-bearer-token-file through a proxy that wants a token and a tenant"},
	"kubectl schedq status --prometheus-url https://mimir.example.com/prometheus --prometheus-header 'X-Scope-OrgID: TENANT' --prometheus-selector 'cluster=\"prod\"'": {check: needsCluster,
		reason: "needs a Mimir; make test-prometheus runs status with --prometheus-header 'X-Scope-OrgID: …' through a proxy that wants a tenant"},
	"kubectl schedq explain -A --prometheus-url https://mimir.example.com/prometheus --prometheus-header 'X-Scope-OrgID: TENANT' --prometheus-bearer-token-file mimir-token": {check: needsCluster,
		reason: "needs a Mimir; make test-prometheus runs explain -A with these flags through a proxy that wants a token and a tenant"},

	// Other tools.
	"gcloud auth print-access-token > gmp-token": {check: notPlugin, reason: "Google Cloud's CLI; its token is what GMP's documentation queries with"},
	"az account get-access-token --resource https://prometheus.monitor.azure.com --query accessToken -o tsv > azure-token": {check: notPlugin,
		reason: "Azure's CLI; the resource is the one Azure Monitor's PromQL API takes tokens for"},
	"kind create cluster": {check: notPlugin, reason: "needs Docker; e2e/kind creates its clusters through kind"},
	"kubectl krew install schedq": {check: notPlugin,
		reason: "needs the plugin in krew-index; make krew-validate installs every release archive with krew"},
	"go install github.com/kubectl-schedq/kubectl-schedq/cmd/kubectl-schedq@latest": {check: notPlugin,
		reason: "the package is checked to be this main package of this module; make go-install-check runs go install through a local proxy"},
	"make demo": {check: notPlugin, reason: "the target is checked to exist; it takes minutes and runs a control plane"},
	"make test": {check: notPlugin, reason: "the target is checked to exist; it runs this test"},
}

// TestREADME_commands runs the commands README.md gives as written, against
// the built plugin, and compares what they print with what the README shows.
// Commands that need a cluster are parsed by the plugin's command tree, so a
// mistyped subcommand or flag fails here too.
func TestREADME_commands(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("runs the README's commands with sh")
	}
	const root = "../.."
	cmds := readmeCommands(t, filepath.Join(root, "README.md"))
	if len(cmds) < len(readmeExpect)/2 {
		t.Fatalf("found %d commands in README.md: is the code block syntax still ```console and ```sh?", len(cmds))
	}
	bin := buildPlugin(t, "")
	dir := filepath.Dir(bin)
	// kubectl finds the plugin on PATH; this stand-in does only that.
	shim := "#!/bin/sh\n[ \"$1\" = schedq ] || { echo \"only 'kubectl schedq' runs here\" >&2; exit 2; }\nshift\nexec kubectl-schedq \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "kubectl"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := append(os.Environ(),
		"PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+home, "KUBECONFIG="+filepath.Join(home, "no-kubeconfig"))

	seen := map[string]bool{}
	for _, c := range cmds {
		seen[c.text] = true
		want, ok := readmeExpect[c.text]
		if !ok {
			t.Errorf("README.md:%d: %q is not a command this test knows: if it is meant, add it to readmeExpect (run offline, or why not)", c.line, c.text)
			continue
		}
		t.Run(c.text, func(t *testing.T) {
			switch want.check {
			case runOffline, runOfflineAnyOutput:
				sh := exec.Command("sh", "-c", c.text)
				sh.Dir, sh.Env = root, env
				var stdout, stderr bytes.Buffer
				sh.Stdout, sh.Stderr = &stdout, &stderr
				if err := sh.Run(); err != nil {
					t.Fatalf("README.md:%d: %s: %v\n%s%s", c.line, c.text, err, stdout.String(), stderr.String())
				}
				got := normalize(stdout.String())
				switch {
				case want.check == runOfflineAnyOutput:
					if !strings.HasPrefix(got, want.prefix) {
						t.Errorf("README.md:%d: %s printed %q, want it to start with %q", c.line, c.text, got, want.prefix)
					}
				case c.shown:
					if shown := normalize(c.output); got != shown {
						t.Errorf("README.md:%d: %s prints what the README does not show:\n--- README\n%s\n--- printed\n%s", c.line, c.text, shown, got)
					}
				default:
					compareGolden(t, c, got)
				}
			case needsCluster:
				parseWithPlugin(t, c)
			case notPlugin:
				checkOtherTool(t, root, c)
			}
			if want.check >= needsCluster && want.reason == "" {
				t.Errorf("%s is not run, and readmeExpect gives no reason", c.text)
			}
		})
	}
	for text := range readmeExpect {
		if !seen[text] {
			t.Errorf("readmeExpect lists %q, which README.md no longer gives: remove it", text)
		}
	}
}

var timestamp = regexp.MustCompile(`\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d`)

// normalize drops trailing blanks and masks wall-clock times (status says
// when it read its source).
func normalize(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = timestamp.ReplaceAllString(strings.TrimRight(l, " \t"), "YYYY-MM-DD hh:mm:ss")
	}
	return strings.Join(lines, "\n")
}

// goldenName turns a command into a file name.
var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9.]+`)

func compareGolden(t *testing.T, c readmeCommand, got string) {
	t.Helper()
	path := filepath.Join("testdata", "readme", strings.Trim(unsafeName.ReplaceAllString(strings.TrimPrefix(c.text, "kubectl schedq "), "_"), "_")+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("README.md:%d: %s: %v (go test -run TestREADME_commands -update writes it)", c.line, c.text, err)
	}
	if got+"\n" != string(want) {
		t.Errorf("README.md:%d: %s prints what %s does not hold (go test -run TestREADME_commands -update rewrites it):\n--- %s\n%s--- printed\n%s", c.line, c.text, path, path, want, got)
	}
}

// parseWithPlugin checks a command that is not run: the subcommand exists,
// every flag is one it takes, and its arguments are ones it accepts.
func parseWithPlugin(t *testing.T, c readmeCommand) {
	t.Helper()
	args, ok := strings.CutPrefix(c.text, "kubectl schedq ")
	if !ok {
		t.Fatalf("README.md:%d: %q is not a kubectl schedq command", c.line, c.text)
	}
	root := cmd.NewCmdSchedq(genericiooptions.NewTestIOStreamsDiscard())
	sub, rest, err := root.Find(shellWords(args))
	if err != nil || sub == root {
		t.Fatalf("README.md:%d: %s: no such command (%v)", c.line, c.text, err)
	}
	if err := sub.ParseFlags(rest); err != nil {
		t.Fatalf("README.md:%d: %s: %v", c.line, c.text, err)
	}
	if err := sub.ValidateArgs(sub.Flags().Args()); err != nil {
		t.Fatalf("README.md:%d: %s: %v", c.line, c.text, err)
	}
	if !sub.Runnable() {
		t.Fatalf("README.md:%d: %s: %q only groups other commands", c.line, c.text, sub.CommandPath())
	}
}

// shellWords splits a command line as sh does for the quoting README.md
// uses: words apart at blanks, '…' and "…" kept whole, without the quotes.
func shellWords(line string) []string {
	var (
		words  []string
		cur    strings.Builder
		quote  rune
		inWord bool
	)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

var makeTarget = regexp.MustCompile(`(?m)^([a-zA-Z0-9_.-]+(?: [a-zA-Z0-9_.-]+)*):`)

// makeTargets returns the targets the Makefile defines.
func makeTargets(t *testing.T, root string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]bool{}
	for _, m := range makeTarget.FindAllStringSubmatch(string(data), -1) {
		for _, name := range strings.Fields(m[1]) {
			targets[name] = true
		}
	}
	return targets
}

// inlineMake is a make command in README.md's running text: `make X Y`.
var inlineMake = regexp.MustCompile("`make\\s+([a-z0-9_.-]+(?:\\s+[a-z0-9_.-]+)*)`")

// TestREADME_makeTargets holds every `make TARGET` README.md names in its
// text to a target the Makefile defines.
func TestREADME_makeTargets(t *testing.T) {
	const root = "../.."
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	targets := makeTargets(t, root)
	found := inlineMake.FindAllStringSubmatch(string(data), -1)
	if len(found) == 0 {
		t.Fatal("README.md names no make target in its text: is the pattern still `make TARGET`?")
	}
	for _, m := range found {
		for _, target := range strings.Fields(m[1]) {
			if !targets[target] {
				t.Errorf("README.md names `make %s`: the Makefile has no target %q", m[1], target)
			}
		}
	}
}

// checkOtherTool checks what can be checked of another tool's command
// without running it: a make target exists, go install names this module's
// plugin.
func checkOtherTool(t *testing.T, root string, c readmeCommand) {
	t.Helper()
	fields := strings.Fields(c.text)
	switch fields[0] {
	case "make":
		targets := makeTargets(t, root)
		for _, target := range fields[1:] {
			if !targets[target] {
				t.Errorf("README.md:%d: %s: the Makefile has no target %q", c.line, c.text, target)
			}
		}
	case "go":
		mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		module := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(string(mod), "\n", 2)[0], "module "))
		if want := "go install " + module + "/cmd/kubectl-schedq@latest"; c.text != want {
			t.Errorf("README.md:%d: %q, want %q", c.line, c.text, want)
		}
	}
}
