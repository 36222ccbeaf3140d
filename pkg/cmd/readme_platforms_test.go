package cmd

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
)

// platformsSection is the README's table of where the scheduler is.
const platformsSection = "## Where your scheduler is"

// platformRow is one row of that table.
type platformRow struct {
	platform, command, test string
}

func readPlatformRows(t *testing.T, readme string) []platformRow {
	t.Helper()
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n"+platformsSection+"\n")
	if !ok {
		t.Fatalf("%s has no %q section", readme, platformsSection)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var header []string
	var rows []platformRow
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if header == nil {
			header = cells
			continue
		}
		if len(cells) != len(header) {
			t.Fatalf("row %q has %d cells, the header %d", line, len(cells), len(header))
		}
		rows = append(rows, platformRow{platform: cells[0], command: cells[len(cells)-2], test: cells[len(cells)-1]})
	}
	if len(header) != 6 || header[0] != "platform" || header[len(header)-1] != "reproduced here by" {
		t.Fatalf("header %q", header)
	}
	return rows
}

var (
	testName      = regexp.MustCompile("`(Test[A-Za-z0-9_]+)`")
	inlineCommand = regexp.MustCompile("`(kubectl schedq [^`]+)`")
)

// TestREADME_platforms holds the README's "Where your scheduler is" table
// to the code: every locator discovery tries has a row; every row names a
// test function that exists, or says it cannot be reproduced here; and its
// command parses with the plugin's own flags.
func TestREADME_platforms(t *testing.T) {
	root := filepath.Join("..", "..")
	rows := readPlatformRows(t, filepath.Join(root, "README.md"))

	for _, l := range metricscrape.DefaultLocators() {
		found := false
		for _, r := range rows {
			found = found || strings.Contains(r.platform, l.Platform())
		}
		if !found {
			t.Errorf("locator %q has no row in the README's table", l.Platform())
		}
	}

	tests := testFunctions(t, root)
	for _, r := range rows {
		names := testName.FindAllStringSubmatch(r.test, -1)
		if len(names) == 0 {
			t.Errorf("%s: names no test", r.platform)
		}
		if !strings.HasPrefix(r.test, "`") && !strings.HasPrefix(r.test, "cannot be reproduced here") {
			t.Errorf("%s: %q neither names the test that reproduces it nor says it cannot be reproduced here", r.platform, r.test)
		}
		for _, m := range names {
			if !tests[m[1]] {
				t.Errorf("%s: test %s does not exist", r.platform, m[1])
			}
		}
		cmds := inlineCommand.FindAllStringSubmatch(r.command, -1)
		if len(cmds) == 0 {
			t.Errorf("%s: no command", r.platform)
		}
		for _, c := range cmds {
			root := NewCmdSchedq(genericiooptions.NewTestIOStreamsDiscard())
			args := strings.Fields(strings.TrimPrefix(c[1], "kubectl schedq "))
			sub, rest, err := root.Find(args)
			if err == nil {
				err = sub.ParseFlags(rest)
			}
			if err != nil {
				t.Errorf("%s: %q: %v", r.platform, c[1], err)
			}
		}
	}
}

// testFunctions are the Test functions of every _test.go file under root.
func testFunctions(t *testing.T, root string) map[string]bool {
	t.Helper()
	decl := regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]+)\(`)
	found := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(data), -1) {
			found[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
