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
			snap, err = nil, fmt.Errorf("parser panicked: %v", r)
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

func TestParseText_stream(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		wantErr string
	}{
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
