package metricscrape

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// parseWhole is how an exposition was read before it was read as a
// stream: prometheus/common's parser over the whole text, then the
// families' types checked and the Snapshot built. The stream must answer
// as it does (FuzzParseText_stream) and use a fraction of its memory.
func parseWhole(source string, data []byte) (snap *Snapshot, err error) {
	defer func() {
		// prometheus/common's parser dereferences a nil metric on
		// "{} 1" and the like.
		if r := recover(); r != nil {
			snap, err = nil, &ParseError{Source: source, Msg: fmt.Sprintf("parser panicked: %v", r)}
		}
	}()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(data))
	if err != nil {
		var pe expfmt.ParseError
		if !errors.As(err, &pe) {
			return nil, &ParseError{Source: source, Msg: err.Error()}
		}
		return nil, &ParseError{Source: source, Line: pe.Line, Msg: pe.Msg}
	}
	for name, want := range familyTypes {
		f, ok := families[name]
		if !ok || f.GetType() == want || f.GetType() == dto.MetricType_UNTYPED {
			continue
		}
		return nil, &ParseError{Source: source, Msg: "# TYPE " + name + ": wrong type"}
	}
	return FromFamilies(source, families)
}

// sameAnswer reports how the stream's answer differs from the whole
// parse's: both a Snapshot, equal but for the order of warnings, or both
// an error of the same kind, on the same line for a ParseError.
func sameAnswer(whole, stream *Snapshot, wholeErr, streamErr error) string {
	if (wholeErr == nil) != (streamErr == nil) {
		return fmt.Sprintf("whole: %v\nstream: %v", wholeErr, streamErr)
	}
	if wholeErr != nil {
		var wp, sp *ParseError
		var wn, sn *NotSchedulerError
		switch {
		case errors.As(wholeErr, &wp) != errors.As(streamErr, &sp):
			return fmt.Sprintf("whole: %v\nstream: %v", wholeErr, streamErr)
		case wp != nil && wp.Line != 0 && wp.Line != sp.Line:
			return fmt.Sprintf("line %d, want %d\nwhole: %v\nstream: %v", sp.Line, wp.Line, wholeErr, streamErr)
		case errors.As(wholeErr, &wn) != errors.As(streamErr, &sn):
			return fmt.Sprintf("whole: %v\nstream: %v", wholeErr, streamErr)
		case wn != nil && (wn.Families != sn.Families || wn.Looks != sn.Looks):
			return fmt.Sprintf("whole: %v\nstream: %v", wholeErr, streamErr)
		}
		return ""
	}
	sort.Strings(whole.Warnings)
	sort.Strings(stream.Warnings)
	return cmp.Diff(whole, stream, cmpopts.EquateEmpty(), cmpopts.EquateNaNs())
}

func TestParseText_streamAsWhole(t *testing.T) {
	recorded := func(name string) string { return string(readRecorded(t, name)) }
	tests := []struct {
		name  string
		input string
	}{
		{"recorded idle", recorded("v1.36-idle.prom")},
		{"recorded parked", recorded("v1.36-parked.prom")},
		{"recorded settled", recorded("v1.36-settled.prom")},
		{"no final newline", "scheduler_pending_pods{queue=\"active\"} 1"},
		{"blanks after the last newline", "scheduler_pending_pods{queue=\"active\"} 1\n  "},
		{"histogram split by another family", "# TYPE scheduler_pod_scheduling_attempts histogram\n" +
			"scheduler_pod_scheduling_attempts_bucket{le=\"1\"} 1\nscheduler_pending_pods 1\n" +
			"scheduler_pod_scheduling_attempts_bucket{le=\"2\"} 2\n"},
		{"own family named like a histogram's buckets", "scheduler_pod_scheduling_attempts_bucket 3\n" +
			"# TYPE scheduler_pod_scheduling_attempts histogram\nscheduler_pod_scheduling_attempts_bucket{le=\"1\"} 1\nscheduler_pending_pods 1\n"},
		{"second TYPE after other families", "# TYPE scheduler_pending_pods gauge\nother 1\n# TYPE scheduler_pending_pods gauge\n"},
		{"TYPE after samples", "scheduler_pending_pods 1\nother 2\n# TYPE scheduler_pending_pods gauge\n"},
		{"second HELP", "# HELP x a\nscheduler_pending_pods 1\n# HELP x b\n"},
		{"quoted names", "{\"scheduler_pending_pods\",queue=\"active\"} 4\n# TYPE \"my.metric\" counter\n\"my.metric\"{a=\"b\"} 1\n"},
		{"labels before the name", "# TYPE h histogram\nh_bucket{le=\"1\"} 1\n{le=\"x\",\"scheduler_pending_pods\"} 2\n"},
		{"wrong type", "# TYPE scheduler_pending_pods counter\nscheduler_pending_pods 1\n"},
		{"wrong type without samples", "# TYPE scheduler_pending_pods counter\nscheduler_pending_pods_x 1\n"},
		{"summary count", "# TYPE s summary\ns_count 1\ns_sum 2\ns{quantile=\"0.5\"} 1\nscheduler_pending_pods 1\n"},
		{"CRLF", "scheduler_pending_pods 1\r\n"},
		{"a 403 body", "Forbidden (user=system:anonymous, verb=get, resource=, subresource=)\n"},
		{"html", "<html><body>hi</body></html>\n"},
		{"not a scheduler", "# TYPE apiserver_request_total counter\napiserver_request_total{code=\"200\"} 5\n"},
		{"NaN in a series read", "scheduler_pending_pods{queue=\"active\"} NaN\nbad{ 1\n"},
		{"given twice", "scheduler_pending_pods{queue=\"active\"} 1\nscheduler_pending_pods{queue=\"active\"} 2\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want, wantErr := parseWhole("src", []byte(tc.input))
			got, err := ParseText("src", []byte(tc.input))
			if d := sameAnswer(want, got, wantErr, err); d != "" {
				t.Error(d)
			}
		})
	}
}

// TestParseText_streamChunks reads an exposition in many chunks, every
// family split, as the whole text.
func TestParseText_streamChunks(t *testing.T) {
	var b bytes.Buffer
	writeBigExposition(t, &b, 3*chunkBytes)
	// Put the scheduler's families after the first chunk too.
	b.WriteString(strings.ReplaceAll(string(readRecorded(t, "v1.36-idle.prom")), "# TYPE", "# XTYPE"))
	want, wantErr := parseWhole("src", b.Bytes())
	got, err := ParseText("src", b.Bytes())
	if d := sameAnswer(want, got, wantErr, err); d != "" {
		t.Error(d)
	}
}

// TestParseText_streamWantedChunks: more of the Snapshot's series than one
// chunk holds, among other families' lines of every kind, read as the whole
// text.
func TestParseText_streamWantedChunks(t *testing.T) {
	var b strings.Builder
	b.WriteString("# HELP scheduler_queue_incoming_pods_total x\n# TYPE scheduler_queue_incoming_pods_total counter\n# HELP scheduler_schedule_attempts_total y\n")
	for i := 0; b.Len() < 3*chunkBytes; i++ {
		fmt.Fprintf(&b, "scheduler_queue_incoming_pods_total{queue=\"active\",event=\"E%d\"} %d\n", i, i)
		switch i % 500 {
		case 0:
			fmt.Fprintf(&b, "# TYPE other_%d histogram\nother_%d_bucket{le=\"1\"} 1\nother_%d_count 1\n", i, i, i)
		case 1:
			fmt.Fprintf(&b, "{\"scheduler_pending_pods\",queue=\"q%d\"} 1\n", i)
		case 2:
			fmt.Fprintf(&b, "scheduler_schedule_attempts_total{result=\"scheduled\",profile=\"p%d\"} 2\n", i)
		case 3:
			fmt.Fprintf(&b, "untyped_%d{a=\"b\"} 1 1700000000000\n", i)
		}
	}
	b.WriteString("# TYPE scheduler_pod_scheduling_attempts histogram\nscheduler_pod_scheduling_attempts_bucket{le=\"1\"} 3\nscheduler_pod_scheduling_attempts_count 3\nscheduler_pod_scheduling_attempts_sum 3\n")
	data := []byte(b.String())
	want, wantErr := parseWhole("src", data)
	got, err := ParseText("src", data)
	if d := sameAnswer(want, got, wantErr, err); d != "" {
		t.Error(d)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Incoming) < 10000 || got.PodSchedulingAttempts.Count != 3 {
		t.Errorf("err %v, %d incoming series", err, len(got.Incoming))
	}
}

func TestParseText_stream(t *testing.T) {
	var series strings.Builder
	series.WriteString("scheduler_pending_pods 1\n")
	for i := 0; i <= maxSnapshotSeries; i++ {
		fmt.Fprintf(&series, "scheduler_queue_incoming_pods_total{queue=\"active\",event=\"E%d\"} 1\n", i)
	}
	tests := []struct {
		name    string
		input   string
		wantErr string
	}{
		{
			name:    "more series than a scheduler has",
			input:   series.String(),
			wantErr: "src: more than 100000 series of the scheduler's queue metrics (scheduler_queue_incoming_pods_total{event=\"E99999\", queue=\"active\"}, …; a kube-scheduler has a few thousand)",
		},
		{
			name:    "a metric without a name",
			input:   "scheduler_pending_pods 1\n{} 1\n",
			wantErr: "src:2: malformed metrics exposition: no metric name in the label set (line: \"{} 1\")",
		},
		{
			name:    "labels without a name, after a family",
			input:   "# HELP scheduler_pending_pods x\n{queue=\"active\"} 1\n",
			wantErr: "src:2: malformed metrics exposition: no metric name in the label set",
		},
		{
			// prometheus/common's parser writes to a nil map here.
			name:    "a histogram's labels after its name in braces",
			input:   "# TYPE h histogram\nscheduler_pending_pods 1\n{\"h_bucket\",a=\"1\"} 1\n",
			wantErr: "src:3: malformed metrics exposition: cannot parse this line",
		},
		{
			name:    "a line beyond the longest",
			input:   "scheduler_pending_pods 1\nx{a=\"" + strings.Repeat("v", maxLineBytes) + "\"} 1\n",
			wantErr: "src:2: malformed metrics exposition: line longer than 64 KiB (a kube-scheduler's lines are shorter than 1 KiB) (line: \"x{a=\\\"vvv",
		},
		{
			name:    "an error before a long line comes first",
			input:   "scheduler_pending_pods{ 1\nx{a=\"" + strings.Repeat("v", maxLineBytes) + "\"} 1\n",
			wantErr: "src:1: malformed metrics exposition: invalid label name",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseText("src", []byte(tc.input))
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to begin with %q", err, tc.wantErr)
			}
			if len(err.Error()) > 400 {
				t.Errorf("error of %d bytes, want a short one", len(err.Error()))
			}
		})
	}
}

// TestPlainLine_refusesWhatTheParserRefuses: every line plainLine vouches
// for, the parser takes, over combinations of the forms of each part of a
// sample line and of each family type.
func TestPlainLine_refusesWhatTheParserRefuses(t *testing.T) {
	names := []string{"f", "f_bucket", "f_count", "f_sum"}
	labelSets := []string{"", "{}", "{a=\"b\"}", "{a=\"b\",}", "{a=\"b\",a=\"c\"}", "{le=\"1\"}", "{le=\"x\"}", "{le=\"1\",le=\"2\"}",
		"{quantile=\"0.5\"}", "{quantile=\"q\"}", "{__name__=\"x\"}", "{a=\"\\xff\"}", "{a=\"b\" }", "{ a=\"b\"}", "{a = \"b\"}",
		"{a=\"b\"", "{a=b}", "{a=\"b\"c=\"d\"}", "{1a=\"b\"}", " {a=\"b\"}", "{a=\"\\n\"}", "{a=\"x\\\\\"}"}
	values := []string{"1", "-1", "0", "-0", "1.5", "-1.5", "NaN", "+Inf", "-Inf", "1e400", "0x1p3", "1_0", "", "x", "1e"}
	tails := []string{"\n", " 123\n", " 123 \n", " \n", "\t1\n", " 1.5\n", " 123 4\n", "", " 99999999999999999999\n", "\r\n"}
	types := []string{"", "untyped", "counter", "gauge", "histogram", "gaugehistogram", "summary"}
	vouched := 0
	for _, typ := range types {
		for _, name := range names {
			for _, ls := range labelSets {
				for _, v := range values {
					for _, tail := range tails {
						line := name + ls
						if !strings.HasPrefix(ls, " ") && ls != "" || ls == "" {
							line += " "
						}
						line += v + tail
						header := ""
						if typ != "" {
							header = "# TYPE f " + typ + "\n"
						}
						p := newTextStream("t")
						p.data = []byte(header)
						if err := p.run(); err != nil {
							t.Fatal(err)
						}
						c := classify([]byte(line))
						if c.kind != lineSample {
							continue
						}
						f := p.resolve(c.name)
						if f == nil {
							f = &familyState{name: string(c.name)}
						}
						if !plainLine([]byte(line), c, f) {
							continue
						}
						vouched++
						parser := expfmt.NewTextParser(model.UTF8Validation)
						if _, err := parser.TextToMetricFamilies(strings.NewReader(header + line)); err != nil {
							t.Errorf("plainLine vouches for %q (type %q), the parser says %v", line, typ, err)
						}
					}
				}
			}
		}
	}
	if vouched < 1000 {
		t.Errorf("plainLine vouched for %d lines, want most plain ones", vouched)
	}
}
