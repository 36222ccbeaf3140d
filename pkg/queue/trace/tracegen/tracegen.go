// Package tracegen generates random, valid queue traces (format version 1,
// see pkg/queue/trace) from a seed, writes traces back as JSON Lines, and
// shrinks a trace that shows a problem to a minimal one.
//
// A generated trace is valid by construction: while generating, the trace is
// replayed through the model (trace.NewModel), so that fail and done name pods
// the queue really has in flight, add names pods it does not hold, and ungate
// names pods it does. Every add and fail gets an instant of its own, because
// two pods with equal priority and equal timestamp have no defined order
// upstream.
//
// The package has no Kubernetes dependencies beyond the root module's, so
// both the root module's benchmarks and the perf module's differential tests
// can use it.
package tracegen

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strings"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace"
)

// Weights is the relative frequency of each operation. An operation whose
// precondition does not hold (fail with no pod in flight, …) is not drawn.
type Weights struct {
	Add, Pop, Fail, Done, Event, Activate, Ungate, Delete, Snapshot int
	// With Options.PodGroups only (all three zero: DefaultGroupWeights').
	PodGroupAdd, PodGroupDelete, Attempted int
}

// DefaultGroupWeights are the pod-group operations' weights with
// Options.PodGroups when Weights gives none. Attempted is drawn only while
// a popped group awaits it, and the scheduler ends a group's cycle before
// its next pop.
var DefaultGroupWeights = Weights{PodGroupAdd: 4, PodGroupDelete: 1, Attempted: 30}

// DefaultWeights is a mix that exercises every rule on short traces: several
// pods in flight, errors, pending plugins, events during flight, gates.
var DefaultWeights = Weights{Add: 16, Pop: 24, Fail: 16, Done: 6, Event: 12, Activate: 4, Ungate: 4, Delete: 3, Snapshot: 3}

// Time is how far the clock moves before an operation, as a mix of steps:
// with probability Small/total a step in [0, 300) ms, Medium in [0.3, 5) s,
// Large in [5, 40) s, Leftover a gap just above the leftover timeout
// (podMaxInUnschedulablePodsSeconds, at most an hour), so that the 5-minute
// flush fires, and Long a gap of up to LongMillis (default 4 h), in which
// the leftover flush re-checks gated pods many times over.
type Time struct {
	Small, Medium, Large, Leftover, Long int
	LongMillis                           int64
}

// DefaultLongMillis is the longest Long step when Time gives none: a replay
// through upstream's queue runs the backoff flush at every second of it.
const DefaultLongMillis = 4 * 3600 * 1000

// DefaultTime is the step mix of short random traces.
var DefaultTime = Time{Small: 70, Medium: 20, Large: 8, Leftover: 2}

// Options shapes a generated trace. The zero value is usable: 200 operations
// with the default mixes and a random config with popFromBackoffQ off.
type Options struct {
	// Ops is the number of operations (default 200).
	Ops int
	// Pods caps the number of adds (0: no cap).
	Pods int
	// MaxInFlight caps the pods in flight at once (0: random, 1 to 6).
	MaxInFlight int
	// PopFromBackoffQ is the gate setting, used when Config is nil.
	PopFromBackoffQ bool
	// Version is the queue whose behaviour keeps the trace valid (which
	// pods are in flight when a fail or done names one); zero: the default.
	// The trace itself names no version.
	Version queue.Version
	// Config, if set, is used as is; otherwise one is drawn: usually the
	// defaults, sometimes other backoff and leftover durations, including
	// podMaxBackoffSeconds 0 and the largest values a trace may give.
	Config *trace.Config
	// Plugins, if set, is the pool of plugin names; otherwise one to four
	// names are drawn, and sometimes none (all failures are errors).
	Plugins []string
	// Gated is the fraction of adds that carry scheduling gates (0: 1/7;
	// negative: none).
	Gated float64
	// Weights and Time default to DefaultWeights and DefaultTime.
	Weights *Weights
	Time    *Time
	// PodGroups turns GenericWorkload on: about half the pods name a pod
	// group of their namespace, PodGroup objects come and go, and a popped
	// group's cycle ends with attempted. Off, the traces (and the random
	// draws) are those of earlier versions, seed for seed.
	PodGroups bool
	// NewDriver, if set, is the queue that keeps the trace valid in place of
	// the model (trace.NewModel), for plugins, the pool the trace names. With
	// PodGroups it must be a trace.GroupDriver. The caller closes it, if it
	// needs closing, once Generate returned.
	NewDriver func(cfg trace.Config, plugins []string) trace.Driver
}

var pluginNames = []string{"NodeResourcesFit", "NodeAffinity", "TaintToleration", "VolumeBinding", "InterPodAffinity", "PodTopologySpread"}

var namespaces = []string{"default", "team-a"}

var gateNames = []string{"example.com/quota", "example.com/ready"}

// generator holds the state of one generation.
type generator struct {
	r       *rand.Rand
	opts    Options
	w       Weights
	tm      Time
	cfg     trace.Config
	plugins []string
	model   trace.Driver
	// gd is model with PodGroups, else nil.
	gd       trace.GroupDriver
	ops      []trace.Op
	now      int64 // the last op's at
	prev     int64 // the time up to which periodic work ran on the model
	inFlight []string
	names    []string // every pod name used so far
	gated    map[string]bool
	adds     int
	nextPod  int
	// Pod groups: every group named so far, whether its PodGroup object is
	// observed, and the group popped whose cycle has not ended (attempted).
	groups    []string
	observed  map[string]bool
	nextGroup int
	awaiting  string
	// groupOf is each pod's group, as its last add named it.
	groupOf map[string]string
}

// Generate returns a random valid trace for seed.
func Generate(seed int64, opts Options) *trace.Trace {
	g := &generator{r: rand.New(rand.NewSource(seed)), opts: opts, gated: map[string]bool{}, observed: map[string]bool{}, groupOf: map[string]string{}}
	if g.opts.Ops <= 0 {
		g.opts.Ops = 200
	}
	g.w = DefaultWeights
	if opts.Weights != nil {
		g.w = *opts.Weights
	}
	if opts.PodGroups && g.w.PodGroupAdd == 0 && g.w.PodGroupDelete == 0 && g.w.Attempted == 0 {
		g.w.PodGroupAdd, g.w.PodGroupDelete, g.w.Attempted = DefaultGroupWeights.PodGroupAdd, DefaultGroupWeights.PodGroupDelete, DefaultGroupWeights.Attempted
	}
	g.tm = DefaultTime
	if opts.Time != nil {
		g.tm = *opts.Time
	}
	if g.opts.Gated == 0 {
		g.opts.Gated = 1.0 / 7
	}
	if g.opts.MaxInFlight <= 0 {
		g.opts.MaxInFlight = 1 + g.r.Intn(6)
	}
	g.cfg = g.config()
	if opts.PodGroups {
		g.cfg.GenericWorkload = true
	}
	g.plugins = g.pluginPool()
	g.ops = make([]trace.Op, 0, g.opts.Ops)
	// A replay registers exactly the plugins the trace names (Plugins), and
	// registration matters: an event no plugin registered is dropped. So the
	// first operation is an event naming the whole pool; with no pod queued
	// or in flight, it changes nothing else.
	cfg := g.cfg
	cfg.Version = g.opts.Version
	if opts.NewDriver != nil {
		g.model = opts.NewDriver(cfg, g.plugins)
	} else {
		g.model = trace.NewModel(cfg, g.plugins)
	}
	if opts.PodGroups {
		gd, ok := g.model.(trace.GroupDriver)
		if !ok {
			panic(fmt.Sprintf("tracegen: PodGroups needs a queue that queues pod groups (a trace.GroupDriver); %T is not one", g.model))
		}
		g.gd = gd
	}
	if len(g.plugins) > 0 {
		g.emit(trace.Op{Kind: trace.OpEvent, Event: trace.EventLabels()[g.r.Intn(len(trace.Events))], Queue: append([]string(nil), g.plugins...)})
	}
	for len(g.ops) < g.opts.Ops {
		g.step()
	}
	return trace.New(g.cfg, g.ops)
}

func (g *generator) config() trace.Config {
	if g.opts.Config != nil {
		return *g.opts.Config
	}
	c := trace.DefaultConfig()
	c.PopFromBackoffQ = g.opts.PopFromBackoffQ
	// Any value from 0 to the largest the reader accepts is valid, including
	// an initial backoff above the maximum.
	const most = math.MaxInt64 / int64(time.Second)
	if g.r.Intn(10) < 3 {
		c.PodInitialBackoffSeconds = []int64{0, 1, 1, 2, 3, 20, most}[g.r.Intn(7)]
		c.PodMaxBackoffSeconds = []int64{0, 0, 1, 2, 5, 10, 30, most}[g.r.Intn(8)]
	}
	if g.r.Intn(10) < 3 {
		c.PodMaxInUnschedulablePodsSeconds = []int64{0, 5, 30, 60, 400, most}[g.r.Intn(6)]
	}
	return c
}

func (g *generator) pluginPool() []string {
	if g.opts.Plugins != nil {
		return append([]string(nil), g.opts.Plugins...)
	}
	if g.r.Intn(20) == 0 {
		return nil
	}
	perm := g.r.Perm(len(pluginNames))
	n := 1 + g.r.Intn(4)
	out := make([]string, 0, n)
	for _, i := range perm[:n] {
		out = append(out, pluginNames[i])
	}
	sort.Strings(out)
	return out
}

// advance moves the clock before an op; adds and fails always move it, so
// that each has its own instant.
func (g *generator) advance(kind trace.OpKind) {
	total := g.tm.Small + g.tm.Medium + g.tm.Large + g.tm.Leftover + g.tm.Long
	var dt int64
	if total > 0 {
		switch x := g.r.Intn(total); {
		case x < g.tm.Small:
			dt = g.r.Int63n(300)
		case x < g.tm.Small+g.tm.Medium:
			dt = 300 + g.r.Int63n(4700)
		case x < g.tm.Small+g.tm.Medium+g.tm.Large:
			dt = 5000 + g.r.Int63n(35000)
		case x < g.tm.Small+g.tm.Medium+g.tm.Large+g.tm.Leftover:
			// Capped at an hour: the periodic work runs every second of a gap.
			dt = min(g.cfg.PodMaxInUnschedulablePodsSeconds, 3600)*1000 + g.r.Int63n(40000)
		default:
			long := g.tm.LongMillis
			if long <= 0 {
				long = DefaultLongMillis
			}
			// Any length, mostly not a whole number of flush periods.
			dt = 1 + g.r.Int63n(long)
		}
	}
	// attempted sets its group's timestamp, as a fail sets its pod's.
	if dt == 0 && (kind == trace.OpAdd || kind == trace.OpFail || kind == trace.OpAttempted) {
		dt = 1
	}
	g.now += dt
}

// emit appends op at the next instant and applies it to the model.
func (g *generator) emit(op trace.Op) {
	g.advance(op.Kind)
	op.At = g.now
	op.Line = len(g.ops) + 2 // after the header
	trace.RunPeriodic(g.model, g.prev, op.At)
	g.prev = op.At
	g.model.SetTime(op.At)
	switch op.Kind {
	case trace.OpAdd:
		if op.Group != "" {
			g.gd.AddGroupMember(op.Pod, op.Priority, op.Gates, op.Group)
		} else {
			g.model.Add(op.Pod, op.Priority, op.Gates)
		}
	case trace.OpPop:
		if g.gd != nil {
			name, group, members, _, ok := g.gd.PopEntity()
			switch {
			case ok && group:
				g.inFlight = append(g.inFlight, members...)
				g.awaiting = name
			case ok:
				g.inFlight = append(g.inFlight, name)
			}
		} else if pod, _, ok := g.model.Pop(); ok {
			g.inFlight = append(g.inFlight, pod)
		}
	case trace.OpPodGroupAdd:
		g.gd.AddPodGroup(op.Group, op.Priority)
	case trace.OpPodGroupDelete:
		g.gd.DeletePodGroup(op.Group)
	case trace.OpAttempted:
		g.gd.Attempted(op.Group, op.Status)
	case trace.OpFail:
		g.model.Fail(op.Pod, op.Plugins, op.Pending)
		g.dropInFlight(op.Pod)
	case trace.OpDone:
		g.model.Done(op.Pod)
		g.dropInFlight(op.Pod)
	case trace.OpEvent:
		g.model.Event(op.Event, op.Queue)
	case trace.OpActivate:
		g.model.Activate(op.Pods)
	case trace.OpUngate:
		g.model.Ungate(op.Pod)
	case trace.OpDelete:
		g.model.Delete(op.Pod)
	}
	g.ops = append(g.ops, op)
}

func (g *generator) dropInFlight(pod string) {
	for i, p := range g.inFlight {
		if p == pod {
			g.inFlight = append(g.inFlight[:i], g.inFlight[i+1:]...)
			return
		}
	}
}

func (g *generator) step() {
	w := g.w
	if g.opts.Pods > 0 && g.adds >= g.opts.Pods {
		w.Add = 0
	}
	if len(g.inFlight) >= g.opts.MaxInFlight {
		w.Pop = 0
	}
	if len(g.inFlight) == 0 {
		w.Fail, w.Done = 0, 0
	}
	if len(g.names) == 0 {
		w.Ungate = 0
	}
	if g.awaiting == "" {
		w.Attempted = 0
	} else {
		// The scheduler ends a group's cycle before it pops again.
		w.Pop = 0
	}
	if !g.opts.PodGroups {
		w.PodGroupAdd, w.PodGroupDelete, w.Attempted = 0, 0, 0
	} else if len(g.observedGroups()) == 0 {
		w.PodGroupDelete = 0
	}
	weights := []int{w.Add, w.Pop, w.Fail, w.Done, w.Event, w.Activate, w.Ungate, w.Delete, w.Snapshot, w.PodGroupAdd, w.PodGroupDelete, w.Attempted}
	total := 0
	for _, x := range weights {
		total += x
	}
	if total == 0 {
		g.emit(trace.Op{Kind: trace.OpSnapshot})
		return
	}
	x := g.r.Intn(total)
	k := 0
	for ; x >= weights[k]; k++ {
		x -= weights[k]
	}
	switch k {
	case 0:
		g.add()
	case 1:
		g.emit(trace.Op{Kind: trace.OpPop})
	case 2:
		g.fail()
	case 3:
		g.emit(trace.Op{Kind: trace.OpDone, Pod: g.inFlight[g.r.Intn(len(g.inFlight))]})
	case 4:
		g.emit(trace.Op{Kind: trace.OpEvent, Event: trace.EventLabels()[g.r.Intn(len(trace.Events))], Queue: g.subset(g.plugins, 3)})
	case 5:
		g.activate()
	case 6:
		g.ungate()
	case 7:
		g.emit(trace.Op{Kind: trace.OpDelete, Pod: g.anyPod()})
	case 8:
		g.emit(trace.Op{Kind: trace.OpSnapshot})
	case 9:
		g.podGroupAdd()
	case 10:
		obs := g.observedGroups()
		group := obs[g.r.Intn(len(obs))]
		delete(g.observed, group)
		g.emit(trace.Op{Kind: trace.OpPodGroupDelete, Group: group})
	default:
		group := g.awaiting
		g.awaiting = ""
		g.emit(trace.Op{Kind: trace.OpAttempted, Group: group, Status: []string{trace.StatusSuccess, trace.StatusUnschedulable, trace.StatusUnschedulable, trace.StatusError}[g.r.Intn(4)]})
	}
}

// observedGroups are the groups whose PodGroup object the queue holds, in
// the order they were named.
func (g *generator) observedGroups() []string {
	var out []string
	for _, n := range g.groups {
		if g.observed[n] {
			out = append(out, n)
		}
	}
	return out
}

// podGroupAdd observes the PodGroup of a group named before or of a new
// one. Not of a group with two or more members waiting in incomplete:
// upstream forms the group from them in map order, and the group takes the
// timestamp of whichever comes first (AddPodGroup, addPodGroupMember), so
// its place in activeQ among other entities is not defined.
func (g *generator) podGroupAdd() {
	incomplete := map[string]int{}
	for _, p := range g.names {
		if grp := g.groupOf[p]; grp != "" && g.model.Where(p) == "incomplete" {
			incomplete[grp]++
		}
	}
	var cands []string
	for _, n := range g.groups {
		if !g.observed[n] && incomplete[n] <= 1 {
			cands = append(cands, n)
		}
	}
	var group string
	if len(cands) > 0 && g.r.Intn(4) != 0 {
		group = cands[g.r.Intn(len(cands))]
	} else {
		group = g.newGroup(namespaces[g.r.Intn(len(namespaces))])
	}
	g.observed[group] = true
	g.emit(trace.Op{Kind: trace.OpPodGroupAdd, Group: group, Priority: []int32{0, 0, 10, 100, -5}[g.r.Intn(5)]})
}

func (g *generator) newGroup(ns string) string {
	n := fmt.Sprintf("%s/g%d", ns, g.nextGroup)
	g.nextGroup++
	g.groups = append(g.groups, n)
	return n
}

// groupFor draws the group of a new pod in ns: none for about half the
// pods, else a group of ns named before (three in four) or a new one.
func (g *generator) groupFor(ns string) string {
	if g.r.Intn(2) == 0 {
		return ""
	}
	var cands []string
	for _, n := range g.groups {
		if strings.HasPrefix(n, ns+"/") {
			cands = append(cands, n)
		}
	}
	if len(cands) > 0 && g.r.Intn(4) != 0 {
		return cands[g.r.Intn(len(cands))]
	}
	return g.newGroup(ns)
}

func (g *generator) add() {
	// Mostly a new pod; sometimes a pod the queue has forgotten (done or
	// deleted) comes back under the same name.
	name := ""
	if len(g.names) > 0 && g.r.Intn(8) == 0 {
		if n := g.names[g.r.Intn(len(g.names))]; g.model.Where(n) == "" {
			name = n
		}
	}
	if name == "" {
		name = fmt.Sprintf("%s/p%d", namespaces[g.r.Intn(len(namespaces))], g.nextPod)
		g.nextPod++
		g.names = append(g.names, name)
	}
	op := trace.Op{Kind: trace.OpAdd, Pod: name, Priority: []int32{0, 0, 0, 10, 100, -5}[g.r.Intn(6)]}
	if g.opts.PodGroups {
		ns, _, _ := strings.Cut(name, "/")
		op.Group = g.groupFor(ns)
		g.groupOf[name] = op.Group
	}
	if g.r.Float64() < g.opts.Gated {
		op.Gates = gateNames[:1+g.r.Intn(len(gateNames))]
		g.gated[name] = true
	} else {
		delete(g.gated, name)
	}
	g.adds++
	g.emit(op)
}

func (g *generator) fail() {
	cands := g.inFlight
	if g.awaiting != "" {
		// A single pod's failure clears upstream's last popped entity, after
		// which the awaited group's attempted fails (AddAttemptedPodGroupIfNeeded
		// finds the group its later members formed): the scheduler's group
		// cycle and a single pod's failure do not interleave so.
		cands = nil
		for _, p := range g.inFlight {
			if g.groupOf[p] != "" {
				cands = append(cands, p)
			}
		}
		if len(cands) == 0 {
			g.emit(trace.Op{Kind: trace.OpSnapshot})
			return
		}
	}
	pod := cands[g.r.Intn(len(cands))]
	op := trace.Op{Kind: trace.OpFail, Pod: pod, Plugins: []string{}}
	if len(g.plugins) > 0 && g.r.Intn(5) != 0 {
		op.Plugins = g.subset(g.plugins, 1)
		if len(op.Plugins) == 0 {
			op.Plugins = []string{g.plugins[g.r.Intn(len(g.plugins))]}
		}
		if g.r.Intn(4) == 0 {
			op.Pending = g.subset(op.Plugins, 2)
		}
	}
	g.emit(op)
}

// subset returns a random subset of l in l's order; each element is kept
// with probability 1/keep.
func (g *generator) subset(l []string, keep int) []string {
	out := []string{}
	for _, s := range l {
		if g.r.Intn(keep) == 0 {
			out = append(out, s)
		}
	}
	return out
}

func (g *generator) anyPod() string {
	switch {
	case len(g.inFlight) > 0 && g.r.Intn(4) == 0:
		return g.inFlight[g.r.Intn(len(g.inFlight))]
	case len(g.names) > 0 && g.r.Intn(10) != 0:
		return g.names[g.r.Intn(len(g.names))]
	}
	return "default/unknown"
}

func (g *generator) activate() {
	n := 1 + g.r.Intn(3)
	pods := make([]string, 0, n)
	for i := 0; i < n; i++ {
		pods = append(pods, g.anyPod())
	}
	g.emit(trace.Op{Kind: trace.OpActivate, Pods: pods})
}

func (g *generator) ungate() {
	// Prefer a gated pod the queue holds; else any pod it holds.
	var cands []string
	for n := range g.gated {
		if g.model.Where(n) != "" {
			cands = append(cands, n)
		}
	}
	sort.Strings(cands)
	if len(cands) == 0 || g.r.Intn(4) == 0 {
		for i := 0; i < 8; i++ {
			if n := g.names[g.r.Intn(len(g.names))]; g.model.Where(n) != "" {
				cands = []string{n}
				break
			}
		}
	}
	if len(cands) == 0 {
		// No pod to ungate: an event instead (a snapshot would tilt the
		// benchmark's mix, which has none).
		g.emit(trace.Op{Kind: trace.OpEvent, Event: trace.EventLabels()[g.r.Intn(len(trace.Events))], Queue: g.subset(g.plugins, 3)})
		return
	}
	name := cands[g.r.Intn(len(cands))]
	delete(g.gated, name)
	g.emit(trace.Op{Kind: trace.OpUngate, Pod: name})
}
