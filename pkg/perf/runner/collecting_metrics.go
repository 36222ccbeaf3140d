package runner

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/collect"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// window is one metrics collection window: upstream's collectors between
// startCollectingMetrics (or a createPods with collectMetrics) and its stop.
type window struct {
	name       string
	namespaces sets.Set[string]
	selector   labels.Selector
	labels     map[string]string
	start      time.Time

	mu    sync.Mutex
	bound int
	binds []bindEvent

	throughput *collect.Throughput
	hist       *collect.Histograms
	mem        *collect.Memory

	stopListen func()
	cancel     context.CancelFunc
	wg         sync.WaitGroup
}

type bindEvent struct {
	key       string
	namespace string
	at        time.Time
}

// startWindow starts the collectors: throughput counts binds of pods in
// namespaces that match selector.
func (e *executor) startWindow(ctx context.Context, name string, namespaces []string, selector map[string]string) error {
	if e.window != nil {
		return fmt.Errorf("metrics collection is overlapping: window %q is still open", e.window.name)
	}
	if e.cluster.InProcess {
		// Upstream: clean up memory usage from the setup phase.
		runtime.GC()
	}
	w := &window{
		name:       name,
		namespaces: sets.New(namespaces...),
		selector:   labels.SelectorFromSet(selector),
		labels:     map[string]string{collect.LabelName: e.opts.NamePrefix + "/" + e.sel.TestCase + "/" + e.sel.Workload + "/" + name},
	}
	w.throughput = collect.NewThroughput(w.labels, e.opts.ThroughputErrorMargin)
	w.hist = collect.NewHistograms(collect.WithRequired(e.sel.MetricsCollectorConfig), w.labels)
	if e.cluster.Metrics != nil {
		f, err := e.cluster.Metrics.ReadMetrics(ctx)
		if err != nil {
			return fmt.Errorf("read the scheduler's metrics at the window's start (%s): %w", e.cluster.Metrics, err)
		}
		w.hist.Start(f)
	}
	if e.cluster.InProcess {
		w.mem = collect.NewMemory(w.labels)
	}
	w.start = time.Now()
	w.stopListen = e.tracker.listen(func(pod *v1.Pod, at time.Time) {
		if !w.namespaces.Has(pod.Namespace) || !w.selector.Matches(labels.Set(pod.Labels)) {
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		w.bound++
		w.binds = append(w.binds, bindEvent{key: podKey(pod.Namespace, pod.Name), namespace: pod.Namespace, at: at})
	})

	wctx, cancel := context.WithCancel(ctx)
	w.cancel = cancel
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		t := time.NewTicker(collect.ThroughputInterval)
		defer t.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-t.C:
				w.mu.Lock()
				n := w.bound
				w.mu.Unlock()
				w.throughput.Observe(time.Now(), n)
			}
		}
	}()
	if w.mem != nil {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			t := time.NewTicker(collect.MemoryInterval)
			defer t.Stop()
			for {
				select {
				case <-wctx.Done():
					return
				case now := <-t.C:
					w.mem.Sample(now)
				}
			}
		}()
	}
	e.window = w
	e.result.Queue.Windows = append(e.result.Queue.Windows, collect.SeriesWindow{Name: name, Start: e.since(w.start)})
	return nil
}

// stopWindow stops the collectors, adds their items to the result and
// applies the workload's threshold to them, as upstream's
// stopCollectingMetrics does. A failed threshold is recorded, not returned.
func (e *executor) stopWindow(ctx context.Context, op workload.Op) error {
	w := e.window
	if w == nil {
		return fmt.Errorf("missing startCollectingMetrics operation before stopping")
	}
	e.window = nil
	w.cancel()
	w.wg.Wait()
	w.stopListen()
	end := time.Now()

	var groups [][]collect.DataItem
	groups = append(groups, w.throughput.DataItems())
	if !w.throughput.Measured() {
		e.warnf("failed to measure SchedulingThroughput for %s: everything was bound within about a second; increase pods and/or nodes to make scheduling take longer", w.labels[collect.LabelName])
	}
	for _, warning := range w.throughput.Warnings() {
		e.warnf("%s: %s", w.labels[collect.LabelName], warning)
	}
	if e.cluster.Metrics != nil {
		f, err := e.cluster.Metrics.ReadMetrics(ctx)
		if err != nil {
			return fmt.Errorf("read the scheduler's metrics at the window's end (%s): %w", e.cluster.Metrics, err)
		}
		groups = append(groups, w.hist.DataItems(f))
	}
	if w.mem != nil {
		groups = append(groups, w.mem.DataItems())
	}
	groups = append(groups, []collect.DataItem{collect.DurationItem(w.labels, end.Sub(w.start))})

	w.mu.Lock()
	binds := w.binds
	bound := w.bound
	w.mu.Unlock()
	lat := e.latencies(w, binds)
	var latItems []collect.DataItem
	for _, l := range lat {
		if item, ok := l.DataItem(w.labels); ok {
			latItems = append(latItems, item)
		}
	}
	groups = append(groups, latItems)

	threshold := e.sel.Threshold.Get(e.opts.Topic)
	sel := collect.ThresholdSelector{
		Name:        e.sel.ThresholdMetricSelector.Name,
		Labels:      e.sel.ThresholdMetricSelector.Labels,
		DataBucket:  e.sel.ThresholdMetricSelector.DataBucket,
		ExpectLower: e.sel.ThresholdMetricSelector.ExpectLower,
	}
	for _, items := range groups {
		if err := collect.ApplyThreshold(items, threshold, sel); err != nil {
			e.result.ThresholdErrors = append(e.result.ThresholdErrors, fmt.Sprintf("%s: %v", op.Pos(), err))
		}
		e.result.DataItems = append(e.result.DataItems, items...)
	}

	nsList := sets.List(w.namespaces)
	e.result.Windows = append(e.result.Windows, Window{
		Name:       w.name,
		Namespaces: nsList,
		Start:      e.since(w.start),
		End:        e.since(end),
		Throughput: w.throughput.Timeline(),
		ThroughputStart: func() float64 {
			if w.throughput.Start().IsZero() {
				return 0
			}
			return e.since(w.throughput.Start())
		}(),
		Latencies: lat,
		Bound:     bound,
	})
	sw := &e.result.Queue.Windows[len(e.result.Queue.Windows)-1]
	sw.End = e.since(end)
	return nil
}

// latencies joins the window's binds with the pods' create times, per
// namespace.
func (e *executor) latencies(w *window, binds []bindEvent) []collect.Latencies {
	byNS := map[string][]time.Duration{}
	unmatched := map[string]int{}
	for _, b := range binds {
		created, ok := e.tracker.createdAt(b.key)
		if !ok {
			unmatched[b.namespace]++
			continue
		}
		byNS[b.namespace] = append(byNS[b.namespace], b.at.Sub(created))
	}
	var out []collect.Latencies
	for _, ns := range sets.List(w.namespaces) {
		if len(byNS[ns]) == 0 && unmatched[ns] == 0 {
			continue
		}
		out = append(out, collect.NewLatencies(ns, byNS[ns], unmatched[ns]))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Namespace < out[j].Namespace })
	return out
}

// windowSummary describes the window that is about to close.
func (e *executor) windowSummary() string {
	if e.window == nil {
		return ""
	}
	e.window.mu.Lock()
	defer e.window.mu.Unlock()
	return fmt.Sprintf("window %q: %d pods bound in %.1fs", e.window.name, e.window.bound, time.Since(e.window.start).Seconds())
}
