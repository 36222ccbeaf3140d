package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
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
		select {
		case <-ctx.Done():
		case <-time.After(op.Duration):
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
	default:
		return "", fmt.Errorf("op type %T is not supported", op)
	}
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

func (e *executor) since(t time.Time) float64 { return t.Sub(e.start).Seconds() }

func (e *executor) warnf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	e.warnMu.Lock()
	defer e.warnMu.Unlock()
	e.result.Warnings = append(e.result.Warnings, msg)
	fmt.Fprintf(e.opts.Warnings, "warning: %s\n", msg)
}

// bgError records the failure of something running in the background
// (upstream: tCtx.Errorf, which fails the workload at its end).
func (e *executor) bgError(op workload.Op, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	e.bgMu.Lock()
	defer e.bgMu.Unlock()
	e.bgErrs = append(e.bgErrs, fmt.Errorf("%s (%s): %w", op.Pos(), op.Opcode(), err))
}

// withRunLabels returns m plus the run's labels.
func (e *executor) withRunLabels(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+len(e.opts.Labels))
	maps.Copy(out, m)
	maps.Copy(out, e.opts.Labels)
	return out
}

// ensureNamespace is upstream's createNamespaceIfNotPresent: a namespace
// the workload does not know yet is created and becomes known. One that
// exists already (created by a churn op, or on a shared cluster) is used.
func (e *executor) ensureNamespace(ctx context.Context, namespace string) error {
	if _, ok := e.podsPerNamespace[namespace]; ok {
		return nil
	}
	if err := e.createNamespace(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		return fmt.Errorf("failed to create namespace for Pod: %v: %w", namespace, err)
	}
	e.podsPerNamespace[namespace] = 0
	return nil
}

var namespacesResource = v1.SchemeGroupVersion.WithResource("namespaces")

// createNamespace creates ns with the run's labels; AlreadyExists is fine.
func (e *executor) createNamespace(ctx context.Context, ns *v1.Namespace) error {
	ns = ns.DeepCopy()
	ns.Labels = e.withRunLabels(ns.Labels)
	_, err := e.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err == nil {
		e.opts.Ledger.Add(ObjectRef{Resource: namespacesResource, Name: ns.Name})
	}
	return err
}

func (e *executor) createNamespaces(ctx context.Context, op *workload.CreateNamespaces, stat *OpStat) (string, error) {
	for _, name := range op.Names() {
		ns := op.Namespace.DeepCopy()
		ns.Name = name
		err := wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Duration: 100 * time.Millisecond, Factor: 3, Steps: 6}, func(ctx context.Context) (bool, error) {
			return e.createNamespace(ctx, ns) == nil, nil
		})
		if err != nil {
			return "", fmt.Errorf("create namespace %s: %w", name, err)
		}
		stat.Created++
	}
	for _, n := range op.Names() {
		if _, ok := e.podsPerNamespace[n]; !ok {
			e.podsPerNamespace[n] = 0
		}
	}
	return fmt.Sprintf("%d namespaces", op.Count), nil
}

// podsIn lists the run's pods in namespace ("" for all) that match
// selector, from the informer's cache.
func (e *executor) podsIn(namespace string, selector map[string]string) ([]*v1.Pod, error) {
	return e.podLister.Pods(namespace).List(labels.SelectorFromSet(e.withRunLabels(selector)))
}

// isAttempted is upstream's: the pod has a PodScheduled condition.
func isAttempted(pod *v1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled {
			return true
		}
	}
	return false
}

// waitScheduled is upstream's waitUntilPodsScheduledInNamespace: poll once
// a second (at once first) until want pods in namespace are bound.
func (e *executor) waitScheduled(ctx context.Context, namespace string, selector map[string]string, want int, p *OpProgress) error {
	return e.waitPods(ctx, namespace, selector, want, p, false)
}

// waitAttempted is upstream's waitUntilPodsAttemptedInNamespace.
func (e *executor) waitAttempted(ctx context.Context, namespace string, selector map[string]string, want int, p *OpProgress) error {
	return e.waitPods(ctx, namespace, selector, want, p, true)
}

func (e *executor) waitPods(ctx context.Context, namespace string, selector map[string]string, want int, p *OpProgress, attempted bool) error {
	var pending *v1.Pod
	got := 0
	err := wait.PollUntilContextTimeout(ctx, pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		pods, err := e.podsIn(namespace, selector)
		if err != nil {
			return false, err
		}
		got, pending = 0, nil
		var tried *v1.Pod
		for _, pod := range pods {
			switch {
			case pod.Spec.NodeName != "":
				got++
			case isAttempted(pod):
				if attempted {
					got++
				} else if tried == nil {
					tried = pod
				}
			case pending == nil:
				pending = pod
			}
		}
		if tried != nil {
			pending = tried
		}
		return got >= want, nil
	})
	if err == nil {
		return nil
	}
	what := "scheduled"
	if attempted {
		what = "attempted"
	}
	err = fmt.Errorf("waiting for %d pods in namespace %q to be %s, %d are: %w", want, namespace, what, got, err)
	if pending != nil {
		err = fmt.Errorf("%w; at least pod %s/%s is not %s", err, pending.Namespace, pending.Name, what)
	}
	return err
}

// barrier is upstream's runBarrierOp.
func (e *executor) barrier(ctx context.Context, op *workload.Barrier, p *OpProgress) (string, error) {
	for _, ns := range op.Namespaces {
		if _, ok := e.podsPerNamespace[ns]; !ok {
			return "", fmt.Errorf("unknown namespace %s", ns)
		}
	}
	namespaces := op.Namespaces
	if len(namespaces) == 0 {
		for ns := range e.podsPerNamespace {
			namespaces = append(namespaces, ns)
		}
	}
	total := 0
	for _, ns := range namespaces {
		want := e.podsPerNamespace[ns]
		total += want
		var err error
		if op.StageRequirement == workload.Attempted {
			err = e.waitAttempted(ctx, ns, op.LabelSelector, want, p)
		} else {
			err = e.waitScheduled(ctx, ns, op.LabelSelector, want, p)
		}
		if err != nil {
			return "", fmt.Errorf("error waiting for pods in namespace %q: %w", ns, err)
		}
	}
	if op.StageRequirement != workload.Attempted {
		if len(op.Namespaces) == 0 {
			e.podsPerNamespace = map[string]int{}
		} else {
			for _, ns := range op.Namespaces {
				delete(e.podsPerNamespace, ns)
			}
		}
	}
	return fmt.Sprintf("%d pods %s", total, strings.ToLower(string(op.StageRequirement))), nil
}

// readSchedulerIdentity records the scheduler's version and queue gates
// from its metrics.
func (e *executor) readSchedulerIdentity(ctx context.Context) {
	if e.cluster.Metrics == nil {
		return
	}
	f, err := e.cluster.Metrics.Gather(ctx)
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
		f, err := e.cluster.Metrics.Gather(ctx)
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
		if f, err := e.cluster.Metrics.Gather(sctx); err == nil {
			if snap, err := metricscrape.FromFamilies(e.cluster.Metrics.String(), f); err == nil {
				e.result.Queue.Add(time.Now(), snap)
			}
		}
	}
}

// restMapping maps an object's kind to its resource.
func (e *executor) restMapping(apiVersion, kind string) (*meta.RESTMapping, error) {
	gv, err := parseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	m, err := e.mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
	if err != nil {
		e.mapper.Reset()
		return nil, fmt.Errorf("failed mapping %s %s to a resource: %w", apiVersion, kind, err)
	}
	return m, nil
}
