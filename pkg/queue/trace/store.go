package trace

import "encoding/binary"

// Trace is a parsed trace. Its operations are stored compactly (see Len, Op
// and Ops): a long trace holds no pointer per operation for the garbage
// collector to scan, and replays find pods by index instead of by name.
type Trace struct {
	Config Config
	// ops are the operations in blocks of opBlock: a long trace grows by
	// blocks, never copying what it has read.
	ops    [][]op
	numOps int
	// names holds pod i's name as name i, each name once.
	names podNames
	// args are the distinct argument lists of the ops, shared between ops.
	args []opArgs
	// headerLine is the header's line, 0 if the trace has none.
	headerLine int
	// spare holds blocks of ops a stream's replay is done with, which new
	// blocks reuse: memory in use, rather than megabytes of new memory the
	// system must supply page by page (ReadAndReplay; nil elsewhere).
	spare chan []op
}

// opBlock is the number of operations in a block of Trace.ops.
const opBlock = 1 << 14

// appendOp appends s.
func (t *Trace) appendOp(s op) {
	if n := len(t.ops); n == 0 || len(t.ops[n-1]) == opBlock {
		t.ops = append(t.ops, t.newBlock())
	}
	last := &t.ops[len(t.ops)-1]
	*last = append(*last, s)
	t.numOps++
}

// newBlock returns an empty block of ops: a spare one if there is one.
func (t *Trace) newBlock() []op {
	select {
	case b := <-t.spare:
		return b[:0]
	default:
		return make([]op, 0, opBlock)
	}
}

// op is one operation as a trace stores it.
type op struct {
	at       int64
	line     int
	pod      int32 // index in names plus one; 0 for no pod
	args     int32 // index in args plus one; 0 for none
	priority int32
	kind     opKind
}

// opKind numbers the known OpKinds; opOther is any other, kept in args.
type opKind uint8

const (
	opOther opKind = iota
	opAdd
	opPop
	opFail
	opDone
	opEvent
	opActivate
	opUngate
	opDelete
	opSnapshot
	// Pod groups: after opSnapshot, as the fast reader takes none of them.
	opPodGroupAdd
	opPodGroupDelete
	opAttempted
)

var opKinds = [...]OpKind{opAdd: OpAdd, opPop: OpPop, opFail: OpFail, opDone: OpDone, opEvent: OpEvent, opActivate: OpActivate, opUngate: OpUngate, opDelete: OpDelete, opSnapshot: OpSnapshot,
	opPodGroupAdd: OpPodGroupAdd, opPodGroupDelete: OpPodGroupDelete, opAttempted: OpAttempted}

func kindOf(k OpKind) opKind {
	for i, s := range opKinds {
		if s == k && i != int(opOther) {
			return opKind(i)
		}
	}
	return opOther
}

// opArgs are an op's fields other than its pod, time and priority.
type opArgs struct {
	kind                                 OpKind // for opOther only
	event                                string
	gates, plugins, pending, queue, pods []string
	// group and status are a pod-group op's (and a member's add).
	group, status string
	// podIDs are the pods' indices.
	podIDs []int32
}

var noArgs opArgs

// builder interns names and argument lists while a trace is built.
type builder struct {
	t *Trace
	// ids finds a pod's index by its name in t.names.
	ids    nameIndex
	argIDs map[string]int32
	key    []byte
	// plugins are the plugins named so far and newPlugins those named since
	// the last batch, when the trace is streamed.
	plugins    map[string]bool
	newPlugins []string
}

// batch hands the operations read so far to the stream's replay: the trace
// gives up its block of them.
func (b *builder) batch() batch {
	t := b.t
	out := batch{view: *t, plugins: b.newPlugins}
	out.view.ops = nil
	if len(t.ops) > 0 {
		out.ops = t.ops[0]
		t.ops = t.ops[:0]
	}
	b.newPlugins = nil
	return out
}

func newBuilder(cfg Config) *builder {
	return &builder{t: &Trace{Config: cfg}, ids: newNameIndex(0), argIDs: map[string]int32{}}
}

// expect sizes the pod tables for a trace file of size bytes, so that they
// grow once at most rather than step by step. Lines are about 40 bytes and a
// pod has three to six in the large traces. The guess is a pod per six
// lines: a name index larger than its pods need is slower to search (its
// slots are further apart in memory), and one too small grows once.
func (b *builder) expect(size int64) {
	pods := int(min(size/40/6, 1<<22))
	b.ids = newNameIndex(pods)
	b.t.names.grow(pods, 16)
}

// New returns a trace of ops. Ops that name the same pod, or have equal
// lists, share one copy of the name or the lists.
func New(cfg Config, ops []Op) *Trace {
	b := newBuilder(cfg)
	for i := range ops {
		b.append(&ops[i])
	}
	return b.t
}

func (b *builder) pod(name string) int32 {
	id, ok := b.ids.findString(&b.t.names, name)
	if !ok {
		id = b.newPod([]byte(name))
	}
	return id
}

// newPod adds a name the trace does not hold yet.
func (b *builder) newPod(name []byte) int32 { return b.ids.add(&b.t.names, name) }

func (b *builder) append(o *Op) {
	k := kindOf(o.Kind)
	s := op{at: o.At, line: o.Line, priority: o.Priority, kind: k}
	if o.Pod != "" || o.Kind.namesPod() {
		s.pod = b.pod(o.Pod) + 1
	}
	if k == opOther || o.Event != "" || o.Group != "" || o.Status != "" || o.Gates != nil || o.Plugins != nil || o.Pending != nil || o.Queue != nil || o.Pods != nil {
		s.args = b.args(o, k) + 1
	}
	b.t.appendOp(s)
}

// args interns o's argument lists: a trace has few distinct ones but for
// activate's.
func (b *builder) args(o *Op, k opKind) int32 {
	key := b.key[:0]
	if k == opOther {
		key = appendKeyString(append(key, 1), string(o.Kind))
	}
	key = appendKeyString(append(key, 0), o.Event)
	for _, l := range [...][]string{o.Gates, o.Plugins, o.Pending, o.Queue, o.Pods} {
		if l == nil {
			key = append(key, 0)
			continue
		}
		key = binary.AppendUvarint(key, uint64(len(l))+1)
		for _, s := range l {
			key = appendKeyString(key, s)
		}
	}
	// Only where there is one, so that the key of any other op is the one
	// the fast reader builds (fastArgs).
	if o.Group != "" || o.Status != "" {
		key = appendKeyString(appendKeyString(append(key, 2), o.Group), o.Status)
	}
	b.key = key
	if id, ok := b.argIDs[string(key)]; ok {
		return id
	}
	a := opArgs{event: o.Event, gates: o.Gates, plugins: o.Plugins, pending: o.Pending, queue: o.Queue, pods: o.Pods, group: o.Group, status: o.Status}
	if k == opOther {
		a.kind = o.Kind
	}
	return b.newArgs(a)
}

// newArgs adds a, whose key is b.key, interning its pods.
func (b *builder) newArgs(a opArgs) int32 {
	if a.pods != nil {
		a.podIDs = make([]int32, len(a.pods))
		for i, p := range a.pods {
			a.podIDs[i] = b.pod(p)
		}
	}
	if b.plugins != nil {
		for _, l := range [...][]string{a.plugins, a.pending, a.queue} {
			for _, p := range l {
				if !b.plugins[p] {
					b.plugins[p] = true
					b.newPlugins = append(b.newPlugins, p)
				}
			}
		}
	}
	id := int32(len(b.t.args))
	b.t.args = append(b.t.args, a)
	b.argIDs[string(b.key)] = id
	return id
}

func appendKeyString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// Len returns the number of operations.
func (t *Trace) Len() int { return t.numOps }

// Op returns operation i. Its lists are shared with other operations and the
// trace: do not change them.
func (t *Trace) Op(i int) Op {
	s := &t.ops[i/opBlock][i%opBlock]
	a := t.argsOf(s)
	o := Op{Line: s.line, At: s.at, Kind: opKinds[s.kind], Pod: t.podName(s), Priority: s.priority,
		Gates: a.gates, Plugins: a.plugins, Pending: a.pending, Event: a.event, Queue: a.queue, Pods: a.pods,
		Group: a.group, Status: a.status}
	if s.kind == opOther {
		o.Kind = a.kind
	}
	return o
}

// Ops returns every operation, as Op does.
func (t *Trace) Ops() []Op {
	out := make([]Op, t.numOps)
	for i := range out {
		out[i] = t.Op(i)
	}
	return out
}

func (t *Trace) podName(s *op) string {
	if s.pod == 0 {
		return ""
	}
	return t.names.at(s.pod - 1)
}

func (t *Trace) argsOf(s *op) *opArgs {
	if s.args == 0 {
		return &noArgs
	}
	return &t.args[s.args-1]
}
