package metricscrape

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
)

// A text exposition is read as a stream, line by line, and accepted or
// refused as prometheus/common's parser accepts or refuses the whole text
// (FuzzParseText_stream holds the two together). Each line is classified
// (classify) and its family's state kept as the parser keeps it. A line of
// a family the Snapshot reads, or one this reader cannot vouch for (a rare
// form, an error), goes to the parser, in chunks; the plain lines of other
// families, most of a scheduler's /metrics, are checked here (plainLine)
// and dropped. Memory is then a chunk's parse and the Snapshot, not the
// parsed form of the whole text (about twenty times the text's size).
//
// The parser keeps state from line to line: each family's # TYPE and # HELP,
// and the family of the line before. So that a chunk parses as its lines
// would in the whole text, it is parsed after a few synthetic lines that
// restore that state (chunkPrefix), a chunk ends before a dropped line
// changes the state of a family it holds, and the line numbers of its
// errors are those of the text.
const (
	// maxLineBytes bounds a line; kube-scheduler's are below 1 KiB.
	maxLineBytes = 64 << 10
	// maxFamilies bounds the metric families of one exposition;
	// kube-scheduler has a few hundred.
	maxFamilies = 1 << 20
	// chunkBytes is the size of a chunk, beyond which one ends at the next
	// family that allows it (only the lines that go to the parser count).
	chunkBytes = 256 << 10
	// maxChunkBytes ends a chunk whatever the family: only a histogram
	// family the Snapshot reads, larger than this, then reads as two.
	maxChunkBytes = 8 << 20
)

// ParseText reads a Prometheus text exposition of kube-scheduler's metrics.
// source names the input in errors.
func ParseText(source string, data []byte) (*Snapshot, error) {
	p := newTextStream(source)
	// Lines are slices of data: no copy through a bufio.Reader.
	p.data = data
	if err := p.run(); err != nil {
		return nil, err
	}
	return p.finish()
}

// ParseReader reads a Prometheus text exposition of kube-scheduler's
// metrics from r, as a stream (see above); every line is checked as
// prometheus/common's parser checks a whole text. An error of r is returned
// as is. source names the input in errors.
func ParseReader(source string, r io.Reader) (*Snapshot, error) {
	p := newTextStream(source)
	p.in = bufio.NewReaderSize(r, maxLineBytes)
	if err := p.run(); err != nil {
		return nil, err
	}
	return p.finish()
}

func newTextStream(source string) *textStream {
	return &textStream{
		source:  source,
		fams:    map[string]*familyState{},
		parser:  expfmt.NewTextParser(model.UTF8Validation),
		builder: newSnapshotBuilder(),
	}
}

// familyState is what the parser remembers of one metric family.
type familyState struct {
	name  string
	typ   dto.MetricType
	typed bool // by a # TYPE line, or untyped by its first sample
	help  bool
	// samples says a sample line belongs to it (the parser drops families
	// without).
	samples bool
	// chunk is the last chunk that touched it; before is its state when
	// that chunk began.
	chunk  int
	before restoredState
	// typeLine is the line of its "# TYPE name " comment, and typeText the
	// line, for errors (kept for the families a Snapshot reads).
	typeLine int
	typeText string
}

// restoredState is the part of familyState a chunk restores.
type restoredState struct {
	typ         dto.MetricType
	typed, help bool
}

type textStream struct {
	source string
	// The text comes from in, or is data (ParseText); at is the offset in
	// data of the line being read.
	in   *bufio.Reader
	data []byte
	at   int
	line int  // lines read
	crlf bool // a line ended in \r\n
	fams map[string]*familyState
	// last is the family of the last line that named one: the parser's
	// current family, which a line of the form {labels,"name"} starts in.
	last *familyState
	// lastName and lastSample are the name and family of the last sample
	// line with a classic name: most lines name the same metric as the one
	// before, and a name's family never changes once it has one.
	lastName   []byte
	lastSample *familyState

	// The chunk being gathered: its lines and their numbers in the text,
	// the families it touched (in order) and the family current before it.
	// lastParsed says the line before went to the parser.
	chunk      bytes.Buffer
	chunkLines []int
	lastParsed bool
	chunkSeq   int
	chunkFams  []*familyState
	chunkStart *familyState
	prefix     bytes.Buffer

	parser  expfmt.TextParser
	builder *snapshotBuilder
	// buildErr is the first error of a series the Snapshot reads; an error
	// in the text's syntax, found later, comes first.
	buildErr error
}

func (p *textStream) run() error {
	for {
		raw, err := p.next()
		if errors.Is(err, bufio.ErrBufferFull) {
			p.line++
			return p.fail(&ParseError{Source: p.source, Line: p.line, Text: shorten(raw),
				Msg: fmt.Sprintf("line longer than %s (a kube-scheduler's lines are shorter than 1 KiB)", bound.FormatBytes(maxLineBytes))})
		}
		if len(raw) > 0 {
			p.line++
			if e := p.add(raw); e != nil {
				return e
			}
			p.at += len(raw)
		}
		if err == io.EOF {
			return p.flush()
		}
		if err != nil {
			return err
		}
	}
}

// next is the next line, with its newline; bufio.ErrBufferFull when it is
// longer than maxLineBytes.
func (p *textStream) next() ([]byte, error) {
	if p.data == nil {
		return p.in.ReadSlice('\n')
	}
	rest := p.data[p.at:]
	if len(rest) == 0 {
		return nil, io.EOF
	}
	raw, err := rest, io.EOF
	if nl := bytes.IndexByte(rest, '\n'); nl >= 0 {
		raw, err = rest[:nl+1], nil
	}
	// As bufio.Reader.ReadSlice with a buffer of maxLineBytes.
	if len(raw) > maxLineBytes || (len(raw) == maxLineBytes && raw[len(raw)-1] != '\n') {
		return raw[:maxLineBytes], bufio.ErrBufferFull
	}
	return raw, err
}

// add classifies one line, updates the families' state as the parser will,
// and adds the line to the chunk.
func (p *textStream) add(raw []byte) error {
	if bytes.HasSuffix(raw, []byte("\r\n")) {
		p.crlf = true
	}
	var c classified
	var f *familyState
	if n := len(p.lastName); n > 0 && len(raw) > n && (raw[n] == '{' || isBlank(raw[n])) && string(raw[:n]) == string(p.lastName) {
		c, f = classified{kind: lineSample, name: raw[:n]}, p.lastSample
	} else {
		c = classify(raw)
	}
	if c.kind == lineNameless {
		return p.fail(&ParseError{Source: p.source, Line: p.line, Text: shorten(raw), Msg: "no metric name in the label set"})
	}
	if c.kind >= lineRegister && f == nil {
		f = p.resolve(c.name)
		if f == nil {
			if len(p.fams) >= maxFamilies {
				return p.fail(&ParseError{Source: p.source, Line: p.line, Text: shorten(raw),
					Msg: fmt.Sprintf("more than %d metric families: this is not a kube-scheduler's /metrics", maxFamilies)})
			}
			f = &familyState{name: string(c.name), chunk: -1}
			p.fams[f.name] = f
		}
	}
	// The parser sees the lines of the families a Snapshot reads and the
	// lines this reader cannot vouch for; the rest is checked here.
	parse := c.kind == lineUnknown || (f != nil && wantedFamilies[f.name]) || !plainLine(raw, c, f)
	n := p.chunk.Len()
	switch {
	case n == 0:
	case !parse && f != nil && f.chunk == p.chunkSeq && changesState(c, f):
		// The chunk's lines must see its families as they were.
		fallthrough
	case parse && !p.lastParsed && braced(raw):
		// The line starts in the family of the line before, which the
		// chunk did not see: a new chunk restores it.
		fallthrough
	case parse && (n >= maxChunkBytes || (n >= chunkBytes && !p.keepsTogether(f))):
		if err := p.flush(); err != nil {
			return err
		}
	}
	if parse && p.chunk.Len() == 0 {
		p.chunkStart = p.last
		p.touch(p.last)
	}
	if f != nil {
		if parse {
			p.touch(f)
		}
		p.last = f
		switch c.kind {
		case lineHelp:
			f.help = true
		case lineType:
			if t, ok := metricType(c.rest); ok && !f.typed {
				f.typ, f.typed = t, true
			}
			if _, ok := familyTypes[f.name]; ok && f.typeLine == 0 && bytes.HasPrefix(raw, []byte("# TYPE "+f.name+" ")) {
				f.typeLine, f.typeText = p.line, shorten(raw)
			}
		case lineSample:
			f.samples = true
			if !f.typed {
				f.typ, f.typed = dto.MetricType_UNTYPED, true
			}
			if bytes.HasPrefix(raw, c.name) {
				p.lastName, p.lastSample = append(p.lastName[:0], c.name...), f
			}
		}
	}
	p.lastParsed = parse
	if !parse {
		return nil
	}
	p.chunk.Write(raw)
	p.chunkLines = append(p.chunkLines, p.line)
	if c.kind == lineUnknown {
		// The parser refuses such a line; were it not to, this reader
		// would not know the line's family, so it refuses it too.
		if err := p.flush(); err != nil {
			return err
		}
		return &ParseError{Source: p.source, Line: p.line, Text: shorten(raw), Msg: "cannot tell the metric family of this line"}
	}
	return nil
}

// keepsTogether says a chunk must not end before a line of f: the lines of
// a histogram the Snapshot reads are parsed together, so that its buckets,
// sum and count make one series.
func (p *textStream) keepsTogether(f *familyState) bool {
	if f == nil || f != p.last || !wantedFamilies[f.name] {
		return false
	}
	switch f.typ {
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM, dto.MetricType_SUMMARY:
		return true
	}
	return false
}

// touch records f's state before the chunk, the first time the chunk
// touches it.
func (p *textStream) touch(f *familyState) {
	if f == nil || f.chunk == p.chunkSeq {
		return
	}
	f.chunk = p.chunkSeq
	f.before = restoredState{typ: f.typ, typed: f.typed, help: f.help}
	p.chunkFams = append(p.chunkFams, f)
}

// resolve finds the family a metric name belongs to as the parser does
// (setOrCreateCurrentMF): the family of that name, else the summary whose
// _count or _sum it is, else the histogram whose _count, _sum or _bucket it
// is; nil when it starts a new one.
func (p *textStream) resolve(name []byte) *familyState {
	if f := p.fams[string(name)]; f != nil {
		return f
	}
	if base := trimSuffix(name, "_count", "_sum"); len(base) < len(name) {
		if f := p.fams[string(base)]; f != nil && f.typed && f.typ == dto.MetricType_SUMMARY {
			return f
		}
	}
	if base := trimSuffix(name, "_count", "_sum", "_bucket"); len(base) < len(name) {
		if f := p.fams[string(base)]; f != nil && f.typed && (f.typ == dto.MetricType_HISTOGRAM || f.typ == dto.MetricType_GAUGE_HISTOGRAM) {
			return f
		}
	}
	return nil
}

// trimSuffix removes the first of suffixes that name ends with, when
// something is left.
func trimSuffix(name []byte, suffixes ...string) []byte {
	for _, suf := range suffixes {
		if len(name) > len(suf) && string(name[len(name)-len(suf):]) == suf {
			return name[:len(name)-len(suf)]
		}
	}
	return name
}

// flush parses the chunk, after the lines that restore the state it
// starts in, and hands the Snapshot's families to the builder.
func (p *textStream) flush() error {
	chunk := p.chunk.Bytes()
	if len(chunk) == 0 {
		return nil
	}
	prefixLines := p.chunkPrefix()
	fams, err := p.parse(chunk, prefixLines)
	if err != nil {
		return p.chunkError(err, prefixLines)
	}
	if p.buildErr == nil {
		for name, f := range fams {
			if !wantedFamilies[name] || !typeAgrees(name, f.GetType()) {
				continue
			}
			samples, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{}, f)
			if err == nil {
				err = p.builder.addAll(samples)
			}
			if err != nil {
				p.buildErr = err
				break
			}
		}
	}
	p.chunk.Reset()
	p.chunkLines = p.chunkLines[:0]
	p.chunkFams = p.chunkFams[:0]
	p.chunkSeq++
	return nil
}

// parse runs the parser over the prefix and chunk. prometheus/common's
// parser panics on a few lines of the {"name",label="v"} form (it writes
// to a nil map or metric); such a panic becomes a ParseError at the line
// that causes it.
func (p *textStream) parse(chunk []byte, prefixLines int) (map[string]*dto.MetricFamily, error) {
	fams, panicked, err := p.parseSafely(chunk)
	if !panicked {
		return fams, err
	}
	// The parser reads line by line: the first k lines panic from the
	// line that does on. lo lines do not, hi lines do.
	lo, hi := 0, bytes.Count(chunk, []byte("\n"))
	if !bytes.HasSuffix(chunk, []byte("\n")) {
		hi++
	}
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if _, panicked, _ := p.parseSafely(firstLines(chunk, mid)); panicked {
			hi = mid
		} else {
			lo = mid
		}
	}
	return nil, expfmt.ParseError{Line: prefixLines + hi, Msg: "cannot parse this line"}
}

func (p *textStream) parseSafely(chunk []byte) (fams map[string]*dto.MetricFamily, panicked bool, err error) {
	defer func() {
		if recover() != nil {
			fams, panicked, err = nil, true, nil
			p.parser = expfmt.NewTextParser(model.UTF8Validation)
		}
	}()
	fams, err = p.parser.TextToMetricFamilies(io.MultiReader(bytes.NewReader(p.prefix.Bytes()), bytes.NewReader(chunk)))
	return fams, false, err
}

// firstLines is the first k lines of data.
func firstLines(data []byte, k int) []byte {
	end := 0
	for i := 0; i < k && end < len(data); i++ {
		nl := bytes.IndexByte(data[end:], '\n')
		if nl < 0 {
			return data
		}
		end += nl + 1
	}
	return data[:end]
}

// chunkPrefix writes into p.prefix the lines that give the parser the state
// the chunk starts in, and returns how many there are: each family the
// chunk touches, with its # TYPE and # HELP when it had them, longest name
// first (so that "x_count", a family of its own, is not read as a summary
// x's), then a comment that makes the family of the line before the chunk
// the current one.
func (p *textStream) chunkPrefix() int {
	p.prefix.Reset()
	fams := p.chunkFams
	sort.SliceStable(fams, func(i, j int) bool { return len(fams[i].name) > len(fams[j].name) })
	n := 0
	for _, f := range fams {
		name := quoteMetricName(f.name)
		// "# HELP name " with nothing after: the family exists, its help
		// is not set.
		fmt.Fprintf(&p.prefix, "# HELP %s \n", name)
		n++
		if f.before.help {
			fmt.Fprintf(&p.prefix, "# HELP %s h\n", name)
			n++
		}
		if f.before.typed {
			fmt.Fprintf(&p.prefix, "# TYPE %s %s\n", name, strings.ToLower(f.before.typ.String()))
			n++
		}
	}
	if p.chunkStart != nil {
		fmt.Fprintf(&p.prefix, "# HELP %s \n", quoteMetricName(p.chunkStart.name))
		n++
	}
	return n
}

// chunkError turns the parser's error in the chunk into a ParseError at the
// text's line.
func (p *textStream) chunkError(err error, prefixLines int) error {
	var pe expfmt.ParseError
	if !errors.As(err, &pe) {
		return &ParseError{Source: p.source, Msg: err.Error()}
	}
	out := &ParseError{Source: p.source, Msg: pe.Msg}
	if k := pe.Line - prefixLines; k > 0 && k <= len(p.chunkLines) {
		out.Line = p.chunkLines[k-1]
		out.Text = shorten(nthLine(p.chunk.Bytes(), k))
	} else {
		// An error in the restoring lines would be this reader's.
		out.Msg = fmt.Sprintf("cannot read from line %d on: %s", p.chunkLines[0], pe.Msg)
	}
	if p.crlf {
		out.Msg += "; the exposition has CRLF (Windows) line endings, which the text format does not allow: convert them to LF (dos2unix FILE, or tr -d '\\r')"
	}
	return out
}

// fail returns err, unless a line before it, in the chunk, is in error.
func (p *textStream) fail(err error) error {
	if ferr := p.flush(); ferr != nil {
		return ferr
	}
	return err
}

// finish checks what only the whole text tells (the families' types, that
// it is a kube-scheduler's) and returns the Snapshot.
func (p *textStream) finish() (*Snapshot, error) {
	var bad *familyState
	for name := range familyTypes {
		f := p.fams[name]
		if f == nil || !f.samples || typeAgrees(name, f.typ) {
			continue
		}
		if bad == nil || f.typeLine < bad.typeLine {
			bad = f
		}
	}
	if bad != nil {
		want := familyTypes[bad.name]
		return nil, &ParseError{Source: p.source, Line: bad.typeLine, Text: bad.typeText, Msg: fmt.Sprintf("# TYPE %s %s: kube-scheduler's %s is a %s",
			bad.name, strings.ToLower(bad.typ.String()), bad.name, strings.ToLower(want.String()))}
	}
	if f := p.fams[PendingPodsMetric]; f == nil || !f.samples {
		return nil, p.notScheduler()
	}
	if p.buildErr != nil {
		return nil, fmt.Errorf("%s: %w", p.source, p.buildErr)
	}
	return p.builder.snapshot(p.source), nil
}

func (p *textStream) notScheduler() error {
	names := make([]string, 0, len(p.fams))
	for name, f := range p.fams {
		if f.samples {
			names = append(names, name)
		}
	}
	return notScheduler(p.source, names)
}

// typeAgrees says a family of type t can be the kube-scheduler family name
// (untyped, as federation writes, can be any).
func typeAgrees(name string, t dto.MetricType) bool {
	want, ok := familyTypes[name]
	return !ok || t == want || t == dto.MetricType_UNTYPED
}

// metricType reads the type of a # TYPE line as the parser does.
func metricType(s []byte) (dto.MetricType, bool) {
	typ := strings.ToUpper(string(s))
	if v, ok := dto.MetricType_value[typ]; ok {
		return dto.MetricType(v), true
	}
	if typ == "GAUGEHISTOGRAM" {
		return dto.MetricType_GAUGE_HISTOGRAM, true
	}
	return 0, false
}

// quoteMetricName writes name as the text format wants it: bare when it
// is a classic name, else quoted.
func quoteMetricName(name string) string {
	if model.LegacyValidation.IsValidMetricName(name) {
		return name
	}
	r := strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
	return `"` + r.Replace(name) + `"`
}

// nthLine is the k-th line (1-based) of data, without its newline.
func nthLine(data []byte, k int) []byte {
	for i := 1; i < k; i++ {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return nil
		}
		data = data[nl+1:]
	}
	if nl := bytes.IndexByte(data, '\n'); nl >= 0 {
		data = data[:nl]
	}
	return data
}

// maxErrorLineBytes is how much of a line an error quotes.
const maxErrorLineBytes = 120

// shorten is a line for an error: without its line end, at most
// maxErrorLineBytes, cut at a character's start.
func shorten(line []byte) string {
	line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	if len(line) <= maxErrorLineBytes {
		return string(line)
	}
	cut := maxErrorLineBytes
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return string(line[:cut]) + "…"
}

// changesState says line c changes what a chunk restores of f.
func changesState(c classified, f *familyState) bool {
	switch c.kind {
	case lineHelp:
		return !f.help
	case lineType, lineSample:
		return !f.typed
	}
	return false
}

// braced says a sample line starts with '{' ({"name",label="v"}).
func braced(raw []byte) bool {
	t := bytes.TrimLeft(raw, " \t")
	return len(t) > 0 && t[0] == '{'
}

// plainLine says the parser takes line, classified c, of family f (its
// state before the line), without error. It knows the plain forms, which
// are most lines: a comment, and name{label="value",…} value [timestamp]
// with a classic name, no blanks in the braces and no escapes. Anything
// else is false: the parser decides.
func plainLine(line []byte, c classified, f *familyState) bool {
	switch c.kind {
	case lineIgnored, lineRegister:
		return true
	case lineHelp:
		return !f.help && helpText(c.rest)
	case lineType:
		_, ok := metricType(c.rest)
		return ok && !f.typed
	case lineSample:
		return bytes.HasPrefix(line, c.name) && plainSample(line, len(c.name), f)
	}
	return false
}

// helpText says a # HELP text has only the escapes the parser knows.
func helpText(s []byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			if i+1 >= len(s) || (s[i+1] != '\\' && s[i+1] != 'n' && s[i+1] != '"') {
				return false
			}
			i++
		}
	}
	return true
}

// plainSample checks a sample line whose classic name is its first n
// bytes, as the parser does (readingLabels, startLabelName,
// startLabelValue, readingValue, startTimestamp), for the plain form only.
func plainSample(line []byte, n int, f *familyState) bool {
	typ := dto.MetricType_UNTYPED
	if f.typed {
		typ = f.typ
	}
	hist := typ == dto.MetricType_HISTOGRAM || typ == dto.MetricType_GAUGE_HISTOGRAM
	i := n
	for i < len(line) && isBlank(line[i]) {
		i++
	}
	if i < len(line) && line[i] == '{' {
		var seen [16][]byte // label names, for duplicates
		labels := 0
		i++
		for {
			if i >= len(line) {
				return false
			}
			if line[i] == '}' {
				i++
				break
			}
			start := i
			if !isLabelNameStart(line[i]) || line[i] == '"' {
				return false
			}
			for i < len(line) && (isLabelNameStart(line[i]) || (line[i] >= '0' && line[i] <= '9')) && line[i] != '"' {
				i++
			}
			name := line[start:i]
			if i+1 >= len(line) || line[i] != '=' || line[i+1] != '"' || string(name) == model.MetricNameLabel {
				return false
			}
			i += 2
			vstart := i
			for i < len(line) && line[i] != '"' && line[i] != '\\' && line[i] != '\n' {
				i++
			}
			if i >= len(line) || line[i] != '"' {
				return false
			}
			value := line[vstart:i]
			i++
			if !utf8.Valid(value) {
				return false
			}
			if (hist && string(name) == model.BucketLabel) || (typ == dto.MetricType_SUMMARY && string(name) == model.QuantileLabel) {
				if _, ok := parseFloat(value); !ok {
					return false
				}
			} else {
				for _, other := range seen[:labels] {
					if string(other) == string(name) {
						return false
					}
				}
				if labels == len(seen) {
					return false
				}
				seen[labels] = name
				labels++
			}
			if i >= len(line) {
				return false
			}
			switch line[i] {
			case ',':
				i++
			case '}':
			default:
				return false
			}
		}
		for i < len(line) && isBlank(line[i]) {
			i++
		}
	}
	start := i
	for i < len(line) && !isBlank(line[i]) && line[i] != '\n' {
		i++
	}
	v, ok := parseFloat(line[start:i])
	if !ok || i >= len(line) || (hist && v < 0) {
		return false
	}
	if line[i] == '\n' {
		return true
	}
	for i < len(line) && isBlank(line[i]) {
		i++
	}
	start = i
	for i < len(line) && !isBlank(line[i]) && line[i] != '\n' {
		i++
	}
	if i >= len(line) || line[i] != '\n' {
		return false
	}
	_, err := strconv.ParseInt(string(line[start:i]), 10, 64)
	return err == nil
}

// parseFloat is the parser's: strconv.ParseFloat without p, P or _.
func parseFloat(s []byte) (float64, bool) {
	if bytes.ContainsAny(s, "pP_") {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(s), 64)
	return v, err == nil
}

// Line kinds, as classify tells them. Kinds from lineRegister on name a
// family.
type lineKind int

const (
	lineIgnored  lineKind = iota // blank, or a comment the parser skips
	lineUnknown                  // the parser refuses it
	lineNameless                 // {labels} without a metric name
	lineRegister                 // "# HELP name " or "# TYPE name ": the family, nothing set
	lineHelp
	lineType
	lineSample
)

type classified struct {
	kind lineKind
	name []byte // a slice of the line, unless the name is quoted
	rest []byte // a # TYPE line's type, a # HELP line's text
}

// classify reads the metric name of a line the way prometheus/common's
// text parser does (expfmt/text_parse.go: startOfLine, startComment,
// readTokenAsMetricName, startLabelName), without its state. Whatever the
// parser would refuse is lineUnknown; the parser then says why.
func classify(line []byte) classified {
	s := scanner{b: line}
	s.skipBlank()
	switch {
	case s.eof(), s.cur() == '\n':
		return classified{kind: lineIgnored}
	case s.cur() == '#':
		return classifyComment(&s)
	case s.cur() == '{':
		return classifyBraces(&s)
	}
	name, ok := s.metricName()
	if !ok || !validMetricName(name) {
		return classified{kind: lineUnknown}
	}
	return classified{kind: lineSample, name: name}
}

func classifyComment(s *scanner) classified {
	s.next()
	s.skipBlank()
	if s.eof() {
		return classified{kind: lineUnknown}
	}
	if s.cur() == '\n' {
		return classified{kind: lineIgnored}
	}
	start := s.i
	for !s.eof() && !isBlank(s.cur()) && s.cur() != '\n' {
		s.next()
	}
	if s.eof() {
		return classified{kind: lineUnknown}
	}
	keyword := string(s.b[start:s.i])
	if s.cur() == '\n' {
		return classified{kind: lineIgnored}
	}
	if keyword != "HELP" && keyword != "TYPE" {
		if s.b[len(s.b)-1] != '\n' {
			return classified{kind: lineUnknown}
		}
		return classified{kind: lineIgnored}
	}
	s.skipBlank()
	if s.eof() {
		return classified{kind: lineUnknown}
	}
	name, ok := s.metricName()
	if !ok || s.eof() {
		return classified{kind: lineUnknown}
	}
	if s.cur() == '\n' {
		return classified{kind: lineIgnored}
	}
	if !isBlank(s.cur()) || !validMetricName(name) {
		return classified{kind: lineUnknown}
	}
	s.skipBlank()
	if s.eof() {
		return classified{kind: lineUnknown}
	}
	if s.cur() == '\n' {
		return classified{kind: lineRegister, name: name}
	}
	rest := s.b[s.i:]
	nl := bytes.IndexByte(rest, '\n')
	if nl < 0 {
		return classified{kind: lineUnknown}
	}
	if keyword == "HELP" {
		return classified{kind: lineHelp, name: name, rest: rest[:nl]}
	}
	return classified{kind: lineType, name: name, rest: rest[:nl]}
}

// classifyBraces reads a line that starts with '{': its metric name is the
// label-set element without a value, {"name",label="v"}.
func classifyBraces(s *scanner) classified {
	var name []byte
	s.next()
labels:
	for {
		s.skipBlank()
		if s.eof() {
			return classified{kind: lineUnknown}
		}
		if s.cur() == '}' {
			break
		}
		token, ok := s.labelName()
		if !ok || len(token) == 0 || s.eof() {
			return classified{kind: lineUnknown}
		}
		s.skipBlank()
		if s.eof() {
			return classified{kind: lineUnknown}
		}
		if s.cur() != '=' {
			if name != nil || (s.cur() != ',' && s.cur() != '}') || !validMetricName(token) {
				return classified{kind: lineUnknown}
			}
			name = token
		} else {
			s.next()
			s.skipBlank()
			if s.eof() || s.cur() != '"' || !s.labelValue() {
				return classified{kind: lineUnknown}
			}
			s.skipBlank()
			if s.eof() {
				return classified{kind: lineUnknown}
			}
		}
		switch s.cur() {
		case ',':
			s.next()
		case '}':
			break labels
		default:
			return classified{kind: lineUnknown}
		}
	}
	if name == nil {
		return classified{kind: lineNameless}
	}
	return classified{kind: lineSample, name: name}
}

// scanner walks a line byte by byte; i == len(b) is the end of the input.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) eof() bool { return s.i >= len(s.b) }
func (s *scanner) cur() byte { return s.b[s.i] }
func (s *scanner) next()     { s.i++ }

func (s *scanner) skipBlank() {
	for !s.eof() && isBlank(s.cur()) {
		s.i++
	}
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' }

// metricName is readTokenAsMetricName: a classic name, or a quoted one
// (possibly after classic characters); ok is false where the parser errs.
func (s *scanner) metricName() ([]byte, bool) {
	return s.token(isMetricNameStart, isMetricNameContinuation, ' ')
}

// labelName is readTokenAsLabelName.
func (s *scanner) labelName() ([]byte, bool) {
	return s.token(isLabelNameStart, isLabelNameContinuation, '=')
}

func (s *scanner) token(start func(byte) bool, cont func(byte, bool) bool, stop byte) ([]byte, bool) {
	if s.eof() || !start(s.cur()) {
		return nil, true
	}
	// A classic name is a slice of the line; a quoted one is copied.
	from := s.i
	var b []byte
	quoted, escaped := false, false
	for {
		c := s.cur()
		if c == '"' && b == nil {
			b = append(make([]byte, 0, 64), s.b[from:s.i]...)
		}
		if escaped {
			switch c {
			case '\\', '"':
				b = append(b, c)
			case 'n':
				b = append(b, '\n')
			default:
				return nil, false
			}
			escaped = false
		} else {
			switch c {
			case '"':
				quoted = !quoted
				if !quoted {
					s.next()
					return b, true
				}
			case '\n':
				return nil, false
			case '\\':
				escaped = true
			default:
				if b != nil {
					b = append(b, c)
				}
			}
		}
		s.next()
		if s.eof() {
			// The parser reads past the end here: an error.
			return nil, false
		}
		if c := s.cur(); !cont(c, quoted) || (!quoted && c == stop) {
			if b == nil {
				return s.b[from:s.i], true
			}
			return b, true
		}
	}
}

// labelValue skips a quoted label value (readTokenAsLabelValue) and the
// closing quote; false where the parser errs.
func (s *scanner) labelValue() bool {
	escaped := false
	for {
		s.next()
		if s.eof() {
			return false
		}
		c := s.cur()
		if escaped {
			if c != '"' && c != '\\' && c != 'n' {
				return false
			}
			escaped = false
			continue
		}
		switch c {
		case '"':
			s.next()
			return true
		case '\n':
			return false
		case '\\':
			escaped = true
		}
	}
}

func isLabelNameStart(b byte) bool {
	return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || b == '_' || b == '"'
}

// isLabelNameContinuation: quoted, any byte goes on (the parser's
// utf8.ValidString of one byte's rune is always true).
func isLabelNameContinuation(b byte, quoted bool) bool {
	return quoted || isLabelNameStart(b) || (b >= '0' && b <= '9')
}

func isMetricNameStart(b byte) bool { return isLabelNameStart(b) || b == ':' }

func isMetricNameContinuation(b byte, quoted bool) bool {
	return isLabelNameContinuation(b, quoted) || b == ':'
}

// validMetricName is the parser's check of a name under UTF-8 validation.
func validMetricName(name []byte) bool {
	return len(name) > 0 && utf8.Valid(name)
}
