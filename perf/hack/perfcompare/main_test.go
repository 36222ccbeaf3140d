package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kubectl-schedq/kubectl-schedq/perf/internal/clusterconfig"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/collect"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
)

const testWorkload = "SchedulingBasic/500Nodes_5000Pods"

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeRun writes one run of one side as the harnesses leave it.
func writeRun(t *testing.T, dir string, average float64, config *runner.Configuration, ours bool, load string) {
	t.Helper()
	writeJSON(t, filepath.Join(dir, "BenchmarkPerfScheduling_benchmark_misc_2026-01-01T00:00:00Z.json"), collect.DataItems{
		Version: collect.DataItemsVersion,
		DataItems: []collect.DataItem{{
			Data: map[string]float64{"Average": average, "Perc50": average - 10}, Unit: "pods/s",
			Labels: map[string]string{collect.LabelMetric: collect.MetricSchedulingThroughput, collect.LabelName: "BenchmarkPerfScheduling/" + testWorkload + "/namespace-2"},
		}},
	})
	if ours {
		tc, w, _ := strings.Cut(testWorkload, "/")
		writeJSON(t, filepath.Join(dir, "results.json"), []*runner.Result{{TestCase: tc, Workload: w, Configuration: config}})
	} else {
		writeJSON(t, filepath.Join(dir, configurationFile), map[string]*runner.Configuration{testWorkload: config})
	}
	if err := os.WriteFile(filepath.Join(dir, "load"), []byte(load), 0o644); err != nil {
		t.Fatal(err)
	}
}

func config(authz string, gate bool) *runner.Configuration {
	return &runner.Configuration{
		Settings:     map[string]string{clusterconfig.KeyAuthorization: authz, clusterconfig.KeyEtcdFsync: "true"},
		FeatureGates: map[string]bool{"SchedulerPopFromBackoffQ": true, "SomeOtherGate": gate},
	}
}

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ours       []float64
		oursAuthz  string
		oursGate   bool
		wantWithin bool
		want       []string // regexps on the output
		dontWant   []string
	}{
		{
			name: "same configuration, within", ours: []float64{210, 190, 200}, oursAuthz: "[AlwaysAllow]",
			wantWithin: true,
			want: []string{
				`median\s+200\.0\s+190\.0\s+200\.0\s+190\.0\s+1\.00x`,
				`ratio 1\.000: within the ±10% target`,
				`1\s+200\.0\s+190\.0\s+3\.1→4\.2\s+210\.0`,
				`\n\s+kube-apiserver --authorization-mode\s+\[AlwaysAllow\]\s+\[AlwaysAllow\]`,
				`feature gate SchedulerPopFromBackoffQ\s+true\s+true`,
				`2 feature gates read on each side; 0 differ`,
			},
			dontWant: []string{`SomeOtherGate`},
		},
		{
			name: "RBAC and a gate differ, outside", ours: []float64{300, 260, 280}, oursAuthz: "[Node,RBAC]", oursGate: true,
			want: []string{
				`ratio 1\.400: OUTSIDE the ±10% target`,
				`\*\s+kube-apiserver --authorization-mode\s+\[AlwaysAllow\]\s+\[Node,RBAC\]`,
				`\*\s+feature gate SomeOtherGate\s+false\s+true`,
				`2 feature gates read on each side; 1 differ`,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for i, avg := range []float64{200, 180, 220} {
				writeRun(t, filepath.Join(dir, "up", string(rune('1'+i))), avg, config("[AlwaysAllow]", false), false, "3.1 2 1\n4.2 2 1\n")
			}
			for i, avg := range tc.ours {
				writeRun(t, filepath.Join(dir, "ours", string(rune('1'+i))), avg, config(tc.oursAuthz, tc.oursGate), true, "4.2 2 1\n5.0 2 1\n")
			}
			var out strings.Builder
			within, err := compare(&out, filepath.Join(dir, "up"), filepath.Join(dir, "ours"), testWorkload, 0.10)
			if err != nil {
				t.Fatal(err)
			}
			if within != tc.wantWithin {
				t.Errorf("within = %t, want %t", within, tc.wantWithin)
			}
			for _, re := range tc.want {
				if !regexp.MustCompile(re).MatchString(out.String()) {
					t.Errorf("output lacks %s:\n%s", re, out.String())
				}
			}
			for _, re := range tc.dontWant {
				if regexp.MustCompile(re).MatchString(out.String()) {
					t.Errorf("output has %s:\n%s", re, out.String())
				}
			}
		})
	}
}
