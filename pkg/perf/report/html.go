package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
)

// HTML is the self-contained report: every chart is inline SVG, the page
// loads nothing else.
type HTML struct {
	Title     string
	Command   string
	Generated time.Time
	// Host describes the machine (OS, CPUs, load).
	Host string
	// Gate is the compared feature gate, empty for a plain run.
	Gate    string
	Results []*runner.Result
	Pairs   []Pair
	Notes   []string
}

var queueColors = map[string]string{
	metricscrape.QueueActive:        "#2ca02c",
	metricscrape.QueueBackoff:       "#ff7f0e",
	metricscrape.QueueUnschedulable: "#d62728",
	metricscrape.QueueGated:         "#7f7f7f",
}

// QueueChart is the queue's occupancy over the workload: the pending gauge
// of each queue and the in-flight pods, with the measurement windows
// shaded. yMax > 0 fixes the scale.
func QueueChart(r *runner.Result, title string, yMax float64) Chart {
	c := Chart{Title: title, XLabel: "seconds since the workload started", YLabel: "pods", YMax: yMax}
	for _, q := range metricscrape.Queues {
		l := Line{Name: q, Color: queueColors[q], Step: true}
		for _, s := range r.Queue.Samples {
			l.X = append(l.X, s.Seconds)
			l.Y = append(l.Y, s.Pending[q])
		}
		c.Lines = append(c.Lines, l)
	}
	inflight := Line{Name: "in flight", Color: "#1f77b4", Dashed: true, Step: true}
	for _, s := range r.Queue.Samples {
		inflight.X = append(inflight.X, s.Seconds)
		inflight.Y = append(inflight.Y, s.InFlight)
	}
	c.Lines = append(c.Lines, inflight)
	for _, w := range r.Queue.Windows {
		c.Bands = append(c.Bands, Band{From: w.Start, To: w.End, Label: w.Name})
	}
	return c
}

func maxQueue(rs ...*runner.Result) float64 {
	m := 0.0
	for _, r := range rs {
		if r == nil {
			continue
		}
		for _, s := range r.Queue.Samples {
			for _, v := range s.Pending {
				m = math.Max(m, v)
			}
			m = math.Max(m, s.InFlight)
		}
	}
	return m
}

// LatencyLine is the cumulative distribution of a window's pod latencies.
func LatencyLine(name, color string, dashed bool, w *runner.Window) Line {
	l := Line{Name: name, Color: color, Dashed: dashed}
	var all []float64
	for _, lat := range w.Latencies {
		all = append(all, lat.Millis...)
	}
	if len(all) == 0 {
		return l
	}
	sortFloats(all)
	step := max(1, len(all)/400)
	for i := 0; i < len(all); i += step {
		l.X = append(l.X, all[i])
		l.Y = append(l.Y, float64(i+1)/float64(len(all)))
	}
	l.X = append(l.X, all[len(all)-1])
	l.Y = append(l.Y, 1)
	return l
}

// ThroughputLine is a window's throughput samples, seconds since the
// window opened.
func ThroughputLine(name, color string, dashed bool, w *runner.Window) Line {
	l := Line{Name: name, Color: color, Dashed: dashed, StepBefore: true}
	if len(w.Throughput) > 0 {
		// The first interval starts at the baseline tick.
		l.X = append(l.X, w.ThroughputStart-w.Start)
		l.Y = append(l.Y, w.Throughput[0].Rate)
	}
	for _, s := range w.Throughput {
		l.X = append(l.X, w.ThroughputStart-w.Start+s.Seconds)
		l.Y = append(l.Y, s.Rate)
	}
	return l
}

type htmlRun struct {
	Title      string
	Info       []string
	Error      string
	Thresholds []string
	Warnings   []string
	Charts     []template.HTML
}

// Write renders the page.
func (h HTML) Write(w io.Writer) error {
	var runs []htmlRun
	var table bytes.Buffer
	if h.Gate != "" {
		if err := WriteCompareTable(&table, h.Gate, h.Pairs); err != nil {
			return err
		}
		for _, p := range h.Pairs {
			runs = append(runs, comparedRun(h.Gate, p))
		}
	} else {
		if err := WriteSummaryTable(&table, h.Results); err != nil {
			return err
		}
		for _, r := range h.Results {
			runs = append(runs, singleRun(r))
		}
	}
	return pageTemplate.Execute(w, map[string]any{
		"H":     h,
		"Table": table.String(),
		"Runs":  runs,
	})
}

func runInfo(r *runner.Result) []string {
	info := []string{
		fmt.Sprintf("%s — %s, started %s, ran %v (cluster start-up %v)", r.Variant, r.Cluster, r.Start.UTC().Format(time.RFC3339), r.Duration.Round(time.Millisecond), r.StartupDuration.Round(time.Millisecond)),
	}
	if r.Variant == "" {
		info[0] = strings.TrimPrefix(info[0], " — ")
	}
	if r.SchedulerVersion != "" {
		info = append(info, "kube-scheduler "+r.SchedulerVersion)
	}
	if len(r.FeatureGates) > 0 {
		info = append(info, "feature gates: "+formatGates(r.FeatureGates))
	}
	if r.EmulationVersion != "" {
		info = append(info, "emulation version "+r.EmulationVersion)
	}
	if len(r.SchedulerGates) > 0 {
		info = append(info, "scheduler reports: "+formatGates(r.SchedulerGates))
	}
	if r.Queue.Errors > 0 {
		info = append(info, fmt.Sprintf("%d failed metrics reads (last: %s)", r.Queue.Errors, r.Queue.LastError))
	}
	return info
}

func formatGates(g map[string]bool) string {
	var parts []string
	for _, k := range sortedKeys(g) {
		parts = append(parts, fmt.Sprintf("%s=%t", k, g[k]))
	}
	return strings.Join(parts, ", ")
}

func singleRun(r *runner.Result) htmlRun {
	run := htmlRun{Title: r.TestCase + "/" + r.Workload, Info: runInfo(r), Error: r.Error, Thresholds: r.ThresholdErrors, Warnings: r.Warnings}
	run.Charts = append(run.Charts, template.HTML(QueueChart(r, "Queue occupancy", 0).SVG()))
	for i := range r.Windows {
		win := &r.Windows[i]
		lat := Chart{Title: "Pod scheduling latency, window " + win.Name, XLabel: "ms from create request to bind", YLabel: "fraction of pods",
			Lines: []Line{LatencyLine(win.Name, Palette[0], false, win)}}
		tp := Chart{Title: "SchedulingThroughput samples, window " + win.Name, XLabel: "seconds since the window opened", YLabel: "pods/s",
			Lines: []Line{ThroughputLine(win.Name, Palette[0], false, win)}}
		run.Charts = append(run.Charts, template.HTML(lat.SVG()), template.HTML(tp.SVG()))
	}
	return run
}

func comparedRun(gate string, p Pair) htmlRun {
	run := htmlRun{Title: p.On.TestCase + "/" + p.On.Workload}
	for _, r := range []*runner.Result{p.On, p.Off} {
		if r == nil {
			continue
		}
		run.Info = append(run.Info, runInfo(r)...)
		if r.Error != "" {
			run.Error += r.Variant + ": " + r.Error + "\n"
		}
		for _, t := range r.ThresholdErrors {
			run.Thresholds = append(run.Thresholds, r.Variant+": "+t)
		}
		for _, wn := range r.Warnings {
			run.Warnings = append(run.Warnings, r.Variant+": "+wn)
		}
	}
	ymax := maxQueue(p.On, p.Off)
	run.Charts = append(run.Charts, template.HTML(QueueChart(p.On, "Queue occupancy, "+gate+"=true", ymax).SVG()))
	if p.Off != nil {
		run.Charts = append(run.Charts, template.HTML(QueueChart(p.Off, "Queue occupancy, "+gate+"=false", ymax).SVG()))
	}
	for i := range p.On.Windows {
		on := &p.On.Windows[i]
		var off *runner.Window
		if p.Off != nil {
			off = findWindow(p.Off, on.Name)
		}
		lat := Chart{Title: "Pod scheduling latency, window " + on.Name, XLabel: "ms from create request to bind", YLabel: "fraction of pods",
			Lines: []Line{LatencyLine("on", Palette[0], false, on)}}
		tp := Chart{Title: "SchedulingThroughput samples, window " + on.Name, XLabel: "seconds since the window opened", YLabel: "pods/s",
			Lines: []Line{ThroughputLine("on", Palette[0], false, on)}}
		if off != nil {
			lat.Lines = append(lat.Lines, LatencyLine("off", Palette[1], true, off))
			tp.Lines = append(tp.Lines, ThroughputLine("off", Palette[1], true, off))
		}
		run.Charts = append(run.Charts, template.HTML(lat.SVG()), template.HTML(tp.SVG()))
	}
	return run
}

var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.H.Title}}</title>
<style>
body { font-family: sans-serif; margin: 1.5em; color: #222; max-width: 1200px; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em; border-bottom: 1px solid #ccc; }
pre { background: #f6f6f6; padding: .8em; overflow-x: auto; font-size: 12px; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
.charts svg { border: 1px solid #eee; background: #fff; }
.err { color: #b00; white-space: pre-wrap; } .warn { color: #8a6d00; }
ul.info { color: #555; font-size: .9em; }
</style>
</head>
<body>
<h1>{{.H.Title}}</h1>
<ul class="info">
<li>{{.H.Command}}</li>
<li>generated {{.H.Generated.UTC.Format "2006-01-02 15:04:05 UTC"}} on {{.H.Host}}</li>
{{range .H.Notes}}<li>{{.}}</li>{{end}}
</ul>
<pre>{{.Table}}</pre>
{{range .Runs}}
<h2>{{.Title}}</h2>
<ul class="info">{{range .Info}}<li>{{.}}</li>{{end}}</ul>
{{if .Error}}<p class="err">{{.Error}}</p>{{end}}
{{range .Thresholds}}<p class="err">threshold: {{.}}</p>{{end}}
{{range .Warnings}}<p class="warn">warning: {{.}}</p>{{end}}
<div class="charts">{{range .Charts}}{{.}}{{end}}</div>
{{end}}
</body>
</html>
`))
