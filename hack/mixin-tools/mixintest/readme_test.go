package mixintest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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

	got := map[string]string{}
	for _, row := range readmeTable(t, tableMarker) {
		if _, dup := got[row.run]; dup {
			t.Errorf("%s: run %s listed twice", readmeFile, row.run)
		}
		got[row.run] = row.fires
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

// tableRow is a row of a table of runs in readmeFile: | run | what | fires |.
type tableRow struct{ run, fires string }

// readmeTable reads the table of runs that follows the line marker in
// readmeFile, up to the first blank line.
func readmeTable(t *testing.T, marker string) []tableRow {
	t.Helper()
	data, err := os.ReadFile(readmeFile)
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), marker+"\n")
	if !ok {
		t.Fatalf("%s has no line %q before its table of runs", readmeFile, marker)
	}
	table, _, _ = strings.Cut(table, "\n\n")
	var rows []tableRow
	for i, line := range strings.Split(table, "\n") {
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if i < 2 { // header and rule
			continue
		}
		if len(cells) != 3 {
			t.Errorf("%s: table row %q: want | run | what | fires |", readmeFile, line)
			continue
		}
		rows = append(rows, tableRow{run: strings.Trim(strings.TrimSpace(cells[0]), "`"), fires: strings.TrimSpace(cells[2])})
	}
	return rows
}

// liveScript is make test-prometheus: a real Prometheus scraping the
// embedded scheduler through the live runs.
var liveScript = filepath.Join(repoRoot, "hack", "test-prometheus.sh")

// liveTableMarker opens the table of live runs in readmeFile.
const liveTableMarker = "<!-- live runs: TestReadmeLiveRuns checks this table against hack/test-prometheus.sh -->"

// liveRunLine is how liveScript opens each live run: the run's name and the
// alert it must fire, or none; its checks fail on any other alert.
var liveRunLine = regexp.MustCompile(`^live_run '([^']+)' (\S+)$`)

// liveRuns reads the live runs of liveScript in their order.
func liveRuns(t *testing.T) []tableRow {
	t.Helper()
	data, err := os.ReadFile(liveScript)
	if err != nil {
		t.Fatal(err)
	}
	var runs []tableRow
	for i, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "live_run ") {
			continue
		}
		m := liveRunLine.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("%s:%d: %q: want live_run 'NAME' ALERT (or none)", liveScript, i+1, line)
			continue
		}
		runs = append(runs, tableRow{run: m[1], fires: m[2]})
	}
	return runs
}

// TestReadmeLiveRuns: the README's table of live runs lists the runs of
// make test-prometheus in its order, each with the alert the script waits
// for (every other alert is checked quiet throughout); every alert of the
// mixin fires in one live run and stays quiet in another.
func TestReadmeLiveRuns(t *testing.T) {
	runs := liveRuns(t)
	if len(runs) == 0 {
		t.Fatalf("%s opens no live run (live_run 'NAME' ALERT)", liveScript)
	}
	var want []string
	for _, r := range runs {
		cell := "none"
		if r.fires != "none" {
			cell = "`" + r.fires + "`"
		}
		want = append(want, fmt.Sprintf("%s: %s", r.run, cell))
	}
	var got []string
	for _, r := range readmeTable(t, liveTableMarker) {
		got = append(got, fmt.Sprintf("%s: %s", r.run, r.fires))
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: live runs (run: fires)\n  %s\nthe script's:\n  %s", readmeFile, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	fires, quiet := map[string]int{}, map[string]int{}
	alerts := map[string]bool{}
	for _, a := range readRules(t, alertFile) {
		alerts[a.Alert] = true
		for _, r := range runs {
			if r.fires == a.Alert {
				fires[a.Alert]++
			} else {
				quiet[a.Alert]++
			}
		}
	}
	for _, r := range runs {
		if r.fires != "none" && !alerts[r.fires] {
			t.Errorf("%s: live run %q fires %s, which the mixin does not have", liveScript, r.run, r.fires)
		}
	}
	for a := range alerts {
		if fires[a] == 0 {
			t.Errorf("no live run fires %s", a)
		}
		if quiet[a] == 0 {
			t.Errorf("no live run where %s must stay quiet", a)
		}
	}
}
