package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/outfile"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/collect"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// sampleResult is a run as a child process reports it: a throughput item,
// histogram items with label combos, a latency item, a window and a queue
// series.
func sampleResult(variant string, scale float64) *runner.Result {
	name := "BenchmarkPerfScheduling/SchedulingBasic/500Nodes/namespace-2"
	lb := func(metric string, extra ...string) map[string]string {
		m := map[string]string{collect.LabelMetric: metric, collect.LabelName: name}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	r := &runner.Result{
		Path: "/x/misc/performance-config.yaml", TestCase: "SchedulingBasic", Workload: "500Nodes", Variant: variant,
		Cluster: "embedded control plane",
		DataItems: []collect.DataItem{
			{Data: map[string]float64{"Average": 300 * scale, "Perc50": 310 * scale, "Perc90": 350 * scale, "Perc95": 360 * scale, "Perc99": 370 * scale, "AverageThreshold": 100}, Unit: "pods/s", Labels: lb(collect.MetricSchedulingThroughput)},
			{Data: map[string]float64{"Average": 2.5, "Perc50": 2, "Perc90": 4, "Perc95": 5, "Perc99": 9}, Unit: "ms", Labels: lb(collect.AttemptDurationMetric, "result", "scheduled")},
			{Data: map[string]float64{"Average": 1.5, "Perc50": 1, "Perc90": 2, "Perc95": 3, "Perc99": 4}, Unit: "ms", Labels: lb("scheduler_plugin_execution_duration_seconds", "plugin", "NodeResourcesFit", "extension_point", "Filter")},
			{Data: map[string]float64{"Duration": 3.4 / scale}, Unit: "s", Labels: lb(collect.MetricSchedulingDuration)},
			{Data: map[string]float64{"Average": 800, "Perc50": 700, "Perc90": 1500, "Perc95": 1700, "Perc99": 1900, "Max": 2000}, Unit: "ms", Labels: lb(collect.MetricPodSchedulingLatency, "namespace", "namespace-2")},
		},
		Windows: []runner.Window{{
			Name: "namespace-2", Namespaces: []string{"namespace-2"}, Start: 2, End: 5.4, Bound: 1000, ThroughputStart: 2.5,
			Throughput: []collect.RateSample{{Seconds: 1, Rate: 300 * scale, Total: 400}, {Seconds: 2, Rate: 310 * scale, Total: 700}},
			Latencies:  []collect.Latencies{{Namespace: "namespace-2", Millis: []float64{100, 200, 700, 1500, 2000}}},
		}},
		Ops: []runner.OpStat{{Index: 2, Opcode: "createPods", Start: 2, End: 5.4, Created: 1000, CreateSeconds: 0.8, CreateRate: 1250}},
		Queue: collect.QueueSeries{
			Windows: []collect.SeriesWindow{{Name: "namespace-2", Start: 2, End: 5.4}},
		},
	}
	for i := 0; i < 7; i++ {
		r.Queue.Samples = append(r.Queue.Samples, collect.QueueSample{
			Seconds:  float64(i),
			Pending:  map[string]float64{"active": float64(100 * i), "backoff": 3, "unschedulable": 1, "gated": 0},
			Incoming: map[string]float64{"active/PodAdd": float64(150 * i), "active/PopFromBackoffQ": float64(i)},
			Attempts: map[string]float64{"scheduled": float64(140 * i), "unschedulable": float64(i)},
			InFlight: 1,
		})
	}
	return r
}

// perfDashData is perf-dash's own type for these files (perftype.PerfData
// in kubernetes/perf-tests/perfdash), which it decodes with encoding/json.
type perfDashData struct {
	Version   string `json:"version"`
	DataItems []struct {
		Data   map[string]float64 `json:"data"`
		Unit   string             `json:"unit"`
		Labels map[string]string  `json:"labels"`
	} `json:"dataItems"`
}

// TestWriteDataItems_loadsAsPerfDashExpects writes a file and reads it the
// way perf-dash does: the name it looks for, version v1, every item with
// data, unit and labels, a Metric label, and the same label keys on every
// item ("not applicable" where an item has no such label).
func TestWriteDataItems_loadsAsPerfDashExpects(t *testing.T) {
	dir, err := outfile.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	name, err := WriteDataItems(dir, "", "misc", at, []*runner.Result{sampleResult("", 1)})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir.Path(), name)
	if got, want := filepath.Base(path), "BenchmarkPerfScheduling_benchmark_misc_2026-01-02T03:04:05Z.json"; got != want {
		t.Errorf("file name %q, want %q", got, want)
	}
	// perf-dash: job scheduler-perf-benchmark, prefix BenchmarkPerfScheduling.
	if !regexp.MustCompile(`^BenchmarkPerfScheduling(_.+)?_benchmark_[A-Za-z0-9_.-]+_\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\.json$`).MatchString(filepath.Base(path)) {
		t.Errorf("file name %q does not look like upstream's", filepath.Base(path))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pd perfDashData
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pd); err != nil {
		t.Fatalf("perf-dash cannot decode it: %v", err)
	}
	if pd.Version != "v1" {
		t.Errorf("version %q, want v1", pd.Version)
	}
	if len(pd.DataItems) != 5 {
		t.Fatalf("%d items, want 5", len(pd.DataItems))
	}
	var keys []string
	for k := range pd.DataItems[0].Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	wantKeys := []string{"Metric", "Name", "extension_point", "namespace", "plugin", "result"}
	if diff := cmp.Diff(wantKeys, keys); diff != "" {
		t.Errorf("label keys (-want, +got):\n%s", diff)
	}
	for i, it := range pd.DataItems {
		if len(it.Data) == 0 || it.Unit == "" || it.Labels["Metric"] == "" {
			t.Errorf("item %d lacks data, unit or Metric: %+v", i, it)
		}
		if len(it.Labels) != len(keys) {
			t.Errorf("item %d has labels %v, want every key of %v", i, it.Labels, keys)
		}
		for _, k := range keys {
			if it.Labels[k] == "" {
				t.Errorf("item %d: label %s empty", i, k)
			}
		}
	}
	if got := pd.DataItems[0].Labels["result"]; got != collect.NotApplicable {
		t.Errorf("throughput item result = %q, want %q", got, collect.NotApplicable)
	}
	if _, err := ReadDataItems(path); err != nil {
		t.Errorf("ReadDataItems: %v", err)
	}

	testsupport.Golden(t, filepath.Join("testdata", "dataitems.golden.json"), data, *update)
}

func TestDataItemsFileName(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	if got, want := DataItemsFileName("SchedulerPopFromBackoffQ=false", "backoff drain", at),
		"BenchmarkPerfScheduling_SchedulerPopFromBackoffQ_false_benchmark_backoff_drain_2026-01-02T02:04:05Z.json"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestWriteSeriesCSV(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSeriesCSV(&buf, sampleResult("", 1)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	wantHeader := "seconds,pending_active,pending_backoff,pending_unschedulable,pending_gated,in_flight,attempts_scheduled,attempts_unschedulable,attempts_error,incoming_active/PodAdd,incoming_active/PopFromBackoffQ,window"
	if lines[0] != wantHeader {
		t.Errorf("header\n%s\nwant\n%s", lines[0], wantHeader)
	}
	if len(lines) != 8 || lines[3] != "2.000,200,3,1,0,1,280,2,0,300,2,namespace-2" || !strings.HasSuffix(lines[1], ",") {
		t.Errorf("rows:\n%s", strings.Join(lines[1:], "\n"))
	}
}

func TestWriteCompareTable(t *testing.T) {
	on, off := sampleResult("SchedulerPopFromBackoffQ=true", 1), sampleResult("SchedulerPopFromBackoffQ=false", 0.5)
	var buf bytes.Buffer
	if err := WriteCompareTable(&buf, "SchedulerPopFromBackoffQ", PairResults([]*runner.Result{on}, []*runner.Result{off})); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"SchedulerPopFromBackoffQ=true",
		"SchedulingBasic/500Nodes  [namespace-2]",
		"SchedulingThroughput Average (pods/s)",
		"300  ", "150  ", "2.00x",
		"SchedulingDuration (s)", "0.50x",
		"incoming active/PopFromBackoffQ",
		"pod creation rate (pods/s)",
		"activeQ mean (pods)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// The sample has no unschedulable attempt duration: no such row.
	if strings.Contains(out, "unschedulable (ms)") {
		t.Errorf("table has a row without values:\n%s", out)
	}
	off.Error = "boom"
	buf.Reset()
	_ = WriteCompareTable(&buf, "SchedulerPopFromBackoffQ", PairResults([]*runner.Result{on}, []*runner.Result{off}))
	if !strings.Contains(buf.String(), "failed") {
		t.Errorf("a failed side is not shown:\n%s", buf.String())
	}
}

// A window over two namespaces (two priorities) shows the latency of each.
func TestWriteCompareTable_latencyPerNamespace(t *testing.T) {
	on, off := sampleResult("on", 1), sampleResult("off", 1)
	for _, r := range []*runner.Result{on, off} {
		for _, it := range r.DataItems {
			if it.Labels[collect.LabelMetric] == collect.MetricPodSchedulingLatency {
				low := collect.DataItem{Data: map[string]float64{"Perc50": 4321, "Perc90": 5000, "Perc99": 6000, "Max": 7000}, Unit: "ms", Labels: map[string]string{}}
				for k, v := range it.Labels {
					low.Labels[k] = v
				}
				low.Labels[collect.LabelNamespace] = "blocked-low"
				r.DataItems = append(r.DataItems, low)
				break
			}
		}
	}
	var buf bytes.Buffer
	if err := WriteCompareTable(&buf, "G", PairResults([]*runner.Result{on}, []*runner.Result{off})); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"pod latency Perc50 blocked-low (ms)", "4321", "pod latency Perc50 namespace-2 (ms)", "700"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "pod latency Perc50 (ms)") {
		t.Errorf("a window of two namespaces still has one latency row:\n%s", out)
	}
}

func TestWriteSummaryTable(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSummaryTable(&buf, []*runner.Result{sampleResult("", 1)}); err != nil {
		t.Fatal(err)
	}
	// Creation 1250 pods/s against a throughput of 300: 4.17x.
	if out := buf.String(); !strings.Contains(out, "1250") || !strings.Contains(out, "4.17x") {
		t.Errorf("summary:\n%s", out)
	}
}

// TestHTML_selfContained checks that the report loads nothing: no script,
// no stylesheet or image from elsewhere, and one inline SVG per chart.
func TestHTML_selfContained(t *testing.T) {
	for _, gate := range []string{"", "SchedulerPopFromBackoffQ"} {
		h := HTML{Title: "t", Command: "schedq-perf run x", Generated: time.Unix(0, 0), Host: "test", Gate: gate,
			Results: []*runner.Result{sampleResult("", 1)}}
		if gate != "" {
			h.Pairs = PairResults([]*runner.Result{sampleResult(gate+"=true", 1)}, []*runner.Result{sampleResult(gate+"=false", 0.5)})
		}
		var buf bytes.Buffer
		if err := h.Write(&buf); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, banned := range []string{"<script", "src=", "<link", "@import", "url("} {
			if strings.Contains(out, banned) {
				t.Errorf("gate %q: report contains %q", gate, banned)
			}
		}
		want := 3 // queue, latency, throughput
		if gate != "" {
			want = 4 // two queue charts
		}
		if n := strings.Count(out, "<svg"); n != want {
			t.Errorf("gate %q: %d charts, want %d", gate, n, want)
		}
		if strings.Count(out, "<polyline") < 5 {
			t.Errorf("gate %q: charts have no lines", gate)
		}
	}
}

func TestNiceTicks(t *testing.T) {
	if diff := cmp.Diff([]float64{0, 20, 40, 60, 80, 100}, niceTicks(0, 97, 5)); diff != "" {
		t.Errorf("(-want, +got):\n%s", diff)
	}
	// What a results.json may hold: each ends, with a few ticks at most.
	for _, tc := range []struct{ lo, hi float64 }{
		{1e17, 1e17 + 100}, // the step does not move a float64 this far out
		{-1e308, 1e308},    // the span overflows
		{math.Inf(-1), 1},
		{0, math.NaN()},
		{5, 5},
	} {
		done := make(chan []float64, 1)
		go func() { done <- niceTicks(tc.lo, tc.hi, 5) }()
		select {
		case ticks := <-done:
			if len(ticks) == 0 || len(ticks) > 13 {
				t.Errorf("niceTicks(%g, %g) = %d ticks", tc.lo, tc.hi, len(ticks))
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("niceTicks(%g, %g) does not end", tc.lo, tc.hi)
		}
	}
}

// TestThin: a line of far more points than pixel columns keeps each
// column's first, lowest, highest and last point, so peaks survive; a
// short line is drawn as it is.
func TestThin(t *testing.T) {
	var l Line
	for i := range 100000 {
		y := float64(i % 7)
		if i == 54321 {
			y = 1000 // one spike
		}
		l.X, l.Y = append(l.X, float64(i)), append(l.Y, y)
	}
	px := func(x float64) float64 { return x / 100000 * 500 }
	got := thin(l, px, 500)
	if len(got.X) > 4*500 || len(got.X) < 500 {
		t.Errorf("thin kept %d points of %d for 500 columns", len(got.X), len(l.X))
	}
	if !slices.Contains(got.Y, 1000) {
		t.Error("the spike is gone")
	}
	if !slices.IsSorted(got.X) || got.X[0] != 0 || got.X[len(got.X)-1] != 99999 {
		t.Errorf("points out of order or ends lost: first %v, last %v", got.X[0], got.X[len(got.X)-1])
	}
	short := Line{X: []float64{1, 2, 3}, Y: []float64{1, 2, 3}}
	if got := thin(short, px, 500); len(got.X) != 3 {
		t.Errorf("a short line thinned to %d points", len(got.X))
	}
}
