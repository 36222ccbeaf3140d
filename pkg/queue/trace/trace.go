// Package trace reads queue traces (format version 1), replays them through a
// Driver — the model in this module, or upstream's PriorityQueue in the perf
// module's differential tests — and writes what the queue did.
package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

// Version is the trace format version this package reads.
const Version = 1

// SchedulingGatesPlugin is the trace's one PreEnqueue plugin; traces may not
// name it as a rejector or in an event's queue list.
const SchedulingGatesPlugin = "SchedulingGates"

// MaxAtMillis is the largest "at": the queue's clock counts nanoseconds
// from Epoch in an int64.
const MaxAtMillis = math.MaxInt64 / int64(time.Millisecond)

// Epoch is the queue clock's reading at trace time 0. It is a whole second so
// that trace instants that are multiples of 1000 ms are window boundaries.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Config is the trace header's config; zero values are not defaults, use
// DefaultConfig.
type Config struct {
	PopFromBackoffQ                  bool  `json:"popFromBackoffQ"`
	PodInitialBackoffSeconds         int64 `json:"podInitialBackoffSeconds"`
	PodMaxBackoffSeconds             int64 `json:"podMaxBackoffSeconds"`
	PodMaxInUnschedulablePodsSeconds int64 `json:"podMaxInUnschedulablePodsSeconds"`
	// GenericWorkload is the feature gate: pods may name a pod group, which
	// the queue holds and pops as one entity (v1.37 only). Left out of an
	// encoded header when off, as every trace before pod groups is.
	GenericWorkload bool `json:"genericWorkload,omitempty"`
	// Version is the kube-scheduler whose queue replays the trace. It is not
	// part of the file: the same trace replays on every version (simulate's
	// --scheduler-version). Zero: queue.DefaultVersion.
	Version queue.Version `json:"-"`
}

// DefaultConfig is kube-scheduler's defaults (the same in v1.34–v1.37).
func DefaultConfig() Config {
	return Config{PopFromBackoffQ: true, PodInitialBackoffSeconds: 1, PodMaxBackoffSeconds: 10, PodMaxInUnschedulablePodsSeconds: 300}
}

// OpKind is a trace operation.
type OpKind string

// The operations.
const (
	OpAdd      OpKind = "add"
	OpPop      OpKind = "pop"
	OpFail     OpKind = "fail"
	OpDone     OpKind = "done"
	OpEvent    OpKind = "event"
	OpActivate OpKind = "activate"
	OpUngate   OpKind = "ungate"
	OpDelete   OpKind = "delete"
	OpSnapshot OpKind = "snapshot"
	// Pod groups (GenericWorkload).
	OpPodGroupAdd    OpKind = "podGroupAdd"
	OpPodGroupDelete OpKind = "podGroupDelete"
	OpAttempted      OpKind = "attempted"
)

// The statuses of attempted.
const (
	StatusSuccess       = "success"
	StatusUnschedulable = "unschedulable"
	StatusError         = "error"
)

// Op is one trace line.
type Op struct {
	// Line is the physical line number, from 1.
	Line     int
	At       int64 // milliseconds since the start of the trace
	Kind     OpKind
	Pod      string   // add, fail, done, ungate, delete
	Priority int32    // add
	Gates    []string // add
	Plugins  []string // fail
	Pending  []string // fail
	Event    string   // event
	Queue    []string // event
	Pods     []string // activate
	Group    string   // add (a member), podGroupAdd, podGroupDelete, attempted
	Status   string   // attempted
}

// groupOp reports whether the op needs GenericWorkload.
func (o *Op) groupOp() bool {
	switch o.Kind {
	case OpPodGroupAdd, OpPodGroupDelete, OpAttempted:
		return true
	}
	return o.Group != ""
}

// namesPod reports whether the op's Pod names a pod.
func (k OpKind) namesPod() bool {
	switch k {
	case OpAdd, OpFail, OpDone, OpUngate, OpDelete:
		return true
	}
	return false
}

// Plugins returns every plugin the trace names (fail's plugins and pending,
// event's queue), sorted: each is registered for every event of the table.
func (t *Trace) Plugins() []string {
	// The trace keeps each distinct list once: scan those, not the ops.
	seen := map[string]bool{}
	var out []string
	for i := range t.args {
		a := &t.args[i]
		for _, l := range [...][]string{a.plugins, a.pending, a.queue} {
			for _, p := range l {
				if !seen[p] {
					seen[p] = true
					out = append(out, p)
				}
			}
		}
	}
	sort.Strings(out)
	if out == nil {
		out = []string{}
	}
	return out
}

// Events maps each event label a trace may use to the upstream event.
var Events = map[string]queue.ClusterEvent{
	"NodeAdd":                   {Resource: queue.ResourceNode, ActionType: queue.Add},
	"NodeDelete":                {Resource: queue.ResourceNode, ActionType: queue.Delete},
	"NodeUpdateNodeAllocatable": {Resource: queue.ResourceNode, ActionType: queue.UpdateNodeAllocatable},
	"NodeUpdateNodeLabel":       {Resource: queue.ResourceNode, ActionType: queue.UpdateNodeLabel},
	"NodeUpdateNodeTaint":       {Resource: queue.ResourceNode, ActionType: queue.UpdateNodeTaint},
	"AssignedPodAdd":            {Resource: queue.ResourceAssignedPod, ActionType: queue.Add},
	"AssignedPodDelete":         {Resource: queue.ResourceAssignedPod, ActionType: queue.Delete},
	"AssignedPodUpdatePodLabel": {Resource: queue.ResourceAssignedPod, ActionType: queue.UpdatePodLabel},
	"PersistentVolumeClaimAdd":  {Resource: queue.ResourcePersistentVolumeClaim, ActionType: queue.Add},
}

// EventLabels returns the labels of Events, sorted.
func EventLabels() []string {
	out := make([]string, 0, len(Events))
	for l := range Events {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

// LineError is a problem with one line of a trace.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

func lineErrorf(line int, format string, args ...any) error {
	return &LineError{Line: line, Err: fmt.Errorf(format, args...)}
}

var opFields = map[OpKind][]string{
	OpAdd:      {"pod", "priority", "gates", "group"},
	OpPop:      nil,
	OpFail:     {"pod", "plugins", "pending"},
	OpDone:     {"pod"},
	OpEvent:    {"event", "queue"},
	OpActivate: {"pods"},
	OpUngate:   {"pod"},
	OpDelete:   {"pod"},
	OpSnapshot: nil,

	OpPodGroupAdd:    {"group", "priority"},
	OpPodGroupDelete: {"group"},
	OpAttempted:      {"group", "status"},
}

var requiredFields = map[OpKind][]string{
	OpAdd: {"pod"}, OpFail: {"pod", "plugins"}, OpDone: {"pod"}, OpEvent: {"event", "queue"},
	OpActivate: {"pods"}, OpUngate: {"pod"}, OpDelete: {"pod"},
	OpPodGroupAdd: {"group"}, OpPodGroupDelete: {"group"}, OpAttempted: {"group", "status"},
}

const opList = "add|pop|fail|done|event|activate|ungate|delete|snapshot|podGroupAdd|podGroupDelete|attempted"

// Read parses and checks a trace: syntax, fields and values, and that time
// never goes backwards. Checks that need the queue's state (is the pod in
// flight?) happen in Replay.
func Read(r io.Reader) (*Trace, error) { return read(r, true) }

// read is Read; without fast, every line goes through encoding/json, as the
// reference the fast reader is tested against.
func read(r io.Reader, fast bool) (*Trace, error) { return readTo(r, fast, nil, nil) }

// streamBatch is the number of operations readTo sends at a time (a block;
// tests make it small).
var streamBatch = opBlock

// readChunk is the number of lines readTo parses before it checks them.
const readChunk = 64

// readTo is read; with send, the operations go to send a block at a time as
// they are read (see stream), and the trace keeps none, making new blocks
// of those the receiver puts back in spare.
func readTo(r io.Reader, fast bool, send func(batch), spare chan []op) (*Trace, error) {
	tb := newBuilder(DefaultConfig())
	if send != nil {
		tb.plugins = map[string]bool{}
		tb.t.spare = spare
	}
	t := tb.t
	if f, ok := r.(interface{ Stat() (os.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			tb.expect(fi.Size())
		}
	}
	sp := newLineSplitter(r)
	line, seenContent := 0, false
	prevAt := int64(-1)
	// A chunk of lines is parsed, and its pods' slots in the name index
	// read together, before any of its lines is checked and appended (in
	// order, as one line at a time would be).
	var (
		raw    [readChunk]rawLine
		lrs    [readChunk]lineReader
		parsed [readChunk]bool
		hashes [readChunk]uint32
	)
	for {
		n, err := sp.chunk(raw[:])
		if err != nil {
			if errors.Is(err, errLineTooLong) {
				return nil, lineErrorf(line+1, "line longer than 16 MiB")
			}
			if err == io.EOF {
				break
			}
			return nil, err
		}
		if fast {
			for i := range n {
				b := bytes.TrimSpace(raw[i].b)
				raw[i].b = b
				parsed[i] = len(b) > 0 && lrs[i].parse(b)
				if parsed[i] && lrs[i].has&(1<<fPod) != 0 {
					hashes[i] = tb.ids.hash(lrs[i].str(lrs[i].vals[fPod]))
				}
			}
			for i := range n {
				if parsed[i] && lrs[i].has&(1<<fPod) != 0 {
					tb.ids.touch(hashes[i])
				}
			}
		}
		for i := range n {
			line = raw[i].line
			b := raw[i].b
			if !fast {
				b = bytes.TrimSpace(b)
			}
			if len(b) == 0 {
				continue
			}
			first := !seenContent
			seenContent = true
			at, ok := int64(0), false
			if fast && parsed[i] {
				at, ok = tb.fastLine(&lrs[i], hashes[i], line)
			}
			if !ok {
				op, header, err := decodeLine(b, first, &t.Config)
				if err != nil {
					return nil, &LineError{Line: line, Err: err}
				}
				if header {
					t.headerLine = line
					continue
				}
				op.Line = line
				at = op.At
				if !t.Config.GenericWorkload && op.groupOp() {
					what := "op " + string(op.Kind)
					if op.Kind == OpAdd {
						what = "a group field"
					}
					return nil, lineErrorf(line, `%s needs pod groups: set "genericWorkload": true in the header's config`, what)
				}
				if at >= prevAt {
					tb.append(&op)
				}
			}
			if at < prevAt {
				return nil, lineErrorf(line, "at %d goes backwards (previous op at %d)", at, prevAt)
			}
			prevAt = at
			if send != nil && len(t.ops) > 0 && len(t.ops[0]) >= streamBatch {
				send(tb.batch())
			}
		}
	}
	if !seenContent {
		return nil, ErrEmpty
	}
	if send != nil {
		send(tb.batch())
	}
	return t, nil
}

// decodeLine decodes a line with encoding/json: the header (into cfg; only
// if first) or an operation. Its errors are the reader's.
func decodeLine(b []byte, first bool, cfg *Config) (op Op, header bool, err error) {
	fields, err := decodeObject(b)
	if err != nil {
		return op, false, err
	}
	if _, ok := fields["schedqTrace"]; ok {
		if !first {
			return op, true, errors.New("the header (schedqTrace) must be the first line")
		}
		return op, true, readHeader(fields, cfg)
	}
	op, err = readOp(fields)
	return op, false, err
}

// ErrEmpty is a trace with no line at all: no header and no operations.
var ErrEmpty = errors.New("the trace is empty: no header and no operations")

func decodeObject(b []byte) (map[string]json.RawMessage, error) {
	if b[0] != '{' {
		return nil, errors.New("not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var fields map[string]json.RawMessage
	if err := dec.Decode(&fields); err != nil {
		return nil, fmt.Errorf("malformed JSON: %v", err)
	}
	if dec.More() {
		return nil, errors.New("malformed JSON: more than one value on the line")
	}
	return fields, nil
}

func readHeader(fields map[string]json.RawMessage, cfg *Config) error {
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if k != "schedqTrace" && k != "config" {
			return fmt.Errorf("unknown header field %q (want schedqTrace, config)", k)
		}
	}
	v, err := readInt(fields["schedqTrace"], "schedqTrace")
	if err != nil {
		return err
	}
	if v != Version {
		return fmt.Errorf("schedqTrace %d is not supported (this reader knows version %d)", v, Version)
	}
	raw, ok := fields["config"]
	if !ok {
		return nil
	}
	var c map[string]json.RawMessage
	if err := json.Unmarshal(raw, &c); err != nil || c == nil {
		return errors.New("config must be an object")
	}
	for _, k := range slices.Sorted(maps.Keys(c)) {
		v := c[k]
		switch k {
		case "popFromBackoffQ":
			if err := json.Unmarshal(v, &cfg.PopFromBackoffQ); err != nil || string(v) == "null" {
				return errors.New("config.popFromBackoffQ must be true or false")
			}
		case "genericWorkload":
			if err := json.Unmarshal(v, &cfg.GenericWorkload); err != nil || string(v) == "null" {
				return errors.New("config.genericWorkload must be true or false")
			}
		case "podInitialBackoffSeconds", "podMaxBackoffSeconds", "podMaxInUnschedulablePodsSeconds":
			n, err := readInt(v, "config."+k)
			if err != nil {
				return err
			}
			if n < 0 {
				return fmt.Errorf("config.%s is %d; it must not be negative", k, n)
			}
			// Seconds are turned into a time.Duration; keep them representable.
			if n > math.MaxInt64/int64(time.Second) {
				return fmt.Errorf("config.%s is %d; it must be at most %d", k, n, math.MaxInt64/int64(time.Second))
			}
			switch k {
			case "podInitialBackoffSeconds":
				cfg.PodInitialBackoffSeconds = n
			case "podMaxBackoffSeconds":
				cfg.PodMaxBackoffSeconds = n
			default:
				cfg.PodMaxInUnschedulablePodsSeconds = n
			}
		default:
			return fmt.Errorf("unknown config field %q (want popFromBackoffQ, podInitialBackoffSeconds, podMaxBackoffSeconds, podMaxInUnschedulablePodsSeconds, genericWorkload)", k)
		}
	}
	return nil
}

func readInt(raw json.RawMessage, name string) (int64, error) {
	s := string(raw)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s must be an integer, not %s", name, s)
	}
	return n, nil
}

func readString(raw json.RawMessage, name string) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || string(raw) == "null" {
		return "", fmt.Errorf("%s must be a string, not %s", name, raw)
	}
	return s, nil
}

func readStrings(raw json.RawMessage, name string) ([]string, error) {
	var l []string
	if err := json.Unmarshal(raw, &l); err != nil || string(raw) == "null" {
		return nil, fmt.Errorf("%s must be a list of strings, not %s", name, raw)
	}
	return l, nil
}

func readOp(fields map[string]json.RawMessage) (Op, error) {
	var op Op
	rawOp, ok := fields["op"]
	if !ok {
		return op, errors.New(`missing "op"`)
	}
	kind, err := readString(rawOp, "op")
	if err != nil {
		return op, err
	}
	op.Kind = OpKind(kind)
	allowed, ok := opFields[op.Kind]
	if !ok {
		return op, fmt.Errorf("unknown op %q (want %s)", kind, opList)
	}
	rawAt, ok := fields["at"]
	if !ok {
		return op, errors.New(`missing "at"`)
	}
	if op.At, err = readInt(rawAt, "at"); err != nil {
		return op, err
	}
	if op.At < 0 {
		return op, fmt.Errorf("at %d is negative", op.At)
	}
	if op.At > MaxAtMillis {
		return op, fmt.Errorf("at %d is after the last instant the queue's clock holds (%d, about 292 years)", op.At, MaxAtMillis)
	}
	// In key order: a line with several problems gets the same error each time.
	keys := slices.Sorted(maps.Keys(fields))
	for _, k := range keys {
		if k == "op" || k == "at" {
			continue
		}
		known := false
		for _, a := range allowed {
			known = known || a == k
		}
		if !known {
			if len(allowed) == 0 {
				return op, fmt.Errorf("unknown field %q for op %s (it takes only at and op)", k, kind)
			}
			return op, fmt.Errorf("unknown field %q for op %s (want %s)", k, kind, strings.Join(allowed, ", "))
		}
	}
	for _, k := range requiredFields[op.Kind] {
		if _, ok := fields[k]; !ok {
			return op, fmt.Errorf("op %s needs %q", kind, k)
		}
	}
	for _, k := range keys {
		v := fields[k]
		switch k {
		case "pod":
			if op.Pod, err = readString(v, "pod"); err == nil {
				err = checkPodName(op.Pod)
			}
		case "priority":
			var n int64
			if n, err = readInt(v, "priority"); err == nil {
				if n < math.MinInt32 || n > math.MaxInt32 {
					err = fmt.Errorf("priority %d is outside int32", n)
				}
				op.Priority = int32(n)
			}
		case "gates":
			if op.Gates, err = readStrings(v, "gates"); err == nil {
				for _, g := range op.Gates {
					if g == "" {
						err = errors.New("gates must not contain an empty name")
					}
				}
			}
		case "plugins":
			if op.Plugins, err = readStrings(v, "plugins"); err == nil {
				err = checkPlugins(op.Plugins, "plugins")
			}
		case "pending":
			if op.Pending, err = readStrings(v, "pending"); err == nil {
				err = checkPlugins(op.Pending, "pending")
			}
		case "event":
			if op.Event, err = readString(v, "event"); err == nil {
				if _, ok := Events[op.Event]; !ok {
					err = fmt.Errorf("unknown event %q (want %s)", op.Event, strings.Join(EventLabels(), "|"))
				}
			}
		case "queue":
			if op.Queue, err = readStrings(v, "queue"); err == nil {
				err = checkPlugins(op.Queue, "queue")
			}
		case "group":
			if op.Group, err = readString(v, "group"); err == nil {
				err = checkName(op.Group, "group")
			}
		case "status":
			if op.Status, err = readString(v, "status"); err == nil {
				switch op.Status {
				case StatusSuccess, StatusUnschedulable, StatusError:
				default:
					err = fmt.Errorf("unknown status %q (want %s|%s|%s)", op.Status, StatusSuccess, StatusUnschedulable, StatusError)
				}
			}
		case "pods":
			if op.Pods, err = readStrings(v, "pods"); err == nil {
				for _, p := range op.Pods {
					if err = checkPodName(p); err != nil {
						break
					}
				}
			}
		}
		if err != nil {
			return op, err
		}
	}
	if op.Kind == OpAdd && op.Group != "" {
		pns, _, _ := strings.Cut(op.Pod, "/")
		if gns, _, _ := strings.Cut(op.Group, "/"); gns != pns {
			return op, fmt.Errorf("group %q is in namespace %q, pod %q in %q: a pod's group is in its namespace", op.Group, gns, op.Pod, pns)
		}
	}
	for _, p := range op.Pending {
		if !contains(op.Plugins, p) {
			return op, fmt.Errorf("pending plugin %q is not in plugins %v", p, op.Plugins)
		}
	}
	return op, nil
}

func checkPlugins(l []string, field string) error {
	for _, p := range l {
		if p == "" {
			return fmt.Errorf("%s must not contain an empty plugin name", field)
		}
		if p == SchedulingGatesPlugin {
			return fmt.Errorf("%s names %s, the trace's PreEnqueue plugin; use gates on add and ungate instead", field, SchedulingGatesPlugin)
		}
	}
	return nil
}

func checkPodName(s string) error { return checkName(s, "pod") }

// checkName checks a pod's or a pod group's name (what says which).
func checkName(s, what string) error {
	ns, name, ok := strings.Cut(s, "/")
	if !ok || strings.Contains(name, "/") {
		return fmt.Errorf("%s %q is not namespace/name", what, s)
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return fmt.Errorf("%s %q: namespace %q: %s", what, s, ns, errs[0])
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("%s %q: name %q: %s", what, s, name, errs[0])
	}
	return nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
