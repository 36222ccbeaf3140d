package difftest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/schedulinggates"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	testingclock "k8s.io/utils/clock/testing"

	upstreamqueue "github.com/kubectl-schedq/kubectl-schedq/perf/difftest/internal/upstreamqueue"
	"github.com/kubectl-schedq/kubectl-schedq/perf/internal/kubeversion"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace"
)

// Upstream drives kube-scheduler's own PriorityQueue (a test-time copy of
// pkg/scheduler/backend/queue of the k8s.io/kubernetes version perf/go.mod
// requires, v1.37.2, see internal/upstreamgen) with a trace, the way
// queue-spec §5 describes: a fake clock, no Run, the two flushes called at the
// instants Replay chooses, and a failed attempt handled as
// handleSchedulingFailure does. With GenericWorkload on (the trace's
// genericWorkload) pods may name a PodGroup: the queue then holds and pops
// pod groups (QueuedPodGroupInfo) too, driven as the scheduler's pod-group
// cycle does (schedule_one_podgroup.go).
//
// The feature gates and the scheduler metrics are process-global, so at most
// one Upstream may exist at a time: NewUpstream panics if another one has not
// been closed.
type Upstream struct {
	Queue  *upstreamqueue.PriorityQueue
	clock  *testingclock.FakeClock
	ctx    context.Context
	cancel context.CancelFunc
	logger klog.Logger
	errs   *errorSink
	// hints is the queue's hint map for the default profile.
	hints upstreamqueue.QueueingHintMap

	pods     map[string]*v1.Pod
	inFlight map[string]*framework.QueuedPodInfo

	// genericWorkload is the gate the queue was built with.
	genericWorkload bool
	// podGroups are the PodGroup objects observed, by namespace/name.
	podGroups map[string]*schedulingv1beta1.PodGroup
	// lastGroup is the pod group the last pop handed out, which attempted
	// hands back (the scheduler passes the popped record).
	lastGroup *framework.QueuedPodGroupInfo
}

var (
	_ trace.StreamDriver = (*Upstream)(nil)
	_ trace.GroupDriver  = (*Upstream)(nil)
)

// UpstreamVersion is the version of the queue copied into
// internal/upstreamqueue (perf/go.mod's k8s.io/kubernetes): the model is
// compared at the same version.
var UpstreamVersion = func() queue.Version {
	v, err := queue.ParseVersion(kubeversion.Get())
	if err != nil {
		panic("difftest: the upstream queue's version: " + err.Error())
	}
	return v
}()

// newModel is the model of UpstreamVersion's queue, configured as cfg says.
func newModel(cfg trace.Config, plugins []string) *trace.Model {
	cfg.Version = UpstreamVersion
	return trace.NewModel(cfg, plugins)
}

var (
	live            atomic.Bool
	sharedInformers = sync.OnceValue(func() informers.SharedInformerFactory {
		// The queue only takes listers from it (the nominator's pod lister
		// and a namespace lister) and none of the calls here reads them.
		return informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	})
)

// upstreamEvents are the events of trace.Events in upstream's own terms,
// keyed by the same labels. They are named, not converted from the model's
// events: the action bits are not the same in every version (v1.37 shifted
// them), the labels are (see TestUpstream_Events).
var upstreamEvents = map[string]fwk.ClusterEvent{
	"NodeAdd":                   {Resource: fwk.Node, ActionType: fwk.Add},
	"NodeDelete":                {Resource: fwk.Node, ActionType: fwk.Delete},
	"NodeUpdateNodeAllocatable": {Resource: fwk.Node, ActionType: fwk.UpdateNodeAllocatable},
	"NodeUpdateNodeLabel":       {Resource: fwk.Node, ActionType: fwk.UpdateNodeLabel},
	"NodeUpdateNodeTaint":       {Resource: fwk.Node, ActionType: fwk.UpdateNodeTaint},
	"AssignedPodAdd":            {Resource: fwk.AssignedPod, ActionType: fwk.Add},
	"AssignedPodDelete":         {Resource: fwk.AssignedPod, ActionType: fwk.Delete},
	"AssignedPodUpdatePodLabel": {Resource: fwk.AssignedPod, ActionType: fwk.UpdatePodLabel},
	"PersistentVolumeClaimAdd":  {Resource: fwk.PersistentVolumeClaim, ActionType: fwk.Add},
}

// upstreamEvent is the upstream event of a trace event label.
func upstreamEvent(label string) fwk.ClusterEvent {
	ev, ok := upstreamEvents[label]
	if !ok {
		// trace.Read accepts only the labels of trace.Events, and
		// TestUpstream_Events checks that each has an entry here.
		panic(fmt.Sprintf("difftest: no upstream event for trace event %q", label))
	}
	return ev
}

// eventObject is the new object of a trace event: the plugins that answer
// Queue for it, so that a pod in flight asking later gets the same answers.
type eventObject struct{ queue sets.Set[string] }

// NewUpstream returns upstream's queue configured as the trace says: cfg (the
// SchedulerPopFromBackoffQ gate is set before the queue is built, which is
// when the queue reads it), every plugin in plugins registered for every event
// of trace.Events, and the real SchedulingGates plugin as the PreEnqueue
// plugin. The metrics the snapshots read are reset. Close it when done.
func NewUpstream(cfg trace.Config, plugins []string) (*Upstream, error) {
	if !live.CompareAndSwap(false, true) {
		panic("difftest: an Upstream queue is already open; the gates and metrics are process-global")
	}
	u, err := newUpstream(cfg, plugins)
	if err != nil {
		live.Store(false)
		return nil, err
	}
	return u, nil
}

func newUpstream(cfg trace.Config, plugins []string) (*Upstream, error) {
	gates := map[featuregate.Feature]bool{features.SchedulerPopFromBackoffQ: cfg.PopFromBackoffQ, features.GenericWorkload: cfg.GenericWorkload}
	set := map[string]bool{}
	for g, on := range gates {
		set[string(g)] = on
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(set); err != nil {
		return nil, err
	}
	for g, on := range gates {
		if got := utilfeature.DefaultFeatureGate.Enabled(g); got != on {
			return nil, fmt.Errorf("gate %s is %v after setting it to %v", g, got, on)
		}
	}
	metrics.Register()
	resetMetrics()

	errs := &errorSink{}
	logger := logr.New(errs)
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	sg, err := schedulinggates.New(ctx, nil, nil, plfeature.Features{})
	if err != nil {
		cancel()
		return nil, err
	}
	sgPlugin := sg.(*schedulinggates.SchedulingGates)
	gateEvents, err := sgPlugin.EventsToRegister(ctx)
	if err != nil {
		cancel()
		return nil, err
	}

	hints := upstreamqueue.QueueingHintMap{}
	registerPlugins(hints, plugins)
	for _, e := range gateEvents {
		hints[e.Event] = append(hints[e.Event], &upstreamqueue.QueueingHintFunction{PluginName: sgPlugin.Name(), QueueingHintFn: e.QueueingHintFn})
	}

	clk := testingclock.NewFakeClock(trace.Epoch)
	q := upstreamqueue.NewPriorityQueue(
		(&queuesort.PrioritySort{}).Less,
		sharedInformers(),
		upstreamqueue.WithClock(clk),
		upstreamqueue.WithPodInitialBackoffDuration(time.Duration(cfg.PodInitialBackoffSeconds)*time.Second),
		upstreamqueue.WithPodMaxBackoffDuration(time.Duration(cfg.PodMaxBackoffSeconds)*time.Second),
		upstreamqueue.WithPodMaxInUnschedulablePodsDuration(time.Duration(cfg.PodMaxInUnschedulablePodsSeconds)*time.Second),
		upstreamqueue.WithQueueingHintMapPerProfile(upstreamqueue.QueueingHintMapPerProfile{v1.DefaultSchedulerName: hints}),
		upstreamqueue.WithPreEnqueuePluginMap(map[string]map[string]fwk.PreEnqueuePlugin{v1.DefaultSchedulerName: {sgPlugin.Name(): sgPlugin}}),
		// As kube-scheduler builds it.
		upstreamqueue.WithMetricsRecorder(metrics.NewMetricsAsyncRecorder(1000, time.Second, ctx.Done())),
	)
	return &Upstream{
		Queue:    q,
		clock:    clk,
		ctx:      ctx,
		cancel:   cancel,
		logger:   logger,
		errs:     errs,
		hints:    hints,
		pods:     map[string]*v1.Pod{},
		inFlight: map[string]*framework.QueuedPodInfo{},

		genericWorkload: cfg.GenericWorkload,
		podGroups:       map[string]*schedulingv1beta1.PodGroup{},
	}, nil
}

// registerPlugins registers each plugin for every event of trace.Events.
func registerPlugins(hints upstreamqueue.QueueingHintMap, plugins []string) {
	for _, label := range trace.EventLabels() {
		ev := upstreamEvent(label)
		for _, pl := range plugins {
			hints[ev] = append(hints[ev], &upstreamqueue.QueueingHintFunction{PluginName: pl, QueueingHintFn: queueIfListed(pl)})
		}
	}
}

// RegisterPlugins implements trace.StreamDriver: the queue reads its hint
// map at each use, so plugins added to it count from the next operation.
func (u *Upstream) RegisterPlugins(plugins []string) { registerPlugins(u.hints, plugins) }

func queueIfListed(plugin string) fwk.QueueingHintFn {
	return func(_ klog.Logger, _ *v1.Pod, _, newObj interface{}) (fwk.QueueingHint, error) {
		if o, ok := newObj.(*eventObject); ok && o.queue.Has(plugin) {
			return fwk.Queue, nil
		}
		return fwk.QueueSkip, nil
	}
}

// resetMetrics zeroes the queue's metrics, the ones the snapshots read
// among them. The pending-pods gauges are set to 0 rather than reset,
// because the queue's recorders hold their children.
func resetMetrics() {
	metrics.SchedulerQueueIncomingPods.Reset()
	metrics.SchedulerQueueIncomingEntities.Reset()
	metrics.QueuedEntities.Reset()
	for _, g := range []interface{ Set(float64) }{metrics.ActivePods(), metrics.BackoffPods(), metrics.UnschedulablePods(), metrics.GatedPods(),
		metrics.IncompletePodGroupPods(), metrics.PendingPodGroupPods()} {
		g.Set(0)
	}
}

// Close stops the queue and lets another Upstream be built.
func (u *Upstream) Close() {
	u.Queue.Close()
	u.cancel()
	live.Store(false)
}

// Errors returns what upstream logged at error level, which none of the
// trace's operations should cause.
func (u *Upstream) Errors() []string { return u.errs.get() }

func newPod(name string, priority int32, gates []string) *v1.Pod {
	ns, n, _ := strings.Cut(name, "/")
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n, UID: types.UID(name)},
		Spec:       v1.PodSpec{SchedulerName: v1.DefaultSchedulerName, Priority: &priority},
	}
	for _, g := range gates {
		p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, v1.PodSchedulingGate{Name: g})
	}
	return p
}

func (u *Upstream) pod(name string) *v1.Pod {
	if p, ok := u.pods[name]; ok {
		return p
	}
	return newPod(name, 0, nil)
}

// SetTime implements trace.Driver.
func (u *Upstream) SetTime(ms int64) {
	u.clock.SetTime(trace.Epoch.Add(time.Duration(ms) * time.Millisecond))
}

// Add implements trace.Driver.
func (u *Upstream) Add(name string, priority int32, gates []string) {
	p := newPod(name, priority, gates)
	u.pods[name] = p
	u.Queue.Add(u.ctx, p)
}

// Pop implements trace.Driver: it pops only when upstream's Pop would not
// block.
func (u *Upstream) Pop() (string, int, bool) {
	if u.Queue.PopWouldBlock() {
		return "", 0, false
	}
	entity, err := u.Queue.Pop(u.logger)
	pi, ok := entity.(*framework.QueuedPodInfo)
	if err != nil || !ok {
		u.errs.add(fmt.Sprintf("Pop: %T, %v", entity, err))
		return "", 0, false
	}
	name := string(pi.Pod.UID)
	u.inFlight[name] = pi
	return name, pi.Attempts, true
}

// Fail implements trace.Driver, as handleSchedulingFailure does for a
// FitError (plugins) or another error (no plugins) (queue-spec §5.4): on a
// copy of the popped record, as v1.37 does.
func (u *Upstream) Fail(name string, plugins, pending []string) {
	pi := u.inFlight[name].DeepCopy()
	delete(u.inFlight, name)
	pi.ClearRejectorPlugins()
	pi.UnschedulablePlugins = sets.New(plugins...)
	pi.PendingPlugins = sets.New(pending...)
	if err := u.Queue.AddUnschedulablePodIfNotPresent(u.logger, pi, u.Queue.SchedulingCycle()); err != nil {
		u.errs.add(fmt.Sprintf("AddUnschedulablePodIfNotPresent(%s): %v", name, err))
	}
}

// Done implements trace.Driver.
func (u *Upstream) Done(name string) {
	delete(u.inFlight, name)
	u.Queue.Done(types.UID(name))
}

// Event implements trace.Driver.
func (u *Upstream) Event(label string, plugins []string) {
	u.Queue.MoveAllToActiveOrBackoffQueue(u.logger, upstreamEvent(label), nil, &eventObject{queue: sets.New(plugins...)}, nil)
}

// Activate implements trace.Driver.
func (u *Upstream) Activate(names []string) {
	pods := make(map[string]*v1.Pod, len(names))
	for _, n := range names {
		pods[n] = u.pod(n)
	}
	u.Queue.Activate(u.logger, pods)
}

// Ungate implements trace.Driver: an update that removes every scheduling
// gate.
func (u *Upstream) Ungate(name string) {
	old := u.pod(name)
	updated := old.DeepCopy()
	updated.Spec.SchedulingGates = nil
	u.pods[name] = updated
	u.Queue.Update(u.ctx, old, updated)
}

// Delete implements trace.Driver.
func (u *Upstream) Delete(name string) { u.Queue.Delete(u.logger, u.pod(name)) }

// FlushBackoffQCompleted implements trace.Driver.
func (u *Upstream) FlushBackoffQCompleted() { u.Queue.FlushBackoffQCompleted(u.logger) }

// FlushUnschedulablePodsLeftover implements trace.Driver: v1.37's
// flushUnschedulableEntitiesLeftover.
func (u *Upstream) FlushUnschedulablePodsLeftover() {
	u.Queue.FlushUnschedulableEntitiesLeftover(u.logger)
}

// Where implements trace.Driver.
func (u *Upstream) Where(name string) string {
	if _, ok := u.inFlight[name]; ok {
		return "inFlight"
	}
	if p := u.pod(name); u.member(p) {
		loc, _ := u.Queue.LocateMember(p)
		return loc
	}
	loc, _ := u.Queue.Locate(u.pod(name))
	return loc
}

// member reports whether the queue takes p as a pod-group member.
func (u *Upstream) member(p *v1.Pod) bool { return u.genericWorkload && p.Spec.SchedulingGroup != nil }

// AddPodGroup implements trace.GroupDriver: a PodGroup object observed.
func (u *Upstream) AddPodGroup(group string, priority int32) {
	ns, n, _ := strings.Cut(group, "/")
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n, UID: types.UID("podgroup/" + group)},
		Spec:       schedulingv1beta1.PodGroupSpec{Priority: &priority},
	}
	u.podGroups[group] = pg
	u.Queue.AddPodGroup(u.logger, pg)
}

// DeletePodGroup implements trace.GroupDriver.
func (u *Upstream) DeletePodGroup(group string) {
	pg, ok := u.podGroups[group]
	if !ok {
		ns, n, _ := strings.Cut(group, "/")
		pg = &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n}}
	}
	delete(u.podGroups, group)
	u.Queue.DeletePodGroup(u.logger, pg)
}

// AddGroupMember implements trace.GroupDriver: Add of a pod whose
// spec.schedulingGroup names group (in the pod's namespace).
func (u *Upstream) AddGroupMember(name string, priority int32, gates []string, group string) {
	p := newPod(name, priority, gates)
	_, pgName, _ := strings.Cut(group, "/")
	p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &pgName}
	u.pods[name] = p
	u.Queue.Add(u.ctx, p)
}

// PopEntity implements trace.GroupDriver: Pop, which may hand out a pod
// group; its members are then in flight, each with its own record, as the
// scheduler's pod-group cycle holds them.
func (u *Upstream) PopEntity() (string, bool, []string, int, bool) {
	if u.Queue.PopWouldBlock() {
		return "", false, nil, 0, false
	}
	entity, err := u.Queue.Pop(u.logger)
	if err != nil || entity == nil {
		u.errs.add(fmt.Sprintf("Pop: %T, %v", entity, err))
		return "", false, nil, 0, false
	}
	switch e := entity.(type) {
	case *framework.QueuedPodInfo:
		name := string(e.Pod.UID)
		u.inFlight[name] = e
		return name, false, nil, e.Attempts, true
	case *framework.QueuedPodGroupInfo:
		u.lastGroup = e
		var members []string
		// CompositePodGroup is off: the group is its own single leaf, whose
		// pods are in upstream's order (PodGroupMemberPodsOrderingFunc).
		if len(e.QueuedPodInfos) != 1 {
			u.errs.add(fmt.Sprintf("pod group %s/%s has %d leaves", e.Namespace, e.Name, len(e.QueuedPodInfos)))
		}
		for _, leaf := range e.QueuedPodInfos {
			for _, pi := range leaf {
				name := string(pi.Pod.UID)
				u.inFlight[name] = pi
				members = append(members, name)
			}
		}
		return e.Namespace + "/" + e.Name, true, members, e.Attempts, true
	}
	u.errs.add(fmt.Sprintf("Pop: unexpected entity %T", entity))
	return "", false, nil, 0, false
}

// Attempted implements trace.GroupDriver: the end of the popped group's
// cycle, AddAttemptedPodGroupIfNeeded with the popped record.
func (u *Upstream) Attempted(group, status string) {
	pg := u.lastGroup
	if pg == nil || pg.Namespace+"/"+pg.Name != group {
		u.errs.add(fmt.Sprintf("attempted of %s, which was not popped last", group))
		return
	}
	u.lastGroup = nil
	var st *fwk.Status
	switch status {
	case trace.StatusSuccess:
		st = fwk.NewStatus(fwk.Success)
	case trace.StatusUnschedulable:
		st = fwk.NewStatus(fwk.Unschedulable)
	default:
		st = fwk.NewStatus(fwk.Error)
	}
	if err := u.Queue.AddAttemptedPodGroupIfNeeded(u.logger, pg, u.Queue.SchedulingCycle(), st); err != nil {
		u.errs.add(fmt.Sprintf("AddAttemptedPodGroupIfNeeded(%s): %v", group, err))
	}
}

// Snapshot implements trace.Driver. It reads the two metrics upstream
// exports and the queue's public listings; only the split of backoffQ into
// its two heaps comes from the export file.
func (u *Upstream) Snapshot() trace.Snapshot {
	if u.genericWorkload {
		return u.groupSnapshot()
	}
	s := newSnapshot(false)
	attempts := func(p *v1.Pod) int {
		if pi, ok := u.Queue.GetPod(p.Name, p.Namespace, nil); ok {
			return pi.Attempts
		}
		return -1
	}
	for _, p := range u.Queue.PodsInActiveQ() {
		putPod(&s, p, "active", attempts(p))
	}
	for _, p := range u.Queue.PodsInBackoffQ() {
		putPod(&s, p, u.Queue.BackoffHeap(p), attempts(p))
	}
	for _, p := range u.Queue.UnschedulablePods() {
		where := "unschedulable"
		if pi, ok := u.Queue.GetPod(p.Name, p.Namespace, nil); ok && pi.Gated() {
			where = "gated"
		}
		putPod(&s, p, where, attempts(p))
	}
	u.putInFlight(&s)
	return s
}

// groupSnapshot is Snapshot with GenericWorkload on: every entity as the
// export file lists it, members in their group's queue, pending and
// incomplete pods, and the queued groups.
func (u *Upstream) groupSnapshot() trace.Snapshot {
	s := newSnapshot(true)
	for _, e := range u.Queue.Entities() {
		switch en := e.Entity.(type) {
		case *framework.QueuedPodInfo:
			putPod(&s, en.Pod, e.Queue, en.Attempts)
		case *framework.QueuedPodGroupInfo:
			key := en.Namespace + "/" + en.Name
			if _, dup := s.Groups[key]; dup {
				u.errs.add(fmt.Sprintf("pod group %s is queued twice", key))
			}
			s.Groups[key] = trace.GroupState{Queue: e.Queue, Attempts: en.Attempts, Size: en.Size()}
			en.ForEachPodInfo(func(pi *framework.QueuedPodInfo) bool {
				putPod(&s, pi.Pod, e.Queue, pi.Attempts)
				return true
			})
		}
	}
	pending, incomplete := u.Queue.PodGroupMembers()
	for _, pi := range pending {
		putPod(&s, pi.Pod, "pending", pi.Attempts)
	}
	for _, pi := range incomplete {
		putPod(&s, pi.Pod, "incomplete", pi.Attempts)
	}
	u.putInFlight(&s)
	return s
}

// newSnapshot reads the queue's gauges and counters (with the pod-group
// queues when groups), for the pods to be put in.
func newSnapshot(groups bool) trace.Snapshot {
	s := trace.Snapshot{
		Pending: trace.Pending{
			Active:        gaugeValue(metrics.ActivePods()),
			Backoff:       gaugeValue(metrics.BackoffPods()),
			Unschedulable: gaugeValue(metrics.UnschedulablePods()),
			Gated:         gaugeValue(metrics.GatedPods()),
		},
		Incoming: incomingPods(),
		Pods:     map[string]trace.PodState{},
	}
	if groups {
		s.Pending.Incomplete = gaugeValue(metrics.IncompletePodGroupPods())
		s.Pending.PendingPodGroup = gaugeValue(metrics.PendingPodGroupPods())
		s.Groups = map[string]trace.GroupState{}
	}
	return s
}

// putPod records where pod p is. A pod listed twice would break upstream's
// invariants; both places are shown so that the comparison fails on it.
func putPod(s *trace.Snapshot, p *v1.Pod, where string, attempts int) {
	key := p.Namespace + "/" + p.Name
	if old, ok := s.Pods[key]; ok {
		where = old.Queue + "+" + where
	}
	s.Pods[key] = trace.PodState{Queue: where, Attempts: attempts}
}

// putInFlight records the pods in flight, with the attempts of the records
// the harness popped, and checks that upstream and the harness agree on
// how many there are.
func (u *Upstream) putInFlight(s *trace.Snapshot) {
	inFlight := u.Queue.InFlightPods()
	for _, p := range inFlight {
		a := -1
		if pi, ok := u.inFlight[string(p.UID)]; ok {
			a = pi.Attempts
		}
		putPod(s, p, "inFlight", a)
	}
	if len(inFlight) != len(u.inFlight) {
		u.errs.add(fmt.Sprintf("upstream has %d pods in flight, the harness %d", len(inFlight), len(u.inFlight)))
	}
}

func gaugeValue(g any) int {
	var m dto.Metric
	if err := g.(prometheus.Metric).Write(&m); err != nil {
		panic(err)
	}
	return int(m.GetGauge().GetValue())
}

// incomingPods reads scheduler_queue_incoming_pods_total, queue → event →
// count, leaving out pairs never incremented.
func incomingPods() map[string]map[string]int {
	ch := make(chan prometheus.Metric)
	go func() {
		metrics.SchedulerQueueIncomingPods.CounterVec.Collect(ch)
		close(ch)
	}()
	out := map[string]map[string]int{}
	for pm := range ch {
		var m dto.Metric
		if err := pm.Write(&m); err != nil {
			panic(err)
		}
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		v := int(m.GetCounter().GetValue())
		if v == 0 {
			continue
		}
		q, e := labels["queue"], labels["event"]
		if out[q] == nil {
			out[q] = map[string]int{}
		}
		out[q][e] += v
	}
	return out
}

// errorSink is a logr sink that keeps error-level messages and drops the
// rest.
type errorSink struct {
	mu   sync.Mutex
	msgs []string
}

func (s *errorSink) add(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs = append(s.msgs, msg)
}

func (s *errorSink) get() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]string(nil), s.msgs...)
	sort.Strings(out)
	return out
}

func (s *errorSink) Init(logr.RuntimeInfo)          {}
func (s *errorSink) Enabled(int) bool               { return false }
func (s *errorSink) Info(int, string, ...any)       {}
func (s *errorSink) WithValues(...any) logr.LogSink { return s }
func (s *errorSink) WithName(string) logr.LogSink   { return s }
func (s *errorSink) Error(err error, msg string, kv ...any) {
	s.add(fmt.Sprintf("%s: %v %v", msg, err, kv))
}
