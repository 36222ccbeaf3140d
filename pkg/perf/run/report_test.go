package run

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/collect"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
)

func TestReport(t *testing.T) {
	result := func(variant string, avg float64) *runner.Result {
		return &runner.Result{
			Path: "/w/backoff-drain.yaml", TestCase: "BackoffDrain", Workload: "4Nodes", Variant: variant,
			DataItems: []collect.DataItem{{Data: map[string]float64{"Average": avg}, Unit: "pods/s", Labels: map[string]string{
				collect.LabelMetric: collect.MetricSchedulingThroughput, collect.LabelName: "BenchmarkPerfScheduling/BackoffDrain/4Nodes/drain"}}},
			Windows: []runner.Window{{Name: "drain"}},
		}
	}
	tests := []struct {
		name    string
		results []*runner.Result
		want    []string
	}{
		{"compare", []*runner.Result{result("G=true", 300), result("G=false", 100)}, []string{"G=true", "G=false", "3.00x"}},
		{"single", []*runner.Result{result("", 300)}, []string{"THROUGHPUT", "300"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			data, err := json.Marshal(tt.results)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "results.json"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			table, err := Report(dir, "perf report "+dir)
			if err != nil {
				t.Fatal(err)
			}
			out := bytes.NewBufferString(table)
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			for _, f := range []string{"report.html", "summary.txt"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "results.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Report(dir, "perf report"); err == nil || !strings.Contains(err.Error(), "results.json: not the results") {
		t.Errorf("malformed results.json: %v", err)
	}
}
