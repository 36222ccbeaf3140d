package run

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/report"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
)

// writeResults writes everything to --out and prints the table. The files
// are written into a directory beside --out and renamed into it, so that
// --out holds a run's results whole or not at all; the results of a run
// that failed (failed true) go beside an earlier good run's, never over
// them.
func (p *Plan) writeResults(started time.Time, byVariant [][]*runner.Result, all []*runner.Result, failed bool) error {
	o := &p.opts
	out := filepath.Clean(o.Out)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	stage, err := os.MkdirTemp(filepath.Dir(out), "."+filepath.Base(out)+".partial-")
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	defer os.RemoveAll(stage) // gone already once published
	var files []string
	for vi, v := range p.variants {
		if len(byVariant[vi]) == 0 {
			continue
		}
		path, err := report.WriteDataItems(stage, v.Name, o.Topic, started, byVariant[vi])
		if err != nil {
			return err
		}
		files = append(files, path)
	}
	for _, r := range all {
		if len(r.Queue.Samples) == 0 {
			continue
		}
		j, c, err := report.WriteSeries(stage, r)
		if err != nil {
			return err
		}
		files = append(files, j, c)
	}
	data, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	resultsPath := filepath.Join(stage, "results.json")
	if err := os.WriteFile(resultsPath, append(data, '\n'), 0o644); err != nil {
		return err
	}
	files = append(files, resultsPath)

	h := report.HTML{
		Title:     "schedq-perf: " + filepath.Base(p.path),
		Command:   o.Command,
		Generated: time.Now(),
		Host:      HostInfo(),
		Gate:      o.Compare,
		Results:   all,
	}
	if o.Compare != "" {
		h.Pairs = report.PairResults(byVariant[0], byVariant[1])
	}
	table, written, err := WriteReport(stage, h)
	if err != nil {
		return err
	}
	files = append(files, written...)

	dest := out
	if failed && holdsGoodRun(out) {
		dest = fmt.Sprintf("%s.failed-%s", out, started.Format("20060102-150405"))
		fmt.Fprintf(o.Stderr, "this run failed: its results go to %s, not over the good run's in %s\n", dest, out)
	}
	if err := publish(stage, dest); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	fmt.Fprint(o.Stdout, table)
	fmt.Fprintf(o.Stdout, "\nresults in %s:\n", dest)
	for _, f := range files {
		fmt.Fprintf(o.Stdout, "  %s\n", filepath.Base(f))
	}
	return nil
}

// holdsGoodRun reports whether dir holds the results of a run in which
// every workload succeeded.
func holdsGoodRun(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return false
	}
	var all []*runner.Result
	if json.Unmarshal(data, &all) != nil || len(all) == 0 {
		return false
	}
	for _, r := range all {
		if r.Error != "" {
			return false
		}
	}
	return true
}

// publish moves the files of stage into dest: the directory whole when
// dest does not exist, else file by file with results.json last, so that
// perf report never reads a results.json ahead of its run's files.
func publish(stage, dest string) error {
	if err := os.Chmod(stage, 0o755); err != nil {
		return err
	}
	if _, err := os.Stat(dest); errors.Is(err, fs.ErrNotExist) {
		return os.Rename(stage, dest)
	}
	entries, err := os.ReadDir(stage)
	if err != nil {
		return err
	}
	slices.SortStableFunc(entries, func(a, b os.DirEntry) int {
		return cmp.Compare(b2i(a.Name() == "results.json"), b2i(b.Name() == "results.json"))
	})
	for _, e := range entries {
		if err := os.Rename(filepath.Join(stage, e.Name()), filepath.Join(dest, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// WriteReport writes the table (summary.txt) and the HTML report of h's
// results into dir, and returns the table and the files.
func WriteReport(dir string, h report.HTML) (string, []string, error) {
	var table bytes.Buffer
	var err error
	if h.Gate != "" {
		err = report.WriteCompareTable(&table, h.Gate, h.Pairs)
	} else {
		err = report.WriteSummaryTable(&table, h.Results)
	}
	if err != nil {
		return "", nil, err
	}
	htmlPath := filepath.Join(dir, "report.html")
	f, err := os.Create(htmlPath)
	if err != nil {
		return "", nil, err
	}
	if err := h.Write(f); err != nil {
		f.Close()
		return "", nil, err
	}
	if err := f.Close(); err != nil {
		return "", nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.txt"), table.Bytes(), 0o644); err != nil {
		return "", nil, err
	}
	return table.String(), []string{htmlPath}, nil
}

// Report reads DIR/results.json, rewrites DIR's report.html and
// summary.txt, and returns the table. command is what the report quotes.
// When workload runs failed it returns the table and a *FailedRunsError
// with their reasons.
func Report(dir, command string) (string, error) {
	path := filepath.Join(dir, "results.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w (give the --out directory of a perf run)", path, err)
	}
	var all []*runner.Result
	if err := json.Unmarshal(data, &all); err != nil {
		return "", fmt.Errorf("%s: not the results of a perf run: %w", path, err)
	}
	if len(all) == 0 {
		return "", fmt.Errorf("%s: no results", path)
	}
	h := report.HTML{
		Title:     "schedq-perf: " + filepath.Base(all[0].Path),
		Command:   command,
		Generated: time.Now(),
		Host:      HostInfo(),
		Results:   all,
	}
	if gate, on, off, ok := ComparedGate(all); ok {
		h.Gate, h.Pairs = gate, report.PairResults(on, off)
	}
	table, _, err := WriteReport(dir, h)
	if err != nil {
		return "", err
	}
	if f := failedRuns(all); f != nil {
		return table, f
	}
	return table, nil
}

// FailedRunsError says which workload runs of a run failed, and why.
type FailedRunsError struct {
	Total int
	// Failed are "TestCase/Workload [variant]: reason".
	Failed []string
}

func (e *FailedRunsError) Error() string {
	return fmt.Sprintf("%d of %d workload runs failed:\n  %s", len(e.Failed), e.Total, strings.Join(e.Failed, "\n  "))
}

func failedRuns(all []*runner.Result) *FailedRunsError {
	var failed []string
	for _, r := range all {
		if r.Error != "" {
			failed = append(failed, strings.TrimSpace(r.TestCase+"/"+r.Workload+" "+r.Variant)+": "+r.Error)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return &FailedRunsError{Total: len(all), Failed: failed}
}

// ComparedGate finds the gate of a --compare run: every result's variant
// is GATE=true or GATE=false, for one GATE.
func ComparedGate(all []*runner.Result) (gate string, on, off []*runner.Result, ok bool) {
	for _, r := range all {
		g, v, found := strings.Cut(r.Variant, "=")
		if !found || gate != "" && g != gate {
			return "", nil, nil, false
		}
		gate = g
		switch v {
		case "true":
			on = append(on, r)
		case "false":
			off = append(off, r)
		default:
			return "", nil, nil, false
		}
	}
	return gate, on, off, len(on) > 0
}

// HostInfo describes the machine the run measured.
func HostInfo() string {
	s := fmt.Sprintf("%s/%s, %d CPUs", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(data)); len(f) >= 3 {
			s += ", load average " + strings.Join(f[:3], " ")
		}
	}
	return s
}
