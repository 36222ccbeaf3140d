package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/collect"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
)

// item returns the value of bucket in r's item for metric in window,
// whose labels include extra.
func item(r *runner.Result, window, metric, bucket string, extra map[string]string) (float64, bool) {
	for _, it := range r.DataItems {
		if it.Labels[collect.LabelMetric] != metric || !strings.HasSuffix(it.Labels[collect.LabelName], "/"+window) {
			continue
		}
		match := true
		for k, v := range extra {
			if it.Labels[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		v, ok := it.Data[bucket]
		return v, ok
	}
	return 0, false
}

// Metric is one row of the tables: a value of a window.
type Metric struct {
	Label string
	Unit  string
	// HigherIsBetter says which way is good, for the reader.
	HigherIsBetter bool
	Get            func(r *runner.Result, w *runner.Window) (float64, bool)
	// latency is the bucket of a per-pod latency row, which a window with
	// several namespaces shows once per namespace.
	latency string
}

func dataItem(metric, bucket string, extra map[string]string) func(*runner.Result, *runner.Window) (float64, bool) {
	return func(r *runner.Result, w *runner.Window) (float64, bool) {
		return item(r, w.Name, metric, bucket, extra)
	}
}

func incoming(key string) func(*runner.Result, *runner.Window) (float64, bool) {
	return func(r *runner.Result, w *runner.Window) (float64, bool) {
		if len(r.Queue.Samples) == 0 {
			return 0, false
		}
		return r.Queue.IncomingDelta(key, w.Start, w.End), true
	}
}

func attempts(result string) func(*runner.Result, *runner.Window) (float64, bool) {
	return func(r *runner.Result, w *runner.Window) (float64, bool) {
		if len(r.Queue.Samples) == 0 {
			return 0, false
		}
		return r.Queue.AttemptsDelta(result, w.Start, w.End), true
	}
}

// pending returns the mean (or the max) of a queue's pending gauge over
// the window's samples.
func pending(queue string, mean bool) func(*runner.Result, *runner.Window) (float64, bool) {
	return func(r *runner.Result, w *runner.Window) (float64, bool) {
		n, sum, maxV := 0, 0.0, 0.0
		for _, s := range r.Queue.Samples {
			if s.Seconds < w.Start || s.Seconds > w.End {
				continue
			}
			v := s.Pending[queue]
			n++
			sum += v
			maxV = math.Max(maxV, v)
		}
		if n == 0 {
			return 0, false
		}
		if mean {
			return sum / float64(n), true
		}
		return maxV, true
	}
}

// creationRate is the pod creation rate of the op that opened the window,
// or of the fastest createPods op in it.
func creationRate(r *runner.Result, w *runner.Window) (float64, bool) {
	best := 0.0
	for _, op := range r.Ops {
		if op.Opcode != "createPods" || op.CreateRate == 0 || op.Created < 30 {
			continue
		}
		if op.End >= w.Start && op.Start <= w.End && op.CreateRate > best {
			best = op.CreateRate
		}
	}
	return best, best > 0
}

// CompareMetrics are the rows of the side-by-side table.
var CompareMetrics = []Metric{
	{Label: "SchedulingThroughput Average", Unit: "pods/s", HigherIsBetter: true, Get: dataItem(collect.MetricSchedulingThroughput, "Average", nil)},
	{Label: "SchedulingThroughput Perc50", Unit: "pods/s", HigherIsBetter: true, Get: dataItem(collect.MetricSchedulingThroughput, "Perc50", nil)},
	{Label: "SchedulingThroughput Perc90", Unit: "pods/s", HigherIsBetter: true, Get: dataItem(collect.MetricSchedulingThroughput, "Perc90", nil)},
	{Label: "SchedulingDuration", Unit: "s", Get: dataItem(collect.MetricSchedulingDuration, "Duration", nil)},
	{Label: "pod latency Perc50", Unit: "ms", Get: dataItem(collect.MetricPodSchedulingLatency, "Perc50", nil), latency: "Perc50"},
	{Label: "pod latency Perc90", Unit: "ms", Get: dataItem(collect.MetricPodSchedulingLatency, "Perc90", nil), latency: "Perc90"},
	{Label: "pod latency Perc99", Unit: "ms", Get: dataItem(collect.MetricPodSchedulingLatency, "Perc99", nil), latency: "Perc99"},
	{Label: "pod latency Max", Unit: "ms", Get: dataItem(collect.MetricPodSchedulingLatency, "Max", nil), latency: "Max"},
	{Label: "attempt duration Average, scheduled", Unit: "ms", Get: dataItem(collect.AttemptDurationMetric, "Average", map[string]string{"result": "scheduled"})},
	{Label: "attempt duration Average, unschedulable", Unit: "ms", Get: dataItem(collect.AttemptDurationMetric, "Average", map[string]string{"result": "unschedulable"})},
	{Label: "SLI duration Perc99", Unit: "ms", Get: dataItem(collect.SLIDurationMetric, "Perc99", nil)},
	{Label: "attempts scheduled", Unit: "", Get: attempts("scheduled")},
	{Label: "attempts unschedulable", Unit: "", Get: attempts("unschedulable")},
	{Label: "activeQ mean", Unit: "pods", Get: pending("active", true)},
	{Label: "backoffQ max", Unit: "pods", Get: pending("backoff", false)},
	{Label: "unschedulablePods max", Unit: "pods", Get: pending("unschedulable", false)},
	{Label: "incoming active/PopFromBackoffQ", Unit: "", Get: incoming("active/PopFromBackoffQ")},
	{Label: "incoming active/BackoffComplete", Unit: "", Get: incoming("active/BackoffComplete")},
	{Label: "pod creation rate", Unit: "pods/s", HigherIsBetter: true, Get: creationRate},
}

// compareRows are CompareMetrics for one window of r; a window that
// measures several namespaces (pods of two priorities, say) gets the
// latency rows once per namespace.
func compareRows(r *runner.Result, window string) []Metric {
	nss := latencyNamespaces(r, window)
	if len(nss) < 2 {
		return CompareMetrics
	}
	var out []Metric
	for _, m := range CompareMetrics {
		if m.latency == "" {
			out = append(out, m)
			continue
		}
		for _, ns := range nss {
			out = append(out, Metric{Label: m.Label + " " + ns, Unit: m.Unit, Get: dataItem(collect.MetricPodSchedulingLatency, m.latency, map[string]string{collect.LabelNamespace: ns})})
		}
	}
	return out
}

// latencyNamespaces are the namespaces with latency data items in window.
func latencyNamespaces(r *runner.Result, window string) []string {
	var out []string
	for _, it := range r.DataItems {
		if it.Labels[collect.LabelMetric] == collect.MetricPodSchedulingLatency && strings.HasSuffix(it.Labels[collect.LabelName], "/"+window) {
			out = append(out, it.Labels[collect.LabelNamespace])
		}
	}
	sort.Strings(out)
	return out
}

func fmtValue(v float64, ok bool) string {
	if !ok {
		return "-"
	}
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e9:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// Ratio formats a/b as "1.23x", or "-" when it is undefined.
func Ratio(a, b float64, okA, okB bool) string {
	if !okA || !okB || b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

// Pair is one workload run on both sides of a comparison.
type Pair struct {
	On, Off *runner.Result
}

// PairResults matches the runs of a comparison by test case and workload,
// in the order of the on side.
func PairResults(on, off []*runner.Result) []Pair {
	byName := map[string]*runner.Result{}
	for _, r := range off {
		byName[r.TestCase+"/"+r.Workload] = r
	}
	var pairs []Pair
	for _, r := range on {
		pairs = append(pairs, Pair{On: r, Off: byName[r.TestCase+"/"+r.Workload]})
	}
	return pairs
}

// WriteCompareTable prints one table: for every workload and measurement
// window, each metric with the gate on, off, and on/off.
func WriteCompareTable(w io.Writer, gate string, pairs []Pair) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\t%s=true\t%s=false\ton/off\t\n", "WORKLOAD / WINDOW / METRIC", gate, gate)
	for _, p := range pairs {
		name := p.On.TestCase + "/" + p.On.Workload
		if p.Off == nil || p.On.Error != "" || p.Off.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\t%s\t\t\n", name, status(p.On), status(p.Off))
			continue
		}
		for _, win := range p.On.Windows {
			offWin := findWindow(p.Off, win.Name)
			fmt.Fprintf(tw, "%s  [%s]\t\t\t\t\n", name, win.Name)
			for _, m := range compareRows(p.On, win.Name) {
				a, okA := m.Get(p.On, &win)
				var b float64
				okB := false
				if offWin != nil {
					b, okB = m.Get(p.Off, offWin)
				}
				if !okA && !okB {
					continue
				}
				label := "  " + m.Label
				if m.Unit != "" {
					label += " (" + m.Unit + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", label, fmtValue(a, okA), fmtValue(b, okB), Ratio(a, b, okA, okB))
			}
		}
	}
	return tw.Flush()
}

func status(r *runner.Result) string {
	switch {
	case r == nil:
		return "not run"
	case r.Error != "":
		return "failed"
	default:
		return "ok"
	}
}

func findWindow(r *runner.Result, name string) *runner.Window {
	for i := range r.Windows {
		if r.Windows[i].Name == name {
			return &r.Windows[i]
		}
	}
	return nil
}

// WriteSummaryTable prints one line per measurement window of each run:
// throughput, latency, duration, and how fast the runner created the pods
// compared with how fast the scheduler bound them.
func WriteSummaryTable(w io.Writer, results []*runner.Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "WORKLOAD\tWINDOW\tTHROUGHPUT avg (pods/s)\tp50\tp90\tLATENCY p50 (ms)\tp99\tDURATION (s)\tCREATION (pods/s)\tCREATION/THROUGHPUT\tactiveQ mean\t")
	for _, r := range results {
		name := r.TestCase + "/" + r.Workload
		if r.Variant != "" {
			name += " " + r.Variant
		}
		if len(r.Windows) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t\t\t\t\t\t\t\t\t\n", name, status(r))
			continue
		}
		for i := range r.Windows {
			win := &r.Windows[i]
			get := func(metric, bucket string) (float64, bool) { return item(r, win.Name, metric, bucket, nil) }
			avg, okAvg := get(collect.MetricSchedulingThroughput, "Average")
			p50, ok50 := get(collect.MetricSchedulingThroughput, "Perc50")
			p90, ok90 := get(collect.MetricSchedulingThroughput, "Perc90")
			l50, okL50 := get(collect.MetricPodSchedulingLatency, "Perc50")
			l99, okL99 := get(collect.MetricPodSchedulingLatency, "Perc99")
			d, okD := get(collect.MetricSchedulingDuration, "Duration")
			cr, okCR := creationRate(r, win)
			aq, okAQ := pending("active", true)(r, win)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, win.Name,
				fmtValue(avg, okAvg), fmtValue(p50, ok50), fmtValue(p90, ok90),
				fmtValue(l50, okL50), fmtValue(l99, okL99), fmtValue(d, okD),
				fmtValue(cr, okCR), Ratio(cr, avg, okCR, okAvg), fmtValue(aq, okAQ))
		}
	}
	return tw.Flush()
}

// ThresholdFailures lists every failed threshold check of results.
func ThresholdFailures(results []*runner.Result) []string {
	var out []string
	for _, r := range results {
		for _, e := range r.ThresholdErrors {
			name := r.TestCase + "/" + r.Workload
			if r.Variant != "" {
				name += " " + r.Variant
			}
			out = append(out, name+": "+e)
		}
	}
	sort.Strings(out)
	return out
}
