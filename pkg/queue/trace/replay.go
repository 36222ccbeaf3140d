package trace

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

// Periods of upstream's two flush loops, in trace milliseconds.
const (
	BackoffFlushPeriodMillis  = 1000
	LeftoverFlushPeriodMillis = 30000
)

// Driver is a scheduling queue a trace can drive: the model (NewModel) or, in
// the perf module, upstream's PriorityQueue. Replay does the timing, checking
// and output; a Driver only applies operations. Pods are "namespace/name".
type Driver interface {
	// SetTime sets the queue's clock to Epoch + ms.
	SetTime(ms int64)
	Add(pod string, priority int32, gates []string)
	// Pop hands out a pod, or reports ok=false where upstream's Pop would block.
	Pop() (pod string, attempts int, ok bool)
	Fail(pod string, plugins, pending []string)
	Done(pod string)
	// Event is a cluster event; each plugin in queue answers Queue for every
	// pod whenever its hint is asked about this event, the others QueueSkip.
	Event(label string, queue []string)
	Activate(pods []string)
	Ungate(pod string)
	Delete(pod string)
	FlushBackoffQCompleted()
	FlushUnschedulablePodsLeftover()
	// Where returns where the queue holds pod ("inFlight", "active", …), or ""
	// if it does not.
	Where(pod string) string
	Snapshot() Snapshot
}

// GroupDriver is a Driver that queues pod groups (v1.37 with GenericWorkload).
type GroupDriver interface {
	Driver
	AddPodGroup(group string, priority int32)
	DeletePodGroup(group string)
	// AddGroupMember is Add of a pod whose spec.schedulingGroup names group.
	AddGroupMember(pod string, priority int32, gates []string, group string)
	// PopEntity is Pop that may hand out a pod group: then podGroup is true,
	// name is the group and members its pods in upstream's order.
	PopEntity() (name string, podGroup bool, members []string, attempts int, ok bool)
	// Attempted is AddAttemptedPodGroupIfNeeded; status is "success", "unschedulable" or "error".
	Attempted(group string, status string)
}

// indexedDriver is a Driver that also takes pods by a dense index: Replay
// gives each pod of a trace an index, from 0, the same for the whole replay,
// so that the driver need not hash names, and passes names only through
// setPodNames, so that it need not read a name it does not use. The Model is
// one; other drivers are driven by name (byName).
type indexedDriver interface {
	Driver
	// setPodNames gives pod i's name as names.at(i), before any operation;
	// the driver must not change names.
	setPodNames(names podNames)
	addIndex(i int32, priority int32, gates []string)
	failIndex(i int32, plugins, pending []string)
	doneIndex(i int32)
	activateIndex(is []int32)
	ungateIndex(i int32)
	deleteIndex(i int32)
	whereIndex(i int32) string
}

// byName is an indexedDriver that passes names, for drivers that only take
// names.
type byName struct {
	Driver
	names podNames
	// pods is activate's list, reused.
	pods []string
}

func (d *byName) setPodNames(names podNames) { d.names = names }
func (d *byName) addIndex(i int32, priority int32, gates []string) {
	d.Add(d.names.at(i), priority, gates)
}
func (d *byName) failIndex(i int32, plugins, pending []string) {
	d.Fail(d.names.at(i), plugins, pending)
}
func (d *byName) doneIndex(i int32) { d.Done(d.names.at(i)) }
func (d *byName) activateIndex(is []int32) {
	d.pods = d.pods[:0]
	for _, i := range is {
		d.pods = append(d.pods, d.names.at(i))
	}
	d.Activate(d.pods)
}
func (d *byName) ungateIndex(i int32)       { d.Ungate(d.names.at(i)) }
func (d *byName) deleteIndex(i int32)       { d.Delete(d.names.at(i)) }
func (d *byName) whereIndex(i int32) string { return d.Where(d.names.at(i)) }

// Quiescer is implemented by drivers that can tell when the periodic flushes
// have nothing to do, so that long gaps between operations cost nothing.
type Quiescer interface {
	Quiescent() bool
}

// planFlushes is off only in the tests that check that jumping over idle
// instants prints what stepping through them does.
var planFlushes = true

// flushPlanner is implemented by drivers that can tell the next instant at
// which a periodic flush may change the queue, and apply at once what the
// flushes before it do, so that a long gap between operations costs no more
// than its changes.
type flushPlanner interface {
	// skipIdleFlushes returns the first flush instant after from at which
	// FlushBackoffQCompleted or FlushUnschedulablePodsLeftover may change
	// the queue (math.MaxInt64 if none can before the next operation),
	// having applied what the flushes of the instants in (from, to] before
	// it do, which is at most periodic re-checks of gated pods (v1.37).
	// since is the last operation's instant, at or before from.
	skipIdleFlushes(since, from, to int64) int64
}

// Snapshot is the queue's state in the output format.
type Snapshot struct {
	Pending  Pending                   `json:"pending"`
	Incoming map[string]map[string]int `json:"incoming"`
	Pods     map[string]PodState       `json:"pods"`
	// Groups are the queued pod-group entities (GenericWorkload).
	Groups map[string]GroupState `json:"groups,omitempty"`
}

// Pending is scheduler_pending_pods by queue.
type Pending struct {
	Active        int `json:"active"`
	Backoff       int `json:"backoff"`
	Unschedulable int `json:"unschedulable"`
	Gated         int `json:"gated"`
	// Incomplete are pod-group pods whose PodGroup is not observed;
	// PendingPodGroup those waiting for their group's cycle to end.
	Incomplete      int `json:"incomplete,omitempty"`
	PendingPodGroup int `json:"pending,omitempty"`
}

// GroupState is one queued pod group in a snapshot: its queue (a pod's
// words: active, backoff, errorBackoff, unschedulable, gated), its
// attempts and the number of its queued members.
type GroupState struct {
	Queue    string `json:"queue"`
	Attempts int    `json:"attempts"`
	Size     int    `json:"size"`
}

// NamedPodState is one pod in a snapshot, with its name.
type NamedPodState struct {
	Name string
	PodState
}

// PodLister is implemented by drivers that can list a snapshot's pods, which
// costs less than filling Snapshot.Pods; Replay then encodes the list.
type PodLister interface {
	// SnapshotList returns what Snapshot would, but with Pods nil and the
	// pods appended to pods instead, each once, in any order.
	SnapshotList(pods []NamedPodState) (Snapshot, []NamedPodState)
}

// PodState is one pod in a snapshot.
type PodState struct {
	Queue    string `json:"queue"`
	Attempts int    `json:"attempts"`
}

type popLine struct {
	At       int64    `json:"at"`
	Pop      *string  `json:"pop"`
	PodGroup bool     `json:"podGroup,omitempty"`
	Pods     []string `json:"pods,omitempty"`
	Attempts *int     `json:"attempts,omitempty"`
}

// appendPopGroupRest is appendPopRest for a pop of a pod group.
func appendPopGroupRest(b []byte, group string, members []string, attempts int) []byte {
	b = append(b, `,"pop":`...)
	b = appendString(b, group)
	b = append(b, `,"podGroup":true`...)
	if len(members) > 0 {
		b = append(b, `,"pods":[`...)
		for i, m := range members {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, m)
		}
		b = append(b, ']')
	}
	b = append(b, `,"attempts":`...)
	b = strconv.AppendInt(b, int64(attempts), 10)
	return append(b, "}\n"...)
}

// appendPopRest encodes a pop line after its `{"at":<ms>` as encoding/json
// would encode popLine, without reflection: pops are a third of a trace's
// lines.
func appendPopRest(b []byte, pod string, attempts int, ok bool) []byte {
	if !ok {
		return append(b, ",\"pop\":null}\n"...)
	}
	b = append(b, `,"pop":`...)
	b = appendString(b, pod)
	b = append(b, `,"attempts":`...)
	if uint(attempts) < 10 {
		return append(b, byte('0'+attempts), '}', '\n')
	}
	b = strconv.AppendInt(b, int64(attempts), 10)
	return append(b, "}\n"...)
}

// plainJSONString reports whether s needs no escaping in JSON (nor the HTML
// escaping encoding/json does by default, which Replay turns off anyway).
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func appendPlainString(b []byte, s string) []byte {
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendString encodes s as an Encoder with SetEscapeHTML(false) would.
func appendString(b []byte, s string) []byte {
	if plainJSONString(s) {
		return appendPlainString(b, s)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// appendSnapshot encodes s as Replay's Encoder would encode it (nil maps as
// empty ones, map keys sorted), without reflection: a snapshot can hold
// every pod of a trace. Its pods are pods if not nil (sorted here), else
// s.Pods.
func appendSnapshot(b []byte, s *Snapshot, pods []NamedPodState) []byte {
	// One pod is its name and some 40 bytes: grow once, not by doubling.
	b = slices.Grow(b, 256+len(pods)*64+len(s.Pods)*64)
	b = append(b, `{"pending":{"active":`...)
	b = strconv.AppendInt(b, int64(s.Pending.Active), 10)
	b = append(b, `,"backoff":`...)
	b = strconv.AppendInt(b, int64(s.Pending.Backoff), 10)
	b = append(b, `,"unschedulable":`...)
	b = strconv.AppendInt(b, int64(s.Pending.Unschedulable), 10)
	b = append(b, `,"gated":`...)
	b = strconv.AppendInt(b, int64(s.Pending.Gated), 10)
	if s.Pending.Incomplete != 0 {
		b = append(b, `,"incomplete":`...)
		b = strconv.AppendInt(b, int64(s.Pending.Incomplete), 10)
	}
	if s.Pending.PendingPodGroup != 0 {
		b = append(b, `,"pending":`...)
		b = strconv.AppendInt(b, int64(s.Pending.PendingPodGroup), 10)
	}
	b = append(b, `},"incoming":{`...)
	for i, q := range slices.Sorted(maps.Keys(s.Incoming)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, q)
		b = append(b, ":{"...)
		events := s.Incoming[q]
		for j, e := range slices.Sorted(maps.Keys(events)) {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendString(b, e)
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(events[e]), 10)
		}
		b = append(b, '}')
	}
	b = append(b, `},"pods":{`...)
	if pods == nil {
		pods = make([]NamedPodState, 0, len(s.Pods))
		for n, st := range s.Pods {
			pods = append(pods, NamedPodState{n, st})
		}
	}
	order := sortedOrder(pods)
	for i := range pods {
		p := &pods[i]
		if order != nil {
			p = &pods[order[i].i]
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, p.Name)
		b = append(b, `:{"queue":`...)
		b = appendString(b, p.Queue)
		b = append(b, `,"attempts":`...)
		b = strconv.AppendInt(b, int64(p.Attempts), 10)
		b = append(b, '}')
	}
	b = append(b, '}')
	if len(s.Groups) > 0 {
		b = append(b, `,"groups":{`...)
		for i, g := range slices.Sorted(maps.Keys(s.Groups)) {
			if i > 0 {
				b = append(b, ',')
			}
			st := s.Groups[g]
			b = appendString(b, g)
			b = append(b, `:{"queue":`...)
			b = appendString(b, st.Queue)
			b = append(b, `,"attempts":`...)
			b = strconv.AppendInt(b, int64(st.Attempts), 10)
			b = append(b, `,"size":`...)
			b = strconv.AppendInt(b, int64(st.Size), 10)
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// podOrder is a pod's place in sortedOrder: 8 bytes of its name as a
// big-endian integer, and its index.
type podOrder struct {
	key uint64
	i   int32
}

// sortedOrder returns the pods' indices in name order, or nil if pods is
// small and now sorted itself. A snapshot can hold every pod of a trace:
// sorting by 8 bytes of the names at a time, as integers, and each run of
// equal bytes by the next 8, reads each name a few times where comparing
// names reads it at every comparison.
func sortedOrder(pods []NamedPodState) []podOrder {
	if len(pods) < 256 {
		slices.SortFunc(pods, func(a, b NamedPodState) int { return strings.Compare(a.Name, b.Name) })
		return nil
	}
	order := make([]podOrder, len(pods))
	for i := range pods {
		order[i] = podOrder{nameChunk(pods[i].Name, 0), int32(i)}
	}
	sortByChunks(order, make([]podOrder, len(pods)), pods, 0)
	return order
}

// nameChunk is name's 8 bytes from off on, big-endian, zero bytes padding
// a short name (so a name that is a prefix of another never has the larger
// chunk).
func nameChunk(name string, off int) uint64 {
	var k uint64
	for j := off; j < off+8; j++ {
		k <<= 8
		if j < len(name) {
			k |= uint64(name[j])
		}
	}
	return k
}

// sortByChunks sorts order, whose keys are the names' chunks at off, by
// name; tmp is scratch space as long as order.
func sortByChunks(order, tmp []podOrder, pods []NamedPodState, off int) {
	sortByKey(order, tmp)
	for i := 0; i < len(order); {
		j := i + 1
		for j < len(order) && order[j].key == order[i].key {
			j++
		}
		if run := order[i:j]; len(run) > 1 {
			next, longer := off+8, false
			for k := range run {
				n := pods[run[k].i].Name
				longer = longer || len(n) > next
				run[k].key = nameChunk(n, next)
			}
			if longer {
				sortByChunks(run, tmp[i:j], pods, next)
			} else {
				// Every name ends here: they differ, if at all, in trailing
				// zero bytes, which the padding hid.
				slices.SortFunc(run, func(a, b podOrder) int { return strings.Compare(pods[a.i].Name, pods[b.i].Name) })
			}
		}
		i = j
	}
}

// sortByKey sorts order by key; tmp is scratch space as long as order. Many
// keys are sorted a byte at a time, least significant first (a radix sort:
// a few passes over the keys, none for a byte that all keys share, where
// comparing sorts make some twenty over a few hundred thousand).
func sortByKey(order, tmp []podOrder) {
	if len(order) < 1024 {
		slices.SortFunc(order, func(a, b podOrder) int { return cmp.Compare(a.key, b.key) })
		return
	}
	var counts [8][256]int
	for _, o := range order {
		for d := range 8 {
			counts[d][byte(o.key>>(8*d))]++
		}
	}
	src, dst := order, tmp
	for d := range 8 {
		c := &counts[d]
		if c[byte(src[0].key>>(8*d))] == len(src) {
			continue
		}
		sum := 0
		for v, n := range c {
			c[v] = sum
			sum += n
		}
		for _, o := range src {
			v := byte(o.key >> (8 * d))
			dst[c[v]] = o
			c[v]++
		}
		src, dst = dst, src
	}
	if &src[0] != &order[0] {
		copy(order, src)
	}
}

// appendSnapshotLine encodes a snapshot op's line, {"at":…,"snapshot":…}.
func appendSnapshotLine(b []byte, at int64, s Snapshot, pods []NamedPodState) []byte {
	b = append(b, `{"at":`...)
	b = strconv.AppendInt(b, at, 10)
	b = append(b, `,"snapshot":`...)
	b = appendSnapshot(b, &s, pods)
	return append(b, "}\n"...)
}

// appendFinalLine encodes the last line, {"final":…}.
func appendFinalLine(b []byte, s Snapshot, pods []NamedPodState) []byte {
	b = append(b, `{"final":`...)
	b = appendSnapshot(b, &s, pods)
	return append(b, "}\n"...)
}

// Replay runs t through d and writes the output lines to w. It stops at the
// first operation the queue's state makes invalid and returns a *LineError;
// callers that must print nothing on error should buffer w.
func Replay(t *Trace, d Driver, w io.Writer) error {
	if err := t.Config.Check(); err != nil {
		return t.headerError(err)
	}
	r := newReplayer(d, w)
	if err := r.useGroups(t); err != nil {
		return err
	}
	r.ix.setPodNames(t.names)
	for _, block := range t.ops {
		if err := r.run(t, block); err != nil {
			return err
		}
	}
	return r.finish()
}

// replayer is a replay under way: Replay's, or ReadAndReplay's as the trace
// is read.
type replayer struct {
	d      Driver
	ix     indexedDriver
	q      Quiescer
	plan   flushPlanner
	lister PodLister
	bw     *bufio.Writer
	line   []byte
	prev   int64
	// nextFlush is the first periodic flush instant after prev: most
	// operations fall before it, and then need no division.
	nextFlush int64
	// popPrefix is `{"at":<popAt>,"pop":` spelled once for the pops that
	// share an instant.
	popAt     int64
	popPrefix []byte
	pods      []NamedPodState
	// gd is d when the trace queues pod groups (GenericWorkload), else nil.
	gd GroupDriver
	// lastPopped is what the last pop that handed something out popped,
	// a pod or a group; lastPoppedGroup is set if it was a group not yet
	// attempted (the only group an attempted may name).
	lastPopped      string
	lastPoppedGroup bool
	attempted       bool
	// stop, when set, ends the replay early (ReadAndReplay's, once the
	// reader failed).
	stop *atomic.Bool
}

// errStopped ends a replay whose stop was set.
var errStopped = errors.New("trace: replay stopped")

func newReplayer(d Driver, w io.Writer) *replayer {
	r := &replayer{d: d, bw: bufio.NewWriterSize(w, 64*1024)}
	var indexed bool
	if r.ix, indexed = d.(indexedDriver); !indexed {
		r.ix = &byName{Driver: d}
	}
	r.q, _ = d.(Quiescer)
	if planFlushes {
		r.plan, _ = d.(flushPlanner)
	}
	r.lister, _ = d.(PodLister)
	return r
}

// useGroups sets up the replay of a trace with GenericWorkload on, which
// needs a GroupDriver.
func (r *replayer) useGroups(t *Trace) error {
	if !t.Config.GenericWorkload {
		return nil
	}
	gd, ok := r.d.(GroupDriver)
	if !ok {
		return t.headerError(fmt.Errorf("pod groups need a queue that models them (genericWorkload is on); %T does not: replay the trace with genericWorkload off or with a queue of v1.37 that does", r.d))
	}
	r.gd = gd
	return nil
}

// ErrGroupsNeedV137 is a trace with GenericWorkload on replayed on a
// version before v1.37, whose queue pops pod-group members one by one
// (PopSpecificPod), which the format does not drive.
var ErrGroupsNeedV137 = errors.New("genericWorkload needs --scheduler-version v1.37 or later: v1.34–v1.36 queue pod-group members one by one (PopSpecificPod), which traces do not drive")

// Check reports whether the config can be replayed at its Version.
func (c Config) Check() error {
	if c.GenericWorkload && c.Version != 0 && c.Version < queue.V1_37 {
		return fmt.Errorf("%w (the queue is %s)", ErrGroupsNeedV137, c.Version)
	}
	return nil
}

// headerError places err on the header's line, if the trace has one.
func (t *Trace) headerError(err error) error {
	var le *LineError
	if t.headerLine > 0 && !errors.As(err, &le) {
		return &LineError{Line: t.headerLine, Err: err}
	}
	return err
}

func (r *replayer) snapshot() (Snapshot, []NamedPodState) {
	if r.lister == nil {
		return r.d.Snapshot(), nil
	}
	s, l := r.lister.SnapshotList(r.pods[:0])
	if l == nil {
		l = []NamedPodState{}
	}
	r.pods = l
	return s, l
}

// run replays ops, whose pods and arguments t holds.
func (r *replayer) run(t *Trace, ops []op) error {
	d := r.d
	for i := range ops {
		op := &ops[i]
		if r.stop != nil && r.stop.Load() {
			return errStopped
		}
		if op.at >= r.nextFlush || op.at < r.prev {
			runPeriodicUnless(d, r.q, r.plan, r.prev, op.at, r.stop)
			r.nextFlush = (op.at/BackoffFlushPeriodMillis + 1) * BackoffFlushPeriodMillis
		}
		r.prev = op.at
		d.SetTime(op.at)
		switch op.kind {
		case opAdd, opFail, opDone, opUngate:
			if err := check(op, t.podName, r.ix.whereIndex(op.pod-1)); err != nil {
				return err
			}
		}
		switch op.kind {
		case opPop:
			if op.at != r.popAt || r.popPrefix == nil {
				r.popAt = op.at
				r.popPrefix = strconv.AppendInt(append(r.popPrefix[:0], `{"at":`...), op.at, 10)
			}
			if r.gd != nil {
				if err := r.popEntity(); err != nil {
					return err
				}
				continue
			}
			pod, attempts, ok := d.Pop()
			// Encoded straight into the writer's buffer.
			b := appendPopRest(append(r.bw.AvailableBuffer(), r.popPrefix...), pod, attempts, ok)
			if _, err := r.bw.Write(b); err != nil {
				return err
			}
		case opAdd:
			a := t.argsOf(op)
			if a.group == "" {
				apply(r.ix, t, op)
				continue
			}
			if r.gd == nil {
				return errNoGroups(op)
			}
			r.gd.AddGroupMember(t.podName(op), op.priority, a.gates, a.group)
		case opPodGroupAdd, opPodGroupDelete, opAttempted:
			if err := r.groupOp(t, op); err != nil {
				return err
			}
		case opEvent:
			a := t.argsOf(op)
			d.Event(a.event, a.queue)
		case opSnapshot:
			s, l := r.snapshot()
			r.line = appendSnapshotLine(r.line[:0], op.at, s, l)
			if _, err := r.bw.Write(r.line); err != nil {
				return err
			}
		default:
			apply(r.ix, t, op)
		}
	}
	return nil
}

// groupOp replays podGroupAdd, podGroupDelete and attempted.
func (r *replayer) groupOp(t *Trace, op *op) error {
	if r.gd == nil {
		return errNoGroups(op)
	}
	a := t.argsOf(op)
	switch op.kind {
	case opPodGroupAdd:
		r.gd.AddPodGroup(a.group, op.priority)
	case opPodGroupDelete:
		r.gd.DeletePodGroup(a.group)
	case opAttempted:
		if !r.lastPoppedGroup || r.lastPopped != a.group || r.attempted {
			last := "nothing was popped"
			switch {
			case r.lastPoppedGroup && r.lastPopped == a.group:
				last = "it was attempted already since"
			case r.lastPoppedGroup:
				last = fmt.Sprintf("the last pop was group %q", r.lastPopped)
			case r.lastPopped != "":
				last = fmt.Sprintf("the last pop was pod %q", r.lastPopped)
			}
			return lineErrorf(op.line, "attempted of group %q, which is not the one last popped (%s): attempted ends the cycle of the group the last pop handed out", a.group, last)
		}
		r.attempted = true
		r.gd.Attempted(a.group, a.status)
	}
	return nil
}

// errNoGroups is a pod-group op in a trace without GenericWorkload (one
// built by New; Read rejects it).
func errNoGroups(op *op) error {
	return lineErrorf(op.line, `op %s needs pod groups: set "genericWorkload": true in the header's config`, opKinds[op.kind])
}

// popEntity replays a pop of a trace with pod groups.
func (r *replayer) popEntity() error {
	name, group, members, attempts, ok := r.gd.PopEntity()
	b := append(r.bw.AvailableBuffer(), r.popPrefix...)
	if ok && group {
		b = appendPopGroupRest(b, name, members, attempts)
	} else {
		b = appendPopRest(b, name, attempts, ok)
	}
	if ok {
		r.lastPopped, r.lastPoppedGroup, r.attempted = name, group, false
	}
	_, err := r.bw.Write(b)
	return err
}

// finish writes the final line.
func (r *replayer) finish() error {
	s, l := r.snapshot()
	if _, err := r.bw.Write(appendFinalLine(r.line[:0], s, l)); err != nil {
		return err
	}
	return r.bw.Flush()
}

// RunPeriodic runs upstream's periodic work that falls in (from, to]: the
// backoff flush every whole second and the leftover flush every 30 s, the
// backoff flush first when both fall on one instant.
func RunPeriodic(d Driver, from, to int64) {
	q, _ := d.(Quiescer)
	var p flushPlanner
	if planFlushes {
		p, _ = d.(flushPlanner)
	}
	runPeriodicUnless(d, q, p, from, to, nil)
}

// runPeriodicUnless is RunPeriodic with d's Quiescer and flushPlanner, if
// any, found once per replay rather than per operation; it stops early once
// stop is set.
func runPeriodicUnless(d Driver, q Quiescer, p flushPlanner, from, to int64, stop *atomic.Bool) {
	if to/BackoffFlushPeriodMillis == from/BackoffFlushPeriodMillis {
		// No flush instant in (from, to].
		return
	}
	if q != nil && q.Quiescent() {
		// Both flushes are no-ops on an empty backoffQ and unschedulablePods,
		// and nothing but an operation can fill them: skip the gap.
		return
	}
	at := (from/BackoffFlushPeriodMillis + 1) * BackoffFlushPeriodMillis
	// A gap can hold years of flush instants: where more than a leftover
	// period of them remain, jump to the next one that may change the
	// queue, the periodic re-checks of gated pods before it counted at
	// once. Asking walks unschedulablePods, so after an answer of "this
	// one" the next question waits a leftover period.
	ask := at
	for at <= to {
		if stop != nil && stop.Load() {
			return
		}
		if p != nil && at >= ask && to-at >= LeftoverFlushPeriodMillis {
			next := p.skipIdleFlushes(from, at-1, to)
			if next > to {
				return
			}
			if next > at {
				at = next
			} else {
				ask = at + LeftoverFlushPeriodMillis
			}
		}
		d.SetTime(at)
		d.FlushBackoffQCompleted()
		if at%LeftoverFlushPeriodMillis == 0 {
			d.FlushUnschedulablePodsLeftover()
		}
		if to-at < BackoffFlushPeriodMillis {
			return // the next instant is past to, or past the int64s
		}
		at += BackoffFlushPeriodMillis
	}
}

// apply applies a pod's op (add, fail, done, activate, ungate, delete).
func apply(d indexedDriver, t *Trace, op *op) {
	id := op.pod - 1
	switch op.kind {
	case opAdd:
		d.addIndex(id, op.priority, t.argsOf(op).gates)
	case opFail:
		a := t.argsOf(op)
		d.failIndex(id, a.plugins, a.pending)
	case opDone:
		d.doneIndex(id)
	case opActivate:
		d.activateIndex(t.argsOf(op).podIDs)
	case opUngate:
		d.ungateIndex(id)
	case opDelete:
		d.deleteIndex(id)
	}
}

// check checks op against where the queue holds its pod (for add, fail,
// done and ungate); name gives the pod's name for an error.
func check(op *op, name func(*op) string, where string) error {
	switch op.kind {
	case opAdd:
		if where != "" {
			return lineErrorf(op.line, "add of pod %q, which the queue already holds (in %s)", name(op), where)
		}
	case opFail, opDone:
		if where != "inFlight" {
			return lineErrorf(op.line, "%s of pod %q, which is not in flight", opKinds[op.kind], name(op))
		}
	case opUngate:
		if where == "" {
			return lineErrorf(op.line, "ungate of pod %q, which the queue does not hold", name(op))
		}
	}
	return nil
}

// Compare reports the first line where two outputs differ as JSON, or "" if
// they agree line by line.
func Compare(want, got []byte) string {
	wl, gl := splitLines(want), splitLines(got)
	for i := 0; i < len(wl) || i < len(gl); i++ {
		if i >= len(wl) {
			return fmt.Sprintf("line %d: extra line %s", i+1, gl[i])
		}
		if i >= len(gl) {
			return fmt.Sprintf("line %d: missing line %s", i+1, wl[i])
		}
		var a, b any
		if err := json.Unmarshal(wl[i], &a); err != nil {
			return fmt.Sprintf("line %d: want is not JSON: %v", i+1, err)
		}
		if err := json.Unmarshal(gl[i], &b); err != nil {
			return fmt.Sprintf("line %d: got is not JSON: %v", i+1, err)
		}
		if !jsonEqual(a, b) {
			return fmt.Sprintf("line %d:\nwant %s\ngot  %s", i+1, wl[i], gl[i])
		}
	}
	return ""
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != '\n' {
			i++
		}
		if line := trimSpace(b[:i]); len(line) > 0 {
			out = append(out, line)
		}
		if i == len(b) {
			break
		}
		b = b[i+1:]
	}
	return out
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

func jsonEqual(a, b any) bool {
	ab, _ := json.Marshal(a)
	bb, _ := json.Marshal(b)
	return string(ab) == string(bb)
}
