package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/outfile"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

// Upstream's timings.
const (
	// pollInterval is how often waits and barriers look at the pods.
	pollInterval = time.Second
	// waitTimeout bounds a wait or a barrier.
	waitTimeout = 10 * time.Minute
	// workloadTimeout bounds a whole workload.
	workloadTimeout = 30 * time.Minute
)

type executor struct {
	sel     *workload.Selected
	cluster Cluster
	opts    Options

	client    kubernetes.Interface
	dynamic   dynamic.Interface
	mapper    *restmapper.DeferredDiscoveryRESTMapper
	podLister corelisters.PodLister
	tracker   *podTracker
	runLabels labels.Selector

	// podsPerNamespace is upstream's numPodsScheduledPerNamespace: the
	// namespaces the workload knows, with the pods barriers wait for.
	podsPerNamespace map[string]int
	window           *window
	start            time.Time
	result           *Result

	// bg runs churn and background deletes until the workload ends.
	bg     sync.WaitGroup
	bgMu   sync.Mutex
	bgErrs []error
	warnMu sync.Mutex

	// profile is the file of the CPU profile being collected, if any.
	profile     *outfile.File
	profileDir  *outfile.Dir
	profileName string
}

// Run runs sel's ops in order against cluster and returns what they
// measured. The result is returned also when the workload fails (with
// Result.Error set), holding what was measured until then.
func Run(ctx context.Context, sel *workload.Selected, cluster Cluster, opts Options) (*Result, error) {
	opts = opts.withDefaults()
	e := &executor{
		sel:              withNamespacePrefix(sel, opts.NamespacePrefix),
		cluster:          cluster,
		opts:             opts,
		podsPerNamespace: map[string]int{},
		runLabels:        labels.SelectorFromSet(opts.Labels),
		result: &Result{
			Path:     sel.Path,
			TestCase: sel.TestCase,
			Workload: sel.Workload,
			Cluster:  cluster.Name,
			Variant:  opts.Variant,

			NamespacePrefix: opts.NamespacePrefix,
		},
	}
	err := e.run(ctx)
	if err != nil {
		e.result.Error = err.Error()
	}
	return e.result, err
}

func (e *executor) run(ctx context.Context) error {
	cfg := rest.CopyConfig(e.cluster.RESTConfig)
	cfg.QPS, cfg.Burst = e.opts.QPS, e.opts.Burst
	// Upstream's harness client is kube-apiserver's loopback config, which
	// speaks protobuf; so does kube-scheduler's. JSON would cost the
	// apiserver more per pod than upstream's creators do.
	typed := rest.CopyConfig(cfg)
	typed.ContentType = "application/vnd.kubernetes.protobuf"
	typed.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	var err error
	if e.client, err = kubernetes.NewForConfig(typed); err != nil {
		return err
	}
	if e.dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return err
	}
	e.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(e.client.Discovery()))

	ctx, cancel := context.WithTimeout(ctx, workloadTimeout)
	defer cancel()

	// The runner's own pod informer, over all namespaces.
	podInformer := NewPodInformer(e.client, "")
	e.podLister = corelisters.NewPodLister(podInformer.GetIndexer())
	e.tracker = newPodTracker(e.runLabels)
	if _, err := podInformer.AddEventHandler(e.tracker.handler()); err != nil {
		return err
	}
	informerCtx, stopInformers := context.WithCancel(context.Background())
	defer stopInformers()
	go podInformer.RunWithContext(informerCtx)
	if !cache.WaitForCacheSync(ctx.Done(), podInformer.HasSynced) {
		return fmt.Errorf("%s: the pod informer did not sync: %w", e.cluster.Name, context.Cause(ctx))
	}

	e.start = time.Now()
	e.result.Start = e.start
	e.result.Queue.Start = e.start
	e.readSchedulerIdentity(ctx)
	stopSeries := e.sampleQueue(ctx)

	// Everything the ops start in the background stops with the workload.
	opsCtx, cancelOps := context.WithCancel(ctx)
	runErr := e.runOps(opsCtx)
	cancelOps()
	if e.profile != nil { // a workload that failed or forgot stopCollectingProfile
		if _, err := e.stopProfile(); err != nil {
			e.warnf("%v", err)
		}
	}
	e.bg.Wait()
	if e.window != nil { // an op failed inside a window
		e.window.cancel()
		e.window.wg.Wait()
		e.window.stopListen()
		e.window = nil
	}
	stopSeries()
	e.result.Duration = time.Since(e.start)
	if runErr != nil {
		return runErr
	}
	e.bgMu.Lock()
	defer e.bgMu.Unlock()
	if len(e.bgErrs) > 0 {
		return fmt.Errorf("%s: test case %q, workload %q: %w", e.sel.Path, e.sel.TestCase, e.sel.Workload, errors.Join(e.bgErrs...))
	}
	return nil
}

func (e *executor) runOps(ctx context.Context) error {
	for _, op := range e.sel.Ops {
		if err := ctx.Err(); err != nil {
			return &OpError{Path: e.sel.Path, TestCase: e.sel.TestCase, Workload: e.sel.Workload, Op: op, Err: context.Cause(ctx)}
		}
		p := &OpProgress{
			Workload: e.sel.Name(),
			Index:    op.Pos().Index,
			Total:    len(e.sel.Ops),
			Opcode:   string(op.Opcode()),
			Detail:   describe(op),
			Want:     wantOf(op),
			Started:  time.Now(),
		}
		if e.result.Variant != "" {
			p.Workload += " " + e.result.Variant
		}
		stat := OpStat{Index: op.Pos().Index, Opcode: string(op.Opcode()), Start: e.since(p.Started)}
		e.opts.Progress.OpStart(p)
		summary, err := e.runOp(ctx, op, p, &stat)
		stat.End = e.since(time.Now())
		e.result.Ops = append(e.result.Ops, stat)
		e.opts.Progress.OpDone(p, summary, err)
		if err != nil {
			return &OpError{Path: e.sel.Path, TestCase: e.sel.TestCase, Workload: e.sel.Workload, Op: op, Err: err}
		}
	}
	return nil
}

func (e *executor) runOp(ctx context.Context, op workload.Op, p *OpProgress, stat *OpStat) (string, error) {
	switch op := op.(type) {
	case *workload.CreateNodes:
		return e.createNodes(ctx, op, p, stat)
	case *workload.CreateNamespaces:
		return e.createNamespaces(ctx, op, stat)
	case *workload.CreatePods:
		stat.Namespace = op.Namespace
		return e.createPods(ctx, op, p, stat)
	case *workload.DeletePods:
		stat.Namespace = op.Namespace
		return e.deletePods(ctx, op)
	case *workload.Churn:
		stat.Namespace = op.Namespace
		return "", e.churn(ctx, op)
	case *workload.Barrier:
		return e.barrier(ctx, op, p)
	case *workload.Sleep:
		t := time.NewTimer(op.Duration)
		defer t.Stop()
		select {
		case <-ctx.Done():
			// An interrupt during the sleep is the sleep's, not the next op's.
			return "", context.Cause(ctx)
		case <-t.C:
		}
		return "", nil
	case *workload.StartCollectingMetrics:
		return "", e.startWindow(ctx, op.Name, op.Namespaces, op.LabelSelector)
	case *workload.StopCollectingMetrics:
		return e.windowSummary(), e.stopWindow(ctx, op)
	case *workload.CreateAny:
		stat.Namespace = op.Namespace
		return e.createAny(ctx, op, stat)
	case *workload.UpdateAny:
		stat.Namespace = op.Namespace
		return e.updateAny(ctx, op)
	case *workload.CreatePodGroups:
		stat.Namespace = op.Namespace
		return e.createPodGroups(ctx, op, stat)
	case *workload.StartCollectingProfile:
		return e.startProfile(op)
	case *workload.StopCollectingProfile:
		return e.stopProfile()
	case *workload.CreateResourceClaims:
		stat.Namespace = op.Namespace
		return e.createResourceClaims(ctx, op, stat)
	case *workload.AllocResourceClaims:
		stat.Namespace = op.Namespace
		return e.runLinked(ctx, op)
	default:
		return "", fmt.Errorf("op type %T is not supported", op)
	}
}

func describe(op workload.Op) string {
	switch op := op.(type) {
	case *workload.CreateNodes:
		return fmt.Sprintf("%d nodes", op.Count)
	case *workload.CreateNamespaces:
		return fmt.Sprintf("%d namespaces %s-*", op.Count, op.Prefix)
	case *workload.CreatePods:
		mode := ""
		switch {
		case op.SkipWaitToCompletion:
			mode = ", no wait"
		case op.SteadyState:
			mode = fmt.Sprintf(", steady state for %v", op.Duration)
		}
		if op.CollectMetrics {
			mode += ", measured"
		}
		return fmt.Sprintf("%d pods in %s%s", op.Count, op.Namespace, mode)
	case *workload.DeletePods:
		return "in " + orAll(op.Namespace)
	case *workload.Churn:
		return fmt.Sprintf("%s every %v in %s", op.Mode, op.Interval, op.Namespace)
	case *workload.Barrier:
		return fmt.Sprintf("until %s in %s", op.StageRequirement, orAll(strings.Join(op.Namespaces, ",")))
	case *workload.Sleep:
		return op.Duration.String()
	case *workload.StartCollectingMetrics:
		return fmt.Sprintf("window %q in %s", op.Name, strings.Join(op.Namespaces, ","))
	case *workload.CreateAny:
		return fmt.Sprintf("%d × %s", op.Count, op.TemplatePath)
	case *workload.UpdateAny:
		return fmt.Sprintf("%d × %s", op.Count, op.TemplatePath)
	case *workload.CreatePodGroups:
		return fmt.Sprintf("%d pod groups in %s", op.Count, op.Namespace)
	case *workload.StartCollectingProfile:
		return "CPU profile into " + ProfileName(op.FilePath)
	case *workload.CreateResourceClaims:
		return fmt.Sprintf("%d claims in %s", op.Count, op.Namespace)
	case *workload.AllocResourceClaims:
		return "in " + orAll(op.Namespace)
	}
	return ""
}

func orAll(ns string) string {
	if ns == "" {
		return "all namespaces"
	}
	return ns
}

func wantOf(op workload.Op) int64 {
	switch op := op.(type) {
	case *workload.CreatePods:
		if op.SteadyState {
			return 0
		}
		return int64(op.Count)
	case *workload.CreateNodes:
		return int64(op.Count)
	}
	return 0
}

// readSchedulerIdentity records the scheduler's version and queue gates
// from its metrics.
func (e *executor) readSchedulerIdentity(ctx context.Context) {
	if e.cluster.Metrics == nil {
		return
	}
	f, err := e.cluster.Metrics.ReadMetrics(ctx)
	if err != nil {
		e.warnf("read the scheduler's metrics (%s): %v", e.cluster.Metrics, err)
		return
	}
	snap, err := metricscrape.FromFamilies(e.cluster.Metrics.String(), f)
	if err != nil {
		e.warnf("%v", err)
		return
	}
	e.result.SchedulerVersion = snap.Build.GitVersion
	e.result.SchedulerGates = map[string]bool{}
	for _, g := range metricscrape.QueueGates {
		if st, ok := snap.FeatureGates[g]; ok {
			e.result.SchedulerGates[g] = st.Enabled
		}
	}
}

// sampleQueue reads the scheduler's queue every QueueInterval into the
// result's series until the returned function is called.
func (e *executor) sampleQueue(ctx context.Context) (stop func()) {
	if e.cluster.Metrics == nil || e.opts.QueueInterval < 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	sample := func() {
		f, err := e.cluster.Metrics.ReadMetrics(ctx)
		now := time.Now()
		if err == nil {
			var snap *metricscrape.Snapshot
			if snap, err = metricscrape.FromFamilies(e.cluster.Metrics.String(), f); err == nil {
				e.result.Queue.Add(now, snap)
				return
			}
		}
		if ctx.Err() == nil {
			e.result.Queue.Fail(err)
		}
	}
	go func() {
		defer close(done)
		t := time.NewTicker(e.opts.QueueInterval)
		defer t.Stop()
		sample()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				sample()
			}
		}
	}()
	return func() {
		cancel()
		<-done
		// One last sample after the ops, on a fresh context.
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		if f, err := e.cluster.Metrics.ReadMetrics(sctx); err == nil {
			if snap, err := metricscrape.FromFamilies(e.cluster.Metrics.String(), f); err == nil {
				e.result.Queue.Add(time.Now(), snap)
			}
		}
	}
}
