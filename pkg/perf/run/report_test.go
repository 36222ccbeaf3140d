package run

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/collect"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/report"
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
			table, err := Report(context.Background(), dir, "perf report "+dir)
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
	if _, err := Report(context.Background(), dir, "perf report"); err == nil || !strings.Contains(err.Error(), "results.json: not the results") {
		t.Errorf("malformed results.json: %v", err)
	}
}

// TestReport_untrustedDir: perf report DIR writes only DIR's own
// report.html and summary.txt, replacing links there rather than writing
// through them, and reads results.json only from a regular file, capped.
func TestReport_untrustedDir(t *testing.T) {
	good, err := json.Marshal([]*runner.Result{{Path: "/w/x.yaml", TestCase: "T", Workload: "w"}})
	if err != nil {
		t.Fatal(err)
	}
	const secret = "the target, unchanged\n"
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, dir, outside string)
		wantErr string
	}{
		{name: "report.html and summary.txt linked to files elsewhere", prepare: func(t *testing.T, dir, outside string) {
			for _, f := range []string{"report.html", "summary.txt"} {
				if err := os.Symlink(filepath.Join(outside, "target"), filepath.Join(dir, f)); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{name: "report.html linked to a directory elsewhere", prepare: func(t *testing.T, dir, outside string) {
			if err := os.Symlink(outside, filepath.Join(dir, "report.html")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "summary.txt a dangling link", prepare: func(t *testing.T, dir, outside string) {
			if err := os.Symlink(filepath.Join(outside, "new"), filepath.Join(dir, "summary.txt")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "results.json a link to /dev/zero", wantErr: "results.json is a character device, not a regular file", prepare: func(t *testing.T, dir, outside string) {
			if err := os.Remove(filepath.Join(dir, "results.json")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("/dev/zero", filepath.Join(dir, "results.json")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "results.json a FIFO nobody writes to", wantErr: "results.json is a named pipe (FIFO), not a regular file", prepare: func(t *testing.T, dir, outside string) {
			if err := os.Remove(filepath.Join(dir, "results.json")); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(filepath.Join(dir, "results.json"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "results.json larger than the cap", wantErr: "results.json: more than 256 MiB, the most that is read from it", prepare: func(t *testing.T, dir, outside string) {
			if err := os.Truncate(filepath.Join(dir, "results.json"), report.MaxReadBytes+1); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			dir, outside := filepath.Join(base, "run"), filepath.Join(base, "outside")
			for _, d := range []string{dir, outside} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(outside, "target"), []byte(secret), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "results.json"), good, 0o644); err != nil {
				t.Fatal(err)
			}
			tc.prepare(t, dir, outside)
			began := time.Now()
			_, err := Report(context.Background(), dir, "perf report")
			if took := time.Since(began); took > 2*time.Second {
				t.Errorf("Report took %v", took)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("Report() error = %v, want one containing %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			} else {
				for _, f := range []string{"report.html", "summary.txt"} {
					if fi, err := os.Lstat(filepath.Join(dir, f)); err != nil || !fi.Mode().IsRegular() {
						t.Errorf("%s: %v, %v; want a regular file", f, fi, err)
					}
				}
			}
			if got, err := os.ReadFile(filepath.Join(outside, "target")); err != nil || string(got) != secret {
				t.Errorf("the file elsewhere now reads %q (%v)", got, err)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 1 {
				t.Errorf("elsewhere holds %v, want only the target", entries)
			}
		})
	}
}

// TestReport_linkAsDir: DIR itself a link is refused, and nothing is
// written where it points.
func TestReport_linkAsDir(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal([]*runner.Result{{Path: "/w/x.yaml", TestCase: "T", Workload: "w"}})
	if err := os.WriteFile(filepath.Join(real, "results.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	_, err := Report(context.Background(), link, "perf report")
	if err == nil || !strings.Contains(err.Error(), "link is a symbolic link (to "+real+"): name the directory itself") {
		t.Errorf("Report() error = %v, want the link refused", err)
	}
	if entries, _ := os.ReadDir(real); len(entries) != 1 {
		t.Errorf("the link's target holds %v, want results.json only", entries)
	}
}
