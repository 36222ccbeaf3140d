// Command perfcompare sets the SchedulingThroughput that upstream's
// scheduler_perf harness measured beside the one schedq-perf measured for
// the same workload, run after run, with the load average around each run
// and each side's configuration (read from its running cluster by package
// clusterconfig) side by side, and prints the medians and their ratio.
// hack/perf-compare-upstream.sh (make perf-compare-upstream) runs it.
//
//	perfcompare -upstream DIR -ours DIR -workload SchedulingBasic/500Nodes_5000Pods [-o FILE]
//
// Each DIR holds one subdirectory per run, with upstream's
// BenchmarkPerfScheduling_*.json and schedq-configuration.json (upstream) or
// results.json (schedq-perf), and a file load: the load averages before and
// after the run.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/kubectl-schedq/kubectl-schedq/perf/internal/clusterconfig"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/collect"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/report"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
)

// configurationFile is perf/upstreambench's ConfigurationFile.
const configurationFile = "schedq-configuration.json"

func main() {
	upstream := flag.String("upstream", "", "directory of upstream's runs")
	ours := flag.String("ours", "", "directory of schedq-perf's runs")
	workloadName := flag.String("workload", "SchedulingBasic/500Nodes_5000Pods", "test case/workload whose throughput to compare")
	tolerance := flag.Float64("tolerance", 0.10, "the ratio's target: within 1±tolerance")
	strict := flag.Bool("strict", false, "exit 1 when the ratio is outside the target")
	out := flag.String("o", "", "also write the comparison to this file")
	flag.Parse()
	if *upstream == "" || *ours == "" {
		fmt.Fprintln(os.Stderr, "error: -upstream and -ours are required")
		os.Exit(2)
	}
	var buf strings.Builder
	within, err := compare(&buf, *upstream, *ours, *workloadName, *tolerance)
	fmt.Print(buf.String())
	if *out != "" {
		if werr := os.WriteFile(*out, []byte(buf.String()), 0o644); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
	if *strict && !within {
		os.Exit(1)
	}
}

type run struct {
	name              string
	average, perc50   float64
	creation          float64 // schedq-perf only
	schedulingSeconds float64
	load              string // "before → after" (1-minute averages)
	config            *runner.Configuration
}

func compare(w io.Writer, upstreamDir, oursDir, workloadName string, tolerance float64) (bool, error) {
	up, err := readRuns(upstreamDir, workloadName, false)
	if err != nil {
		return false, fmt.Errorf("upstream: %w", err)
	}
	us, err := readRuns(oursDir, workloadName, true)
	if err != nil {
		return false, fmt.Errorf("schedq-perf: %w", err)
	}
	fmt.Fprintf(w, "%s, SchedulingThroughput (pods/s), upstream's scheduler_perf vs schedq-perf, same machine, runs interleaved\n\n", workloadName)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tupstream Average\tPerc50\tload\tschedq-perf Average\tPerc50\tload\tours/upstream\tpod creation (pods/s)\tcreation/throughput\t")
	n := max(len(up), len(us))
	for i := 0; i < n; i++ {
		var u, o run
		if i < len(up) {
			u = up[i]
		}
		if i < len(us) {
			o = us[i]
		}
		fmt.Fprintf(tw, "%d\t%.1f\t%.1f\t%s\t%.1f\t%.1f\t%s\t%s\t%.0f\t%s\t\n", i+1, u.average, u.perc50, u.load, o.average, o.perc50, o.load,
			report.Ratio(o.average, u.average, o.average > 0, u.average > 0), o.creation, report.Ratio(o.creation, o.average, o.creation > 0, o.average > 0))
	}
	mu, mo := median(up, func(r run) float64 { return r.average }), median(us, func(r run) float64 { return r.average })
	mu50, mo50 := median(up, func(r run) float64 { return r.perc50 }), median(us, func(r run) float64 { return r.perc50 })
	mc := median(us, func(r run) float64 { return r.creation })
	fmt.Fprintf(tw, "median\t%.1f\t%.1f\t\t%.1f\t%.1f\t\t%s\t%.0f\t%s\t\n", mu, mu50, mo, mo50, report.Ratio(mo, mu, true, true), mc, report.Ratio(mc, mo, true, true))
	if err := tw.Flush(); err != nil {
		return false, err
	}
	ratio := mo / mu
	within := ratio >= 1-tolerance && ratio <= 1+tolerance
	verdict := "within"
	if !within {
		verdict = "OUTSIDE"
	}
	fmt.Fprintf(w, "\nmedian Average: schedq-perf %.1f pods/s, upstream %.1f pods/s, ratio %.3f: %s the ±%.0f%% target\n", mo, mu, ratio, verdict, tolerance*100)
	if mc > 0 {
		fmt.Fprintf(w, "schedq-perf created the measured pods at %.0f pods/s, %.1f× the scheduler's throughput\n", mc, mc/mo)
	}
	fmt.Fprintln(w)
	return within, printConfigurations(w, up, us)
}

// printConfigurations sets the two sides' configurations side by side:
// every setting, the queue's feature gates and any other gate that differs.
// A setting that differs between runs of one side is shown per run.
func printConfigurations(w io.Writer, up, us []run) error {
	fmt.Fprintln(w, "configuration, read from each side's running cluster (* where the sides differ)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\tsetting\tupstream's harness\tschedq-perf\t")
	settings := func(rs []run, key string) string {
		return distinct(rs, "(not recorded)", func(c *runner.Configuration) (string, bool) {
			v, ok := c.Settings[key]
			return v, ok
		})
	}
	gates := func(rs []run, gate string) string {
		return distinct(rs, "?", func(c *runner.Configuration) (string, bool) {
			on, ok := c.FeatureGates[gate]
			return fmt.Sprint(on), ok
		})
	}
	row := func(name, u, o string) {
		mark := ""
		if u != o {
			mark = "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", mark, name, u, o)
	}
	keys := slices.Clone(clusterconfig.Keys)
	for _, rs := range [][]run{up, us} {
		for _, r := range rs {
			if r.config == nil {
				continue
			}
			for _, k := range slices.Sorted(maps.Keys(r.config.Settings)) {
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
	}
	for _, k := range keys {
		row(k, settings(up, k), settings(us, k))
	}
	all := map[string]bool{}
	for _, rs := range [][]run{up, us} {
		for _, r := range rs {
			if r.config != nil {
				for g := range r.config.FeatureGates {
					all[g] = true
				}
			}
		}
	}
	differ := 0
	for _, g := range slices.Sorted(maps.Keys(all)) {
		u, o := gates(up, g), gates(us, g)
		if slices.Contains(metricscrape.QueueGates, g) || u != o {
			row("feature gate "+g, u, o)
		}
		if u != o {
			differ++
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d feature gates read on each side; %d differ\n", len(all), differ)
	return nil
}

// distinct is the values get reads from the runs' configurations (missing
// where a run has none), each once, in run order, joined by " | ".
func distinct(rs []run, missing string, get func(*runner.Configuration) (string, bool)) string {
	var vals []string
	for _, r := range rs {
		v := missing
		if r.config != nil {
			if got, ok := get(r.config); ok {
				v = got
			}
		}
		if !slices.Contains(vals, v) {
			vals = append(vals, v)
		}
	}
	return strings.Join(vals, " | ")
}

func median(rs []run, f func(run) float64) float64 {
	var v []float64
	for _, r := range rs {
		if x := f(r); x > 0 {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// readRuns reads one run per subdirectory of dir (or dir itself), in name
// order.
func readRuns(dir, workloadName string, withResults bool) ([]run, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	dirs := []string{}
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(dir, e.Name()))
		}
	}
	if len(dirs) == 0 {
		dirs = []string{dir}
	}
	sort.Slice(dirs, func(i, j int) bool { return natLess(filepath.Base(dirs[i]), filepath.Base(dirs[j])) })
	var runs []run
	for _, d := range dirs {
		r, err := readRun(d, workloadName, withResults)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

func natLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func readRun(dir, workloadName string, withResults bool) (run, error) {
	r := run{name: dir, load: readLoad(filepath.Join(dir, "load"))}
	files, _ := filepath.Glob(filepath.Join(dir, "BenchmarkPerfScheduling*.json"))
	if len(files) == 0 {
		return r, fmt.Errorf("%s: no BenchmarkPerfScheduling*.json", dir)
	}
	found := false
	for _, f := range files {
		items, err := report.ReadDataItems(f)
		if err != nil {
			return r, err
		}
		for _, it := range items.DataItems {
			if it.Labels[collect.LabelMetric] != collect.MetricSchedulingThroughput || !strings.Contains(it.Labels[collect.LabelName], "/"+workloadName+"/") {
				continue
			}
			r.average, r.perc50, found = it.Data["Average"], it.Data["Perc50"], true
		}
	}
	if !found {
		return r, fmt.Errorf("%s: no SchedulingThroughput item for %s", dir, workloadName)
	}
	if !withResults {
		if b, err := os.ReadFile(filepath.Join(dir, configurationFile)); err == nil {
			var configs map[string]*runner.Configuration
			if err := json.Unmarshal(b, &configs); err != nil {
				return r, fmt.Errorf("%s: %w", filepath.Join(dir, configurationFile), err)
			}
			r.config = configs[workloadName]
		}
		return r, nil
	}
	data, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return r, err
	}
	var results []*runner.Result
	if err := json.Unmarshal(data, &results); err != nil {
		return r, err
	}
	for _, res := range results {
		if res.TestCase+"/"+res.Workload != workloadName {
			continue
		}
		r.config = res.Configuration
		for _, w := range res.Windows {
			for _, op := range res.Ops {
				if op.Opcode == "createPods" && op.Start <= w.End && op.End >= w.Start && op.CreateRate > r.creation {
					r.creation = op.CreateRate
				}
			}
			r.schedulingSeconds = w.End - w.Start
		}
		return r, nil
	}
	return r, errors.New(dir + ": results.json has no " + workloadName)
}

// readLoad reads the file's lines of /proc/loadavg (before and after the
// run) as "1-minute before → after"; "" when there is no file.
func readLoad(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var first []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			first = append(first, f[0])
		}
	}
	return strings.Join(first, "→")
}
