// Package runnertest runs pkg/perf/runner on embedded control planes, in a
// process of its own: feature gates are process-global, and these tests set
// theirs.
package runnertest

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-schedq/kubectl-schedq/perf/embedded"
	"github.com/kubectl-schedq/kubectl-schedq/perf/internal/clusterconfig"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/collect"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/provider"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

func selectOne(t *testing.T, testCase string) *workload.Selected {
	t.Helper()
	f, err := workload.Load("../testdata/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sel, err := f.Select(testCase, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return sel[0]
}

// runEmbedded runs s on a fresh embedded control plane and checks, before
// stopping it, that every object the runner created carries the run label.
func runEmbedded(t *testing.T, s *workload.Selected) *runner.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	gates, emulation := s.EffectiveFeatureGates()
	inst, err := embedded.Provider{}.Start(ctx, provider.Spec{Workload: s, FeatureGates: gates, EmulationVersion: emulation})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop(ctx)
	checkConfiguration(t, inst.Configuration)
	var progress, warnings bytes.Buffer
	runLabels := map[string]string{runner.RunLabelKey: "test"}
	res, err := runner.Run(ctx, s, inst.Cluster, runner.Options{
		Topic:    "misc",
		Labels:   runLabels,
		Progress: runner.NewProgress(&progress, false),
		Warnings: &warnings,
	})
	t.Logf("progress:\n%s", progress.String())
	if warnings.Len() > 0 {
		t.Logf("warnings:\n%s", warnings.String())
	}
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	client := kubernetes.NewForConfigOrDie(inst.Cluster.RESTConfig)
	unlabelled := labels.SelectorFromSet(runLabels)
	pods, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if !unlabelled.Matches(labels.Set(p.Labels)) {
			t.Errorf("pod %s/%s has no run label", p.Namespace, p.Name)
		}
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if !unlabelled.Matches(labels.Set(n.Labels)) {
			t.Errorf("node %s has no run label", n.Name)
		}
	}
	return res
}

// checkConfiguration: the provider reports the cluster it set up, and that
// is upstream's harness's: etcd a process of its own on a unix socket, its
// WAL fsynced unless the tests turned that off, every request allowed.
func checkConfiguration(t *testing.T, c *runner.Configuration) {
	t.Helper()
	if c == nil {
		t.Fatal("the embedded provider reports no configuration")
	}
	fsync := strconv.FormatBool(os.Getenv(embedded.EtcdUnsafeNoFsyncEnv) == "")
	for key, want := range map[string]string{
		clusterconfig.KeyAuthorization: "[AlwaysAllow]",
		clusterconfig.KeyEtcdServers:   "[unix://DIR/etcd.sock]",
		clusterconfig.KeyEtcdFsync:     fsync,
	} {
		if got := c.Settings[key]; got != want {
			t.Errorf("configuration %q = %q, want %q", key, got, want)
		}
	}
	if got := c.Settings[clusterconfig.KeyEtcd]; !strings.Contains(got, "process of its own") {
		t.Errorf("configuration %q = %q, want etcd in a process of its own", clusterconfig.KeyEtcd, got)
	}
	if !c.FeatureGates["SchedulerPopFromBackoffQ"] {
		t.Errorf("configuration's gates %v: SchedulerPopFromBackoffQ is not on", c.FeatureGates)
	}
}

func metricItems(items []collect.DataItem, metric string) []collect.DataItem {
	var out []collect.DataItem
	for _, it := range items {
		if it.Labels[collect.LabelMetric] == metric {
			out = append(out, it)
		}
	}
	return out
}

// TestRun_tiny runs a small SchedulingBasic-like workload on a real
// embedded control plane and checks what it measured.
func TestRun_tiny(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	s := selectOne(t, "Tiny")
	res := runEmbedded(t, s)

	if len(res.Windows) != 1 {
		t.Fatalf("windows = %d, want 1", len(res.Windows))
	}
	w := res.Windows[0]
	if w.Name != "namespace-3" || w.Bound != 400 {
		t.Errorf("window %q bound %d pods, want namespace-3 and 400", w.Name, w.Bound)
	}
	if len(w.Latencies) != 1 || len(w.Latencies[0].Millis) != 400 || w.Latencies[0].Unmatched != 0 {
		t.Errorf("latencies = %+v, want 400 measured in namespace-3", w.Latencies)
	}
	name := "BenchmarkPerfScheduling/Tiny/10Nodes/namespace-3"
	for _, metric := range []string{
		collect.MetricSchedulingDuration, collect.MetricPodSchedulingLatency,
		collect.AttemptDurationMetric, collect.SLIDurationMetric,
		collect.MetricHeapMemoryUsage, collect.MetricMemoryGrowthRate,
	} {
		items := metricItems(res.DataItems, metric)
		if len(items) == 0 {
			t.Errorf("no %s item", metric)
			continue
		}
		for _, it := range items {
			if it.Labels[collect.LabelName] != name {
				t.Errorf("%s: Name = %q, want %q", metric, it.Labels[collect.LabelName], name)
			}
		}
	}
	// Only the measured 400 pods were scheduled in the window; the 3
	// unschedulable ones were tried before it.
	for _, it := range metricItems(res.DataItems, collect.AttemptDurationMetric) {
		if it.Labels["result"] == "unschedulable" {
			t.Errorf("attempt duration has an unschedulable item in the window: %v", it)
		}
	}
	// The threshold (1 pod/s) is met whenever throughput was sampled.
	if len(res.ThresholdErrors) > 0 {
		t.Errorf("threshold errors: %v", res.ThresholdErrors)
	}
	if tp := metricItems(res.DataItems, collect.MetricSchedulingThroughput); len(tp) == 1 {
		if tp[0].Data["AverageThreshold"] != 1 {
			t.Errorf("throughput item has no AverageThreshold: %v", tp[0].Data)
		}
	}
	if len(res.Queue.Samples) < 2 {
		t.Errorf("queue series has %d samples, want at least 2", len(res.Queue.Samples))
	}
	if got := res.Queue.MaxPending("unschedulable"); got != 3 {
		t.Errorf("max unschedulable pods in the series = %v, want 3", got)
	}
	if res.SchedulerGates["SchedulerPopFromBackoffQ"] != true {
		t.Errorf("scheduler gates = %v, want SchedulerPopFromBackoffQ on", res.SchedulerGates)
	}
	var create *runner.OpStat
	for i := range res.Ops {
		if res.Ops[i].Index == 3 {
			create = &res.Ops[i]
		}
	}
	if create == nil || create.Created != 400 || create.CreateRate <= 0 {
		t.Errorf("op 3 stat = %+v, want 400 pods created at a measured rate", create)
	} else {
		t.Logf("created 400 pods at %.0f pods/s", create.CreateRate)
	}
}

// TestRun_allOps runs every op the runner knows.
func TestRun_allOps(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	s := selectOne(t, "AllOps")
	res := runEmbedded(t, s)
	if len(res.Ops) != len(s.Ops) {
		t.Errorf("ran %d ops, want %d", len(res.Ops), len(s.Ops))
	}
	if len(res.Windows) != 1 || res.Windows[0].Name != "window" || res.Windows[0].Bound != 50 {
		t.Errorf("windows = %+v, want one named window with 50 pods bound", res.Windows)
	}
	for _, it := range res.DataItems {
		if n := it.Labels[collect.LabelName]; !strings.HasSuffix(n, "/AllOps/3Nodes/window") {
			t.Errorf("item Name = %q", n)
		}
	}
}
