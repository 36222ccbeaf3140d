package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/outfile"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/report"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
)

// writeResults writes everything to --out and prints the table. The files
// are written into a staging directory inside --out and moved into it at
// the end, results.json last, so that perf report never reads a
// results.json ahead of its run's files; the results of a run that failed
// (failed true) go beside an earlier good run's, never over them.
func (p *Plan) writeResults(started time.Time, byVariant [][]*runner.Result, all []*runner.Result, failed bool) error {
	o := &p.opts
	out := filepath.Clean(o.Out)
	dest := out
	// Not the run's context: an interrupted run's is over, and its results
	// must still not go over a good run's.
	if failed && holdsGoodRun(context.Background(), out) {
		dest = fmt.Sprintf("%s.failed-%s", out, started.Format("20060102-150405"))
		fmt.Fprintf(o.Stderr, "this run failed: its results go to %s, not over the good run's in %s\n", dest, out)
	}
	dir, err := outfile.OpenDir(dest)
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	defer dir.Close()
	stage, err := dir.Stage()
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	defer stage.Discard() // gone already once published
	var files []string
	for vi, v := range p.variants {
		if len(byVariant[vi]) == 0 {
			continue
		}
		name, err := report.WriteDataItems(stage.Dir, v.Name, o.Topic, started, byVariant[vi])
		if err != nil {
			return err
		}
		files = append(files, name)
	}
	for _, r := range all {
		for i, name := range r.Profiles {
			// The profile's file in --out names its run: two workloads,
			// or two sides of a comparison, may name the same filePath.
			data, err := bound.ReadFile(context.Background(), filepath.Join(p.profileDirs[r], name), report.MaxReadBytes)
			if err != nil {
				return fmt.Errorf("CPU profile of %s: %w", report.RunBaseName(r), err)
			}
			r.Profiles[i] = report.RunBaseName(r) + "_" + name
			if err := stage.WriteFile(r.Profiles[i], data, 0o644); err != nil {
				return err
			}
			files = append(files, r.Profiles[i])
		}
		if len(r.Queue.Samples) == 0 {
			continue
		}
		j, c, err := report.WriteSeries(stage.Dir, r)
		if err != nil {
			return err
		}
		files = append(files, j, c)
	}
	data, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	if err := stage.WriteFile(resultsFile, append(data, '\n'), 0o644); err != nil {
		return err
	}
	files = append(files, resultsFile)

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
	table, written, err := WriteReport(stage.Dir, h)
	if err != nil {
		return err
	}
	files = append(files, written...)

	if err := stage.Publish(resultsFile); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	fmt.Fprint(o.Stdout, table)
	fmt.Fprintf(o.Stdout, "\nresults in %s:\n", dest)
	for _, f := range files {
		fmt.Fprintf(o.Stdout, "  %s\n", f)
	}
	return nil
}

// resultsFile is the name of a run's results in --out.
const resultsFile = "results.json"

// holdsGoodRun reports whether dir holds the results of a run in which
// every workload succeeded.
func holdsGoodRun(ctx context.Context, dir string) bool {
	all, err := ReadResults(ctx, filepath.Join(dir, resultsFile))
	if err != nil {
		return false
	}
	for _, r := range all {
		if r.Error != "" {
			return false
		}
	}
	return true
}

// ReadResults reads a results.json that perf run wrote: at most
// report.MaxReadBytes of a regular file, given up when ctx ends.
func ReadResults(ctx context.Context, path string) ([]*runner.Result, error) {
	data, err := bound.ReadFile(ctx, path, report.MaxReadBytes)
	if err != nil {
		return nil, err
	}
	all, err := DecodeResults(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return all, nil
}

// DecodeResults decodes the content of a results.json: a non-empty list of
// results, each naming its workload.
func DecodeResults(data []byte) ([]*runner.Result, error) {
	var all []*runner.Result
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, fmt.Errorf("not the results of a perf run: %w", err)
	}
	if len(all) == 0 {
		return nil, errors.New("no results")
	}
	for i, r := range all {
		if r == nil || r.Workload == "" {
			return nil, fmt.Errorf("not the results of a perf run: result %d names no workload", i)
		}
	}
	return all, nil
}

// WriteReport writes the table (summary.txt) and the HTML report of h's
// results into dir, and returns the table and the files' names.
func WriteReport(dir *outfile.Dir, h report.HTML) (string, []string, error) {
	table, err := Table(h)
	if err != nil {
		return "", nil, err
	}
	if err := dir.Write("report.html", 0o644, h.Write); err != nil {
		return "", nil, err
	}
	if err := dir.WriteFile("summary.txt", []byte(table), 0o644); err != nil {
		return "", nil, err
	}
	return table, []string{"report.html"}, nil
}

// Table is the table of h's results: side by side when h compares a gate.
func Table(h report.HTML) (string, error) {
	var table bytes.Buffer
	var err error
	if h.Gate != "" {
		err = report.WriteCompareTable(&table, h.Gate, h.Pairs)
	} else {
		err = report.WriteSummaryTable(&table, h.Results)
	}
	return table.String(), err
}

// ReportOf is the report of a finished run's results, as perf report
// writes it; command is what it quotes.
func ReportOf(all []*runner.Result, command string) report.HTML {
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
	return h
}

// Report reads DIR/results.json, rewrites DIR's report.html and
// summary.txt, and returns the table. command is what the report quotes.
// When workload runs failed it returns the table and a *FailedRunsError
// with their reasons. ctx's end stops the read of results.json.
func Report(ctx context.Context, dir, command string) (string, error) {
	path := filepath.Join(dir, resultsFile)
	all, err := ReadResults(ctx, path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w (give the --out directory of a perf run)", err)
	}
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil { // interrupted while decoding: write nothing
		return "", err
	}
	d, err := outfile.OpenDir(dir)
	if err != nil {
		return "", err
	}
	defer d.Close()
	table, _, err := WriteReport(d, ReportOf(all, command))
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
	if data, err := bound.ReadFile(context.Background(), "/proc/loadavg", 4<<10); err == nil {
		if f := strings.Fields(string(data)); len(f) >= 3 {
			s += ", load average " + strings.Join(f[:3], " ")
		}
	}
	return s
}
