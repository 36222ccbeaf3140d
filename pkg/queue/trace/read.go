package trace

import (
	"encoding/binary"
	"math"
)

// The fast reader. Read hands each operation line to lineReader first: one
// pass over the bytes, no maps, no reflection, and no allocation but for a
// pod name or an argument list the trace has not seen before. It takes only
// the lines a trace writer writes (known fields, each once; strings without
// escapes or non-ASCII; integers) and that pass every check. Any other line,
// valid or not, goes to the encoding/json decoding (decodeLine), which alone
// words errors: the fast reader cannot accept what it rejects, nor decode it
// otherwise (FuzzRead_FastMatchesJSON checks both).

// Field numbers of an operation line.
const (
	fAt = iota
	fOp
	fPod
	fPriority
	fGates
	fPlugins
	fPending
	fEvent
	fQueue
	fPods
	numFields
)

// Each kind's fields besides at and op, and those it requires, as bit sets
// (opFields and requiredFields, which word the errors).
var (
	fastAllowed = [opSnapshot + 1]uint16{
		opAdd: 1<<fPod | 1<<fPriority | 1<<fGates, opFail: 1<<fPod | 1<<fPlugins | 1<<fPending,
		opDone: 1 << fPod, opEvent: 1<<fEvent | 1<<fQueue, opActivate: 1 << fPods,
		opUngate: 1 << fPod, opDelete: 1 << fPod,
	}
	fastRequired = [opSnapshot + 1]uint16{
		opAdd: 1 << fPod, opFail: 1<<fPod | 1<<fPlugins, opDone: 1 << fPod,
		opEvent: 1<<fEvent | 1<<fQueue, opActivate: 1 << fPods, opUngate: 1 << fPod, opDelete: 1 << fPod,
	}
)

// span is a part of the line: a string's bytes without the quotes, or a
// list's elements as indices into lineReader.elems.
type span struct{ start, end int32 }

// lineReader reads operation lines; its buffers are reused from line to line.
type lineReader struct {
	b     []byte
	has   uint16
	vals  [numFields]span
	ints  [numFields]int64
	elems []span
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func (r *lineReader) skipSpace(i int) int {
	for i < len(r.b) && isJSONSpace(r.b[i]) {
		i++
	}
	return i
}

// plainString reads a string that starts at i (a quote) and holds only
// printable ASCII without escapes; it returns the index after the closing
// quote, or -1.
func (r *lineReader) plainString(i int) (span, int) {
	b := r.b
	if i >= len(b) || b[i] != '"' {
		return span{}, -1
	}
	j := i + 1
	for ; j < len(b); j++ {
		c := b[j]
		if c == '"' {
			return span{int32(i + 1), int32(j)}, j + 1
		}
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return span{}, -1
		}
	}
	return span{}, -1
}

// integer reads a JSON integer of at most 18 digits (no fraction, exponent
// or leading zero), which strconv.ParseInt reads as the same number.
func (r *lineReader) integer(i int) (int64, int) {
	b := r.b
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	start := i
	var n int64
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		n = n*10 + int64(b[i]-'0')
		i++
	}
	digits := i - start
	if digits == 0 || digits > 18 || digits > 1 && b[start] == '0' {
		return 0, -1
	}
	if i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E') {
		return 0, -1
	}
	if neg {
		n = -n
	}
	return n, i
}

// list reads a list of plain strings into elems.
func (r *lineReader) list(i int) (span, int) {
	if i >= len(r.b) || r.b[i] != '[' {
		return span{}, -1
	}
	s := span{int32(len(r.elems)), 0}
	i = r.skipSpace(i + 1)
	if i < len(r.b) && r.b[i] == ']' {
		s.end = s.start
		return s, i + 1
	}
	for {
		var e span
		if e, i = r.plainString(i); i < 0 {
			return span{}, -1
		}
		r.elems = append(r.elems, e)
		i = r.skipSpace(i)
		if i >= len(r.b) {
			return span{}, -1
		}
		switch r.b[i] {
		case ',':
			i = r.skipSpace(i + 1)
		case ']':
			s.end = int32(len(r.elems))
			return s, i + 1
		default:
			return span{}, -1
		}
	}
}

func fieldOf(k []byte) int {
	switch string(k) {
	case "at":
		return fAt
	case "op":
		return fOp
	case "pod":
		return fPod
	case "priority":
		return fPriority
	case "gates":
		return fGates
	case "plugins":
		return fPlugins
	case "pending":
		return fPending
	case "event":
		return fEvent
	case "queue":
		return fQueue
	case "pods":
		return fPods
	}
	return -1
}

// parse reads b, a trimmed line, as one JSON object of known fields; false
// if it is anything else.
func (r *lineReader) parse(b []byte) bool {
	r.b, r.has, r.elems = b, 0, r.elems[:0]
	if r.canonical() {
		return true
	}
	r.has = 0
	return r.fields()
}

// fields is parse's reading of r.b field by field, in any order and with
// any spacing.
func (r *lineReader) fields() bool {
	b := r.b
	if len(b) == 0 || b[0] != '{' {
		return false
	}
	i := r.skipSpace(1)
	for {
		k, j := r.plainString(i)
		if j < 0 {
			return false
		}
		f := fieldOf(b[k.start:k.end])
		if f < 0 || r.has&(1<<f) != 0 {
			return false
		}
		r.has |= 1 << f
		i = r.skipSpace(j)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = r.skipSpace(i + 1)
		switch f {
		case fAt, fPriority:
			r.ints[f], i = r.integer(i)
		case fOp, fPod, fEvent:
			r.vals[f], i = r.plainString(i)
		default:
			r.vals[f], i = r.list(i)
		}
		if i < 0 {
			return false
		}
		i = r.skipSpace(i)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = r.skipSpace(i + 1)
		case '}':
			return i+1 == len(b)
		default:
			return false
		}
	}
}

// The lines a trace writer writes most (pop, done, add: nine in ten) start
// with at and op, in that order, then have pod and priority, in that order,
// if any, and no space.
const (
	prefixAt       = `{"at":`
	prefixOp       = `,"op":`
	prefixPod      = `,"pod":`
	prefixPriority = `,"priority":`
)

// canonical reads r.b if it is such a line, as parse would read it, by
// matching its keys whole rather than reading each key as a string and
// looking it up; false, with r.has possibly changed, if it is not.
func (r *lineReader) canonical() bool {
	b := r.b
	if !hasPrefixAt(b, 0, prefixAt) {
		return false
	}
	var i int
	if r.ints[fAt], i = r.integer(len(prefixAt)); i < 0 || !hasPrefixAt(b, i, prefixOp) {
		return false
	}
	if r.vals[fOp], i = r.plainString(i + len(prefixOp)); i < 0 {
		return false
	}
	r.has = 1<<fAt | 1<<fOp
	if hasPrefixAt(b, i, prefixPod) {
		if r.vals[fPod], i = r.plainString(i + len(prefixPod)); i < 0 {
			return false
		}
		r.has |= 1 << fPod
	}
	if hasPrefixAt(b, i, prefixPriority) {
		if r.ints[fPriority], i = r.integer(i + len(prefixPriority)); i < 0 {
			return false
		}
		r.has |= 1 << fPriority
	}
	return i == len(b)-1 && b[i] == '}'
}

func hasPrefixAt(b []byte, i int, prefix string) bool {
	return len(b)-i >= len(prefix) && string(b[i:i+len(prefix)]) == prefix
}

func (r *lineReader) str(s span) []byte { return r.b[s.start:s.end] }

func (r *lineReader) elem(l span, j int32) []byte { return r.str(r.elems[l.start+j]) }

func kindOfBytes(b []byte) opKind {
	switch string(b) {
	case "add":
		return opAdd
	case "pop":
		return opPop
	case "fail":
		return opFail
	case "done":
		return opDone
	case "event":
		return opEvent
	case "activate":
		return opActivate
	case "ungate":
		return opUngate
	case "delete":
		return opDelete
	case "snapshot":
		return opSnapshot
	}
	return opOther
}

// plugins reports whether list field f passes checkPlugins.
func (r *lineReader) plugins(f int) bool {
	l := r.vals[f]
	for j := range l.end - l.start {
		if p := r.elem(l, j); len(p) == 0 || string(p) == SchedulingGatesPlugin {
			return false
		}
	}
	return true
}

// knownPod reports whether name is a valid pod name: one the trace already
// holds (checked when first seen) or one that passes validPodName.
func (tb *builder) knownPod(name []byte) bool {
	if _, ok := tb.ids.find(&tb.t.names, name); ok {
		return true
	}
	return validPodName(name)
}

// fastLine checks an operation line and appends it to the trace; false if
// the line is for decodeLine (the trace is then unchanged). at is the op's.
//
// r holds the line parsed (lineReader.parse true) and h is the hash of its
// pod's name, if it has one (nameIndex.hash).
func (tb *builder) fastLine(r *lineReader, h uint32, line int) (at int64, ok bool) {
	if r.has&(1<<fOp|1<<fAt) != 1<<fOp|1<<fAt {
		return 0, false
	}
	k := kindOfBytes(r.str(r.vals[fOp]))
	if k == opOther {
		return 0, false
	}
	fields := r.has &^ (1<<fOp | 1<<fAt)
	if at = r.ints[fAt]; at < 0 || at > MaxAtMillis || fields&^fastAllowed[k] != 0 || fields&fastRequired[k] != fastRequired[k] {
		return 0, false
	}
	// The pod's index, or -1 for a valid name the trace has not seen.
	pod := int32(-1)
	if fields&(1<<fPod) != 0 {
		name := r.str(r.vals[fPod])
		if id, ok := tb.ids.findHashed(&tb.t.names, name, h); ok {
			pod = id
		} else if !validPodName(name) {
			return 0, false
		}
	}
	if p := r.ints[fPriority]; fields&(1<<fPriority) != 0 && (p < math.MinInt32 || p > math.MaxInt32) {
		return 0, false
	}
	if fields&(1<<fGates) != 0 {
		for l, j := r.vals[fGates], int32(0); j < l.end-l.start; j++ {
			if len(r.elem(l, j)) == 0 {
				return 0, false
			}
		}
	}
	for _, f := range [...]int{fPlugins, fPending, fQueue} {
		if fields&(1<<f) != 0 && !r.plugins(f) {
			return 0, false
		}
	}
	if fields&(1<<fEvent) != 0 {
		if _, known := Events[string(r.str(r.vals[fEvent]))]; !known {
			return 0, false
		}
	}
	if fields&(1<<fPods) != 0 {
		for l, j := r.vals[fPods], int32(0); j < l.end-l.start; j++ {
			if !tb.knownPod(r.elem(l, j)) {
				return 0, false
			}
		}
	}
	if fields&(1<<fPending) != 0 {
		pl, pe := r.vals[fPlugins], r.vals[fPending]
		for j := range pe.end - pe.start {
			found := false
			for i := int32(0); i < pl.end-pl.start && !found; i++ {
				found = string(r.elem(pe, j)) == string(r.elem(pl, i))
			}
			if !found {
				return 0, false
			}
		}
	}

	// Every check passed: append, as append would the decoded Op.
	s := op{at: at, line: line, kind: k}
	if fields&(1<<fPriority) != 0 {
		s.priority = int32(r.ints[fPriority])
	}
	if fields&(1<<fPod) != 0 {
		if pod < 0 {
			pod = tb.ids.addHashed(&tb.t.names, r.str(r.vals[fPod]), h)
		}
		s.pod = pod + 1
	}
	if fields&^(1<<fPod|1<<fPriority) != 0 {
		s.args = tb.fastArgs(r, fields) + 1
	}
	tb.t.appendOp(s)
	return at, true
}

// listFields are the list fields in the order of args' key.
var listFields = [...]int{fGates, fPlugins, fPending, fQueue, fPods}

// fastArgs is args for the line r holds: the same key, built from the
// line's bytes, so that a list seen before costs no allocation.
func (tb *builder) fastArgs(r *lineReader, fields uint16) int32 {
	key := append(tb.key[:0], 0)
	var event []byte
	if fields&(1<<fEvent) != 0 {
		event = r.str(r.vals[fEvent])
	}
	key = append(binary.AppendUvarint(key, uint64(len(event))), event...)
	for _, f := range listFields {
		if fields&(1<<f) == 0 {
			key = append(key, 0)
			continue
		}
		l := r.vals[f]
		key = binary.AppendUvarint(key, uint64(l.end-l.start)+1)
		for j := range l.end - l.start {
			e := r.elem(l, j)
			key = append(binary.AppendUvarint(key, uint64(len(e))), e...)
		}
	}
	tb.key = key
	if id, ok := tb.argIDs[string(key)]; ok {
		return id
	}
	var lists [len(listFields)][]string
	for n, f := range listFields {
		if fields&(1<<f) == 0 {
			continue
		}
		l := r.vals[f]
		lists[n] = make([]string, l.end-l.start)
		for j := range lists[n] {
			lists[n][j] = string(r.elem(l, int32(j)))
		}
	}
	return tb.newArgs(opArgs{event: string(event), gates: lists[0], plugins: lists[1], pending: lists[2], queue: lists[3], pods: lists[4]})
}

// validPodName reports whether name is namespace/name with a DNS-1123 label
// and a DNS-1123 subdomain, as checkPodName requires; it is checkPodName
// without an error to word and without regular expressions.
func validPodName(name []byte) bool {
	slash := -1
	for i, c := range name {
		if c == '/' {
			if slash >= 0 {
				return false
			}
			slash = i
		}
	}
	if slash < 0 {
		return false
	}
	ns, n := name[:slash], name[slash+1:]
	return len(ns) <= 63 && dnsLabel(ns) && len(n) <= 253 && dnsSubdomain(n)
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// dnsLabel: [a-z0-9]([-a-z0-9]*[a-z0-9])?
func dnsLabel(s []byte) bool {
	if len(s) == 0 || !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for _, c := range s {
		if !alnum(c) && c != '-' {
			return false
		}
	}
	return true
}

// dnsSubdomain: labels as dnsLabel's, joined by dots.
func dnsSubdomain(s []byte) bool {
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			if !dnsLabel(s[start:i]) {
				return false
			}
			start = i + 1
		}
	}
	return true
}
