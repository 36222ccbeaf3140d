package explainacc

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
	"github.com/kubectl-schedq/kubectl-schedq/perf/embedded"
	"github.com/kubectl-schedq/kubectl-schedq/perf/groundtruth"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
)

// Environment of TestExplainSpeed.
const (
	// SpeedEnv turns the test on: it takes minutes.
	SpeedEnv = "SCHEDQ_EXPLAIN_SPEED"
	// SpeedPodsEnv and SpeedRunsEnv change the number of pending pods
	// (5000) and of timed runs of each command (7).
	SpeedPodsEnv = "SCHEDQ_EXPLAIN_SPEED_PODS"
	SpeedRunsEnv = "SCHEDQ_EXPLAIN_SPEED_RUNS"
	// PluginEnv and KubectlEnv name the binaries; by default
	// bin/kubectl-schedq and bin/kubectl of the repository (make build,
	// make kubectl), then kubectl on PATH, then getpods, a client-go
	// program that lists the pods in pages of 500 and prints them as one
	// JSON List, as kubectl does.
	PluginEnv  = "SCHEDQ_PLUGIN"
	KubectlEnv = "KUBECTL"
)

// speedTarget: explain -A may take at most this many times as long as
// kubectl get pods -A -o json.
const speedTarget = 1.5

// TestExplainSpeed times the built `kubectl schedq explain -A` against
// `kubectl get pods -A -o json`, on the same embedded control plane holding
// 5,000 pending pods (each rejected by NodeResourcesFit, with its
// FailedScheduling event), running them alternately, and holds explain to
// 1.5 times kubectl's median. The scheduler's /metrics is trimmed to what a
// real kube-scheduler serves (see hideAPIServerMetrics).
func TestExplainSpeed(t *testing.T) {
	if testing.Short() || os.Getenv(SpeedEnv) == "" {
		t.Skipf("set %s=1 (make explain-speed): starts a control plane with 5,000 pods", SpeedEnv)
	}
	pods := envInt(t, SpeedPodsEnv, 5000)
	runs := envInt(t, SpeedRunsEnv, 7)
	plugin, kubectl, kubectlName := speedBinaries(t)
	ctx := context.Background()
	cp := startSpeedControlPlane(t, ctx)
	park(t, ctx, cp, 0, pods)

	checkExplainAll(t, ctx, cp, plugin, pods)

	// Alternate the two, after one untimed run of each.
	var kt, et, jt []time.Duration
	for i := -1; i < runs; i++ {
		for _, c := range []struct {
			bin  string
			args []string
			into *[]time.Duration
		}{
			{kubectl, []string{"get", "pods", "-A", "-o", "json"}, &kt},
			{plugin, []string{"explain", "-A"}, &et},
			{plugin, []string{"explain", "-A", "-o=json"}, &jt},
		} {
			start := time.Now()
			if out, err := run(ctx, cp.KubeconfigPath, c.bin, c.args...); err != nil {
				t.Fatalf("%s %s: %v\n%s", c.bin, strings.Join(c.args, " "), err, out)
			}
			if i >= 0 {
				*c.into = append(*c.into, time.Since(start))
			}
		}
	}
	km, em := median(kt), median(et)
	ratio := float64(em) / float64(km)
	var report strings.Builder
	fmt.Fprintf(&report, "## explain -A against %s, %d pending pods (embedded control plane)\n\n", kubectlName, pods)
	fmt.Fprintf(&report, "| command | median | min | max | runs |\n|---|---:|---:|---:|---|\n")
	for _, r := range []struct {
		name string
		ds   []time.Duration
	}{{kubectlName, kt}, {"kubectl schedq explain -A", et}, {"kubectl schedq explain -A -o json (for reference)", jt}} {
		fmt.Fprintf(&report, "| %s | %s | %s | %s | %s |\n", r.name, dur(median(r.ds)), dur(percentile(r.ds, 0)), dur(percentile(r.ds, 1)), durs(r.ds))
	}
	fmt.Fprintf(&report, "\nratio of medians: **%.2f** (target ≤ %.1f)\n", ratio, speedTarget)
	t.Log("\n" + report.String())
	writeReport(t, "speed.md", report.String())
	if ratio > speedTarget {
		t.Errorf("explain -A took %.2f× as long as %s (median %v vs %v), want at most %.1f×", ratio, kubectlName, em, km, speedTarget)
	}
}

// findKubectl returns the kubectl to compare with, and what to call it.
func findKubectl(t *testing.T, root string) (path, name string) {
	t.Helper()
	if p := os.Getenv(KubectlEnv); p != "" {
		if filepath.Base(p) == "getpods" {
			return p, getpodsName
		}
		return p, "kubectl get pods -A -o json"
	}
	if p := filepath.Join(root, "bin", "kubectl"); fileExists(p) {
		return p, "kubectl get pods -A -o json"
	}
	if p, err := exec.LookPath("kubectl"); err == nil {
		return p, "kubectl get pods -A -o json"
	}
	p := buildGetpods(t)
	t.Logf("no kubectl binary: comparing with getpods, client-go's list in pages of 500 printed as kubectl's JSON List")
	return p, getpodsName
}

// buildGetpods builds ./getpods.
func buildGetpods(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "getpods")
	if out, err := exec.Command("go", "build", "-o", p, "./getpods").CombinedOutput(); err != nil {
		t.Fatalf("building getpods: %v\n%s", err, out)
	}
	return p
}

// getpodsName names ./getpods in the reports (KUBECTL may name a built one).
const getpodsName = "getpods (client-go list + JSON print, standing in for kubectl get pods -A -o json)"

// run runs bin with the kubeconfig, its output discarded unless it fails.
func run(ctx context.Context, kubeconfig, bin string, args ...string) ([]byte, error) {
	c := exec.CommandContext(ctx, bin, args...)
	c.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	if len(args) > 0 && args[len(args)-1] == "json" && strings.Contains(bin, "kubectl-schedq") {
		return c.Output()
	}
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	defer devNull.Close()
	var stderr strings.Builder
	c.Stdout, c.Stderr = devNull, &stderr
	err = c.Run()
	return []byte(stderr.String()), err
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive number", name, s)
	}
	return n
}

func median(ds []time.Duration) time.Duration { return percentile(ds, 0.5) }

func durs(ds []time.Duration) string {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = dur(d)
	}
	return strings.Join(parts, ", ")
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Environment of TestExplainScale.
const (
	// ScaleEnv turns the test on: it takes tens of minutes.
	ScaleEnv = "SCHEDQ_EXPLAIN_SCALE"
	// ScaleSizesEnv lists the numbers of pending pods, ascending and comma
	// separated (1000,5000,20000,50000); ScaleRunsEnv is the number of timed
	// runs of each command at each size (3).
	ScaleSizesEnv = "SCHEDQ_EXPLAIN_SCALE_SIZES"
	ScaleRunsEnv  = "SCHEDQ_EXPLAIN_SCALE_RUNS"
)

// Targets of TestExplainScale: explain -A within kubectl's list's time at
// every size, and within a plain client-go list's (getpods -list, client-go's
// defaults) from plainListFrom pods up; its own work linear in the pods,
// within noise: its CPU time per pod at each size at most scaleLinearTarget
// times its CPU time per pod at the smallest size (see growth); and its peak RSS under scaleRSSTarget per pending pod beyond what it
// takes with none (some 40 MB, the binary and client-go's own: 40 KB per pod
// at 1,000 pods, whatever explain does with them).
const (
	scaleTarget       = 1.0
	scaleLinearTarget = 1.25
	scaleRSSTarget    = 10 << 10 // bytes
	// Below this many pods explain's fixed work (discovery, the scrape,
	// the nodes) is a large part of its time and a bare list does none.
	plainListFrom = 5000
)

// TestExplainScale grows one embedded control plane through the sizes of
// ScaleSizesEnv (pending pods, each rejected by NodeResourcesFit with its
// FailedScheduling event, see park) and at each size times
// the built `kubectl schedq explain -A` against `kubectl get pods -A -o
// json`, alternately, and reads each one's peak RSS (getrusage of the child,
// ru_maxrss). It reports the time per 1,000 pods, to show how the time
// grows, and the RSS per pending pod, and holds explain to the list's time
// and to scaleRSSTarget per pod at every size.
func TestExplainScale(t *testing.T) {
	if testing.Short() || os.Getenv(ScaleEnv) == "" {
		t.Skipf("set %s=1 (make explain-scale): grows a control plane to 50,000 pending pods", ScaleEnv)
	}
	sizes := envSizes(t, ScaleSizesEnv, []int{1000, 5000, 20000, 50000})
	runs := envInt(t, ScaleRunsEnv, 3)
	plugin, kubectl, kubectlName := speedBinaries(t)
	rusage := buildMaxRSS(t)
	getpods := buildGetpods(t)
	ctx := context.Background()
	cp := startSpeedControlPlane(t, ctx)

	// explain's RSS with no pending pod: the binary and client-go's own,
	// which no number of pods changes. The largest of as many runs as at
	// each size, as the peaks it is taken from are.
	var base int64
	for range runs {
		u, err := timed(ctx, rusage, cp.KubeconfigPath, plugin, "explain", "-A")
		if err != nil {
			t.Fatal(err)
		}
		base = max(base, u.rss)
	}
	var rows []scaleRow
	parked := 0
	for _, n := range sizes {
		r := scaleRow{pods: n, events: park(t, ctx, cp, parked, n)}
		parked = n
		// The untimed first run of explain checks its answer.
		checkExplainAll(t, ctx, cp, plugin, n)
		if _, err := timed(ctx, rusage, cp.KubeconfigPath, kubectl, "get", "pods", "-A", "-o", "json"); err != nil {
			t.Fatal(err)
		}
		var et, kt, ec, kc, pt, pbt []time.Duration
		for range runs {
			u, err := timed(ctx, rusage, cp.KubeconfigPath, kubectl, "get", "pods", "-A", "-o", "json")
			if err != nil {
				t.Fatal(err)
			}
			kt, kc, r.listRSS = append(kt, u.wall), append(kc, u.cpu), max(r.listRSS, u.rss)
			u, err = timed(ctx, rusage, cp.KubeconfigPath, plugin, "explain", "-A")
			if err != nil {
				t.Fatal(err)
			}
			et, ec, r.explainRSS = append(et, u.wall), append(ec, u.cpu), max(r.explainRSS, u.rss)
			if u, err = timed(ctx, rusage, cp.KubeconfigPath, getpods, "-list"); err != nil {
				t.Fatal(err)
			}
			pt = append(pt, u.wall)
			if u, err = timed(ctx, rusage, cp.KubeconfigPath, getpods, "-list", "-protobuf", "-qps=50", "-burst=300"); err != nil {
				t.Fatal(err)
			}
			pbt = append(pbt, u.wall)
		}
		r.explain, r.list = median(et), median(kt)
		r.plainList, r.plainListProto = median(pt), median(pbt)
		r.explainCPU, r.listCPU = median(ec), median(kc)
		var err error
		if r.waits, err = explainWaits(ctx, cp.KubeconfigPath, plugin); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d pods: explain %s [%s], CPU %s, peak %.0f MB; %s %s [%s], CPU %s, peak %.0f MB; client-go list %s [%s], as protobuf at explain's limits %s [%s]; explain's requests: %s", n,
			dur(r.explain), durs(et), dur(r.explainCPU), mb(r.explainRSS), kubectlName, dur(r.list), durs(kt), dur(r.listCPU), mb(r.listRSS),
			dur(r.plainList), durs(pt), dur(r.plainListProto), durs(pbt), r.waits)
		rows = append(rows, r)
		// Written at every size, so that a run cut short keeps its table.
		writeReport(t, "scale.md", scaleReport(kubectlName, runs, base, rows))
	}
	t.Log("\n" + scaleReport(kubectlName, runs, base, rows))
	for i, r := range rows {
		if g := growth(rows, i); g > scaleLinearTarget {
			t.Errorf("%d pods: explain -A took %.3f s of CPU per 1,000 pods, %.2f× its CPU per pod at %d pods, want at most %.2f×", r.pods, cpuPerThousand(r), g, rows[0].pods, scaleLinearTarget)
		}
		if ratio := float64(r.explain) / float64(r.list); ratio > scaleTarget {
			t.Errorf("%d pods: explain -A took %.2f× as long as %s (median %v vs %v), want at most %.1f×", r.pods, ratio, kubectlName, r.explain, r.list, scaleTarget)
		}
		if ratio := float64(r.explain) / float64(r.plainList); r.pods >= plainListFrom && ratio > scaleTarget {
			t.Errorf("%d pods: explain -A took %.2f× as long as a plain client-go list of the pods (median %v vs %v), want at most %.1f×", r.pods, ratio, r.explain, r.plainList, scaleTarget)
		}
		if r.explainRSS-base > int64(r.pods)*scaleRSSTarget {
			t.Errorf("%d pods: explain -A peaked at %.0f MB, %.1f KB per pod above its %.0f MB with none, want under %d KB", r.pods, mb(r.explainRSS), float64(r.explainRSS-base)/float64(r.pods)/1024, mb(base), scaleRSSTarget>>10)
		}
	}
}

// scaleRow is one size of TestExplainScale: medians and peak RSS.
type scaleRow struct {
	pods          int
	events        int // FailedScheduling events when parked
	explain, list time.Duration
	// plainList is getpods -list (client-go's defaults: pages of 500,
	// JSON), plainListProto the same as protobuf at explain's request
	// limits (QPS 50, burst 300): what explain's list costs without the
	// rest of explain.
	plainList, plainListProto time.Duration
	explainCPU, listCPU       time.Duration // the commands' own CPU time (median)
	explainRSS, listRSS       int64
	waits                     requestWaits // of one more run of explain, with -v=6
}

// requestWaits is what explain waited for the API server, by resource: the
// pages it asked for and the sum of their times to the response's headers,
// which an API server sends once it has the page (the body's transfer and
// decoding are the client's). Pods and events are listed side by side.
type requestWaits struct {
	podPages, eventPages int
	pods, events         time.Duration
}

func (w requestWaits) String() string {
	return fmt.Sprintf("pods %d pages in %s, events %d pages in %s", w.podPages, dur(w.pods), w.eventPages, dur(w.events))
}

// responseLine is client-go's log of a response at -v=6.
var responseLine = regexp.MustCompile(`"Response" verb="GET" url="([^"]+)".* milliseconds=(\d+)`)

// explainWaits runs explain -A -v=6 and sums, from its log, how long its
// requests for pods and for events waited for the API server.
func explainWaits(ctx context.Context, kubeconfig, plugin string) (requestWaits, error) {
	stderr, err := run(ctx, kubeconfig, plugin, "explain", "-A", "-v=6")
	if err != nil {
		return requestWaits{}, fmt.Errorf("%s explain -A -v=6: %v\n%s", plugin, err, stderr)
	}
	return parseWaits(string(stderr))
}

func parseWaits(log string) (requestWaits, error) {
	var w requestWaits
	for _, m := range responseLine.FindAllStringSubmatch(log, -1) {
		u, err := url.Parse(m[1])
		if err != nil {
			return w, fmt.Errorf("client-go logged the URL %q: %v", m[1], err)
		}
		ms, _ := strconv.Atoi(m[2])
		switch path.Base(u.Path) {
		case "pods":
			w.podPages++
			w.pods += time.Duration(ms) * time.Millisecond
		case "events":
			w.eventPages++
			w.events += time.Duration(ms) * time.Millisecond
		}
	}
	if w.podPages == 0 || w.eventPages == 0 {
		return w, fmt.Errorf("explain -A -v=6 logged no response for pods or events (client-go's log format changed?):\n%.2000s", log)
	}
	return w, nil
}

// perThousand is explain's time per 1,000 pods in seconds.
func perThousand(r scaleRow) float64 { return r.explain.Seconds() / (float64(r.pods) / 1000) }

// growth is explain's CPU time per pod at rows[i] over its CPU time per pod
// at the smallest size, rows[0]: above 1, explain's own work grew faster
// than the pods. Its CPU, not its wall time: the API server's time per page
// grows with the collection (at 50,000 pods each page of pods waited 30 ms,
// at 5,000 7 ms), and that is the server's, which a bare list waits for
// too. A linear command's time per pod is highest at the smallest size,
// where its fixed cost (start, discovery, the scrape) counts most;
// compared with the least of the smaller sizes instead, one fast run at a
// small size reads as growth.
func growth(rows []scaleRow, i int) float64 {
	return cpuPerThousand(rows[i]) / cpuPerThousand(rows[0])
}

func cpuPerThousand(r scaleRow) float64 { return r.explainCPU.Seconds() / (float64(r.pods) / 1000) }

// scaleReport is TestExplainScale's table.
func scaleReport(kubectlName string, runs int, base int64, rows []scaleRow) string {
	var report strings.Builder
	fmt.Fprintf(&report, "## explain -A against %s at scale (embedded control plane)\n\n", kubectlName)
	fmt.Fprintf(&report, "Medians of %d alternate runs at each size; CPU is each command's own (user and system), "+
		"the rest of its time it waits for the API server; peak RSS (ru_maxrss) is the largest of the runs. "+
		"Growth is explain's CPU time per pod over its CPU time per pod at the smallest size (linear: 1 or less; its wall time also holds the API server's time per page, which grows with the collection). "+
		"With no pending pod explain peaks at %.0f MB; \"above that\" is per pod beyond it.\n\n", runs, mb(base))
	fmt.Fprintf(&report, "| pending pods | explain -A | list | ratio | explain per 1k pods | growth | list per 1k pods | explain CPU per 1k pods | list CPU per 1k pods | explain peak RSS | per pod | above that | list peak RSS |\n")
	fmt.Fprintf(&report, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for i, r := range rows {
		k := float64(r.pods) / 1000
		fmt.Fprintf(&report, "| %d | %.2f s | %.2f s | %.2f | %.3f s | %.2f | %.3f s | %.3f s | %.3f s | %.0f MB | %.1f KB | %.1f KB | %.0f MB |\n", r.pods,
			r.explain.Seconds(), r.list.Seconds(), float64(r.explain)/float64(r.list), perThousand(r), growth(rows, i), r.list.Seconds()/k,
			r.explainCPU.Seconds()/k, r.listCPU.Seconds()/k,
			mb(r.explainRSS), float64(r.explainRSS)/float64(r.pods)/1024, float64(r.explainRSS-base)/float64(r.pods)/1024, mb(r.listRSS))
	}
	fmt.Fprintf(&report, "\nAgainst a plain client-go list of the same pods (getpods -list: pages of 500, client-go's defaults — JSON, 5 requests a second, burst 10 —, nothing printed; and the same as explain lists: protobuf, 50 requests a second, burst 300; medians of %d runs, alternating with the above):\n\n", runs)
	fmt.Fprintf(&report, "| pending pods | explain -A | client-go list (JSON) | ratio | client-go list as explain lists | ratio |\n|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&report, "| %d | %.2f s | %.2f s | %.2f | %.2f s | %.2f |\n", r.pods, r.explain.Seconds(),
			r.plainList.Seconds(), float64(r.explain)/float64(r.plainList), r.plainListProto.Seconds(), float64(r.explain)/float64(r.plainListProto))
	}
	fmt.Fprintf(&report, "\nWhere explain waits (one more run with -v=6; time to each page's response headers, summed; pods and events are listed side by side):\n\n")
	fmt.Fprintf(&report, "| pending pods | pod pages | waiting for pods | per 1k pods | FailedScheduling events | event pages | waiting for events | per 1k pods |\n")
	fmt.Fprintf(&report, "|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		k := float64(r.pods) / 1000
		w := r.waits
		fmt.Fprintf(&report, "| %d | %d | %.2f s | %.3f s | %d | %d | %.2f s | %.3f s |\n", r.pods,
			w.podPages, w.pods.Seconds(), w.pods.Seconds()/k, r.events, w.eventPages, w.events.Seconds(), w.events.Seconds()/k)
	}
	if len(rows) > 1 {
		first, last := rows[0], rows[len(rows)-1]
		fmt.Fprintf(&report, "\nfrom %d to %d pods: explain's RSS grows by %.1f KB per added pod\n", first.pods, last.pods,
			float64(last.explainRSS-first.explainRSS)/float64(last.pods-first.pods)/1024)
	}
	return report.String()
}

// speedBinaries returns the plugin and the kubectl to compare it with.
func speedBinaries(t *testing.T) (plugin, kubectl, kubectlName string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	plugin = os.Getenv(PluginEnv)
	if plugin == "" {
		plugin = filepath.Join(root, "bin", "kubectl-schedq")
	}
	if _, err := os.Stat(plugin); err != nil {
		t.Fatalf("%v: run make build (or set %s)", err, PluginEnv)
	}
	kubectl, kubectlName = findKubectl(t, root)
	return plugin, kubectl, kubectlName
}

// speedSchedulerConfig raises the scheduler's client limits: every failed
// attempt patches the pod's status and writes an event, and at the default
// 50 requests per second parking 50,000 pods would take half an hour. The
// lists timed afterwards do not go through the scheduler's client.
const speedSchedulerConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  qps: 5000
  burst: 10000
`

// parkedFor is the scheduler's podMaxInUnschedulablePodsDuration in
// startSpeedControlPlane: longer than make explain-scale's timeout.
const parkedFor = 4 * time.Hour

// startSpeedControlPlane starts the control plane TestExplainSpeed and
// TestExplainScale park their pods on: four 4-CPU nodes, the scheduler's
// /metrics trimmed to what a real kube-scheduler serves (see
// hideAPIServerMetrics), and a leftover flush that never comes within the
// tests' time (parkedFor), so that parked pods stay parked while explain is
// timed. With kube-scheduler's 5 minutes, parking 50,000 pods outlasts the
// flush, and the scheduler retries thousands of pods a minute, patching
// their status and writing events, while the lists are timed: the API
// server then took five to six times as long over each page at 50,000 pods
// as at 20,000, for kubectl's list as for explain's.
func startSpeedControlPlane(t *testing.T, ctx context.Context) *embedded.ControlPlane {
	t.Helper()
	hideAPIServerMetrics()
	logs := &testsupport.TailBuffer{Max: 64 << 10}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("control plane logs (tail):\n%s", logs)
		}
	})
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cp, err := embedded.Start(sctx, embedded.Options{
		Nodes: 4, LogOutput: logs, PodMaxInUnschedulablePodsDuration: parkedFor,
		SchedulerConfigData: []byte(speedSchedulerConfig), SchedulerConfigSource: "speedSchedulerConfig",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	return cp
}

// park creates the pods numbered from to to, 500 at a time, each asking
// for more CPU than any node has, and waits until all of the to pods are
// in unschedulablePods, each with its FailedScheduling event (the control
// plane of startSpeedControlPlane does not retry them). Events the
// scheduler's recorder dropped in the burst of failures are written in its
// stead once it has tried every pod: no retry would write them.
func park(t *testing.T, ctx context.Context, cp *embedded.ControlPlane, from, to int) (events int) {
	t.Helper()
	began := time.Now()
	s := &scenario{client: cp.Client(), log: t.Logf, parallel: 32}
	for i := from; i < to; i += 500 {
		if err := s.createPods(ctx, fmt.Sprintf("parked-%d-", i), min(500, to-i), "6", nil, false); err != nil {
			t.Fatal(err)
		}
	}
	created := time.Since(began)
	client := cp.Client()
	backfilled := 0
	var triedAll time.Time
	testsupport.Eventually(t, 30*time.Minute, 5*time.Second, func() string {
		if n := cp.Queue().Count()[groundtruth.Unschedulable]; n < to {
			return fmt.Sprintf("%d of %d pods in unschedulablePods", n, to)
		}
		s, err := parkedPods(ctx, client)
		if err != nil {
			return err.Error()
		}
		if s.tried < to {
			return fmt.Sprintf("%d of %d pods tried by the scheduler", s.tried, to)
		}
		if len(s.missing) == 0 {
			events = s.events
			return ""
		}
		// The scheduler has tried every pod; give its recorder half a
		// minute to write what it queued, then write what it dropped.
		if triedAll.IsZero() {
			triedAll = time.Now()
		}
		if time.Since(triedAll) < 30*time.Second {
			return fmt.Sprintf("%d of %d pods without a FailedScheduling event", len(s.missing), to)
		}
		if err := backfillEvents(ctx, client, s.missing); err != nil {
			return err.Error()
		}
		backfilled += len(s.missing)
		return fmt.Sprintf("wrote %d dropped FailedScheduling events", len(s.missing))
	})
	t.Logf("%d pods parked (%d created in %v, all with their event after %v; %d events the scheduler dropped written in its stead; %d FailedScheduling events)", to, to-from, created.Round(time.Second), time.Since(began).Round(time.Second), backfilled, events)
	return events
}

// checkExplainAll runs explain -A -o json and checks that it explains the
// pods pending pods without warnings, all of them in unschedulablePods.
func checkExplainAll(t *testing.T, ctx context.Context, cp *embedded.ControlPlane, plugin string, pods int) {
	t.Helper()
	out, err := run(ctx, cp.KubeconfigPath, plugin, "explain", "-A", "-o", "json")
	if err != nil {
		t.Fatalf("explain -A -o json: %v\n%s", err, out)
	}
	var list explain.ExplanationList
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != pods || len(list.Warnings) > 0 || list.Counts["unschedulablePods"] != pods {
		t.Fatalf("explain -A: %d pods, counts %v, warnings %v; want %d unschedulable", len(list.Items), list.Counts, list.Warnings, pods)
	}
}

// usage is what maxrss read of one run of a command.
type usage struct {
	wall, cpu time.Duration // cpu: the child's user and system time
	rss       int64         // peak, bytes
}

// timed runs bin through maxrss (built into rusage by buildMaxRSS), its
// output discarded, and returns its wall time, CPU time and peak RSS.
func timed(ctx context.Context, rusage, kubeconfig, bin string, args ...string) (usage, error) {
	out := filepath.Join(filepath.Dir(rusage), "last")
	c := exec.CommandContext(ctx, rusage, append([]string{out, bin}, args...)...)
	c.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	var stderr strings.Builder
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		return usage{}, fmt.Errorf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return usage{}, err
	}
	var ns, rss, cpu int64
	if _, err := fmt.Sscan(string(b), &ns, &rss, &cpu); err != nil {
		return usage{}, fmt.Errorf("maxrss wrote %q: %v", b, err)
	}
	return usage{wall: time.Duration(ns), cpu: time.Duration(cpu), rss: rss}, nil
}

// buildMaxRSS builds ./maxrss, which reads a child's peak RSS as the
// child's own (see there why the test process cannot).
func buildMaxRSS(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "maxrss")
	if out, err := exec.Command("go", "build", "-o", p, "./maxrss").CombinedOutput(); err != nil {
		t.Fatalf("building maxrss: %v\n%s", err, out)
	}
	return p
}

// writeReport writes a report into OutEnv's directory, if set.
func writeReport(t *testing.T, name, report string) {
	t.Helper()
	dir := os.Getenv(OutEnv)
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
}

func envSizes(t *testing.T, name string, def []int) []int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 || len(out) > 0 && n <= out[len(out)-1] {
			t.Fatalf("%s=%q: want ascending positive numbers, comma separated", name, s)
		}
		out = append(out, n)
	}
	return out
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

func TestParseWaits(t *testing.T) {
	const pods = `I1125 07:50:00.123456   4242 round_trippers.go:632] "Response" verb="GET" url="https://127.0.0.1:6443/api/v1/pods?fieldSelector=status.phase%3DPending&limit=500" status="200 OK" milliseconds=12` + "\n"
	const events = `I1125 07:50:00.223456   4242 round_trippers.go:632] "Response" verb="GET" url="https://127.0.0.1:6443/api/v1/events?continue=abc&fieldSelector=reason%3DFailedScheduling&limit=500" status="200 OK" milliseconds=30` + "\n"
	const nodes = `I1125 07:50:00.323456   4242 round_trippers.go:632] "Response" verb="GET" url="https://127.0.0.1:6443/api/v1/nodes?limit=500" status="200 OK" milliseconds=900` + "\n"
	for _, tc := range []struct {
		name    string
		log     string
		want    requestWaits
		wantErr bool
	}{
		{"pages summed by resource", pods + events + pods + nodes + events + events, requestWaits{podPages: 2, eventPages: 3, pods: 24 * time.Millisecond, events: 90 * time.Millisecond}, false},
		{"no event pages", pods + nodes, requestWaits{}, true},
		{"nothing logged", "explain: 3 pods\n", requestWaits{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseWaits(tc.log)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if !tc.wantErr && got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestGrowth(t *testing.T) {
	row := func(pods int, explain time.Duration) scaleRow { return scaleRow{pods: pods, explain: explain} }
	for _, tc := range []struct {
		name string
		rows []scaleRow
		want []float64
	}{
		{"linear", []scaleRow{row(1000, time.Second), row(5000, 5*time.Second), row(20000, 20*time.Second)}, []float64{1, 1, 1}},
		{"fixed cost, then linear", []scaleRow{row(1000, 2*time.Second), row(5000, 6*time.Second), row(20000, 21*time.Second)}, []float64{1, 0.6, 0.525}},
		{"worse than linear", []scaleRow{row(1000, time.Second), row(20000, 20*time.Second), row(50000, 75*time.Second)}, []float64{1, 1, 1.5}},
		{"one fast run at a small size is no growth", []scaleRow{row(1000, time.Second), row(5000, 4*time.Second), row(20000, 20*time.Second)}, []float64{1, 0.8, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, want := range tc.want {
				if got := growth(tc.rows, i); math.Abs(got-want) > 1e-9 {
					t.Errorf("growth at %d pods = %v, want %v", tc.rows[i].pods, got, want)
				}
			}
		})
	}
}

// TestFindKubectl_names: the reports name what ran: a getpods built
// beforehand (KUBECTL naming it) is not called kubectl.
func TestFindKubectl_names(t *testing.T) {
	for bin, want := range map[string]string{
		"/opt/bin/kubectl": "kubectl get pods -A -o json",
		"/opt/bin/getpods": getpodsName,
	} {
		t.Setenv(KubectlEnv, bin)
		if p, name := findKubectl(t, t.TempDir()); p != bin || name != want {
			t.Errorf("KUBECTL=%s: %s named %q, want %q", bin, p, name, want)
		}
	}
}
