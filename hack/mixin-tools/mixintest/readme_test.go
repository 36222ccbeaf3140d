package mixintest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// readmeFile holds the runbook and the table of which alert fires on which
// run.
var readmeFile = filepath.Join(mixinDir, "README.md")

// tableMarker opens the table of runs in readmeFile.
const tableMarker = "<!-- alerts by run: TestReadmeAlertsByRun checks this table -->"

// firesCell writes the alerts a run fires, with when, as the table says it.
func firesCell(fires map[string]string) string {
	if len(fires) == 0 {
		return "none"
	}
	var names []string
	for a := range fires {
		names = append(names, a)
	}
	slices.Sort(names)
	var cells []string
	for _, a := range names {
		cells = append(cells, fmt.Sprintf("`%s` (%s)", a, fires[a]))
	}
	return strings.Join(cells, ", ")
}

// TestReadmeAlertsByRun: the README's table of which alert fires on which
// run is the one the tests hold the alerts to: every recorded run of
// alertCases and every scenario, with the alerts it fires and when, and no
// other row.
func TestReadmeAlertsByRun(t *testing.T) {
	want := map[string]string{}
	for _, c := range alertCases {
		fires := map[string]string{}
		for a, s := range c.fires {
			fires[a] = seconds(s)
		}
		want["recordings/"+c.recording] = firesCell(fires)
	}
	for path, f := range loadScenarios(t) {
		base := strings.TrimSuffix(filepath.Base(path), ".yaml")
		for _, sc := range f.Scenarios {
			want["scenarios/"+base+"/"+sc.Name] = firesCell(sc.Fires)
		}
	}

	data, err := os.ReadFile(readmeFile)
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), tableMarker+"\n")
	if !ok {
		t.Fatalf("%s has no line %q before its table of runs", readmeFile, tableMarker)
	}
	table, _, _ = strings.Cut(table, "\n\n")
	got := map[string]string{}
	for i, line := range strings.Split(table, "\n") {
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if i < 2 { // header and rule
			continue
		}
		if len(cells) != 3 {
			t.Errorf("%s: table row %q: want | run | what | fires |", readmeFile, line)
			continue
		}
		run := strings.Trim(strings.TrimSpace(cells[0]), "`")
		if _, dup := got[run]; dup {
			t.Errorf("%s: run %s listed twice", readmeFile, run)
		}
		got[run] = strings.TrimSpace(cells[2])
	}
	var runs []string
	for r := range want {
		runs = append(runs, r)
	}
	slices.Sort(runs)
	for _, r := range runs {
		switch g, ok := got[r]; {
		case !ok:
			t.Errorf("%s: no row for run %s; want | `%s` | … | %s |", readmeFile, r, r, want[r])
		case g != want[r]:
			t.Errorf("%s: run %s fires %q, the tests say %q", readmeFile, r, g, want[r])
		}
	}
	for r := range got {
		if _, ok := want[r]; !ok {
			t.Errorf("%s: row for run %s, which no test replays", readmeFile, r)
		}
	}
}
