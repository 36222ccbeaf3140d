package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/status"
)

// hostileStatus is a status whose every outside string holds v: the
// scheduler's labels (event, profile, gate stage, version, platform, entity
// type), the Prometheus target, a warning and a scrape error.
func hostileStatus(t *testing.T, v string) *status.SchedulerStatus {
	t.Helper()
	l := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
	text := fmt.Sprintf(`scheduler_pending_pods{queue="active"} 1
scheduler_pending_pods{queue="backoff"} 1
scheduler_queue_incoming_pods_total{queue="active",event="%[1]s"} 3
scheduler_schedule_attempts_total{result="scheduled",profile="%[1]s"} 2
kubernetes_feature_enabled{name="SchedulerPopFromBackoffQ",stage="%[1]s"} 1
kubernetes_build_info{git_version="%[1]s",go_version="%[1]s",platform="%[1]s"} 1
scheduler_queued_entities{queue="active",type="%[1]s"} 1
`, l)
	snap, err := metricscrape.ParseText("hostile.prom", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	snap.Time = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	snap.Origin = metricscrape.Origin{Kind: metricscrape.OriginPrometheus, Address: "http://prometheus:9090", Target: `{instance="` + v + `"}`,
		Pod: "kube-system/" + v, Node: v, LeaseHolder: v}
	st, err := status.NewSchedulerStatus(nil, snap)
	if err != nil {
		t.Fatal(err)
	}
	st.Warnings = append(st.Warnings, "series "+v+" looks wrong")
	st.Error = "scrape failed: " + v + "\nretry later"
	return st
}

// hostileList is an explanation whose every outside string holds v: the
// names, the FitError in the summary, reasons and evidence, the failure,
// the triggers and the note.
func hostileList(v string) *explain.ExplanationList {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	e := explain.Explanation{
		Namespace: "ns-" + v, Name: "pod-" + v, State: explain.StatePending, Queue: queue.LocationUnschedulable, Confidence: 0.9,
		Alternatives: []explain.Alternative{{Queue: queue.LocationBackoff, Probability: 0.1}},
		Attempts:     2, Summary: "unschedulable: " + v, Reasons: []string{"0/3 nodes: " + v}, Evidence: []string{"event: " + v},
		LastFailure: &explain.Failure{Kind: v, Message: v, Time: now.Add(-time.Second), Count: 1},
		NextRetry:   &explain.NextRetry{Triggers: []string{v, "NodeAdd"}, Note: "note " + v},
	}
	return explain.NewExplanationList([]explain.Explanation{e}, []string{"warning " + v}, nil, now)
}

// TestPrinters_quoteOutsideText runs every human-readable printer over text
// from outside that holds terminal sequences, and checks that none reaches
// the output raw, that a huge value is cut, and that plain UTF-8 passes
// unchanged; -o json keeps the value exact.
func TestPrinters_quoteOutsideText(t *testing.T) {
	values := []struct {
		name string
		v    string
		// shown is how the value must read in the output: escaped, or
		// unchanged.
		shown string
		long  bool
	}{
		{name: "CSI clear and colour", v: "\x1b[2J\x1b[31mEvil", shown: `\x1b[2J\x1b[31mEvil`},
		{name: "carriage return", v: "Good\rEvil", shown: `Good\rEvil`},
		{name: "backspace", v: "Good\b\b\b\bEvil", shown: `Good\b\b\b\bEvil`},
		{name: "OSC 8 hyperlink", v: "\x1b]8;;https://evil.example/\x1b\\Click\x1b]8;;\x1b\\", shown: `\x1b]8;;https://evil.example/\x1b\Click`},
		{name: "OSC title", v: "\x1b]0;owned\a", shown: `\x1b]0;owned\a`},
		{name: "bidi override", v: "Evil\u202Etxt.exe", shown: `Evil\u202etxt.exe`},
		{name: "C1 CSI", v: "a\u009b2J", shown: `a\u009b2J`},
		{name: "very long", v: strings.Repeat("L", 20<<10), long: true},
		{name: "UTF-8 passes unchanged", v: "Ünïcödé-名前-🚀", shown: "Ünïcödé-名前-🚀"},
	}
	printers := []struct {
		name  string
		print func(t *testing.T, w *bytes.Buffer, v string)
	}{
		{"status table", func(t *testing.T, w *bytes.Buffer, v string) {
			if err := printStatusTable(w, hostileStatus(t, v), tableOptions{wide: true}); err != nil {
				t.Fatal(err)
			}
		}},
		{"status watch frame", func(t *testing.T, w *bytes.Buffer, v string) {
			if err := printStatusTable(w, hostileStatus(t, v), tableOptions{warnings: true}); err != nil {
				t.Fatal(err)
			}
		}},
		{"status warnings", func(t *testing.T, w *bytes.Buffer, v string) {
			o := &StatusOptions{IOStreams: genericiooptions.IOStreams{Out: &bytes.Buffer{}, ErrOut: w}}
			if err := o.print(hostileStatus(t, v), 0); err != nil {
				t.Fatal(err)
			}
		}},
		{"explain table", func(t *testing.T, w *bytes.Buffer, v string) {
			l := hostileList(v)
			if err := PrintExplanations(w, l, TableOptions{}); err != nil {
				t.Fatal(err)
			}
			PrintCounts(w, l)
		}},
		{"explain wide", func(t *testing.T, w *bytes.Buffer, v string) {
			if err := PrintExplanations(w, hostileList(v), TableOptions{Wide: true}); err != nil {
				t.Fatal(err)
			}
		}},
		{"explain detail", func(t *testing.T, w *bytes.Buffer, v string) {
			if err := PrintExplanations(w, hostileList(v), TableOptions{Detailed: true}); err != nil {
				t.Fatal(err)
			}
		}},
		{"explain custom columns and names", func(t *testing.T, w *bytes.Buffer, v string) {
			cols, err := parseCustomColumns("NAME:.name,SUMMARY:.summary,WHY:.reasons")
			if err != nil {
				t.Fatal(err)
			}
			l := hostileList(v)
			if err := printCustomColumns(w, l.Items, cols, false); err != nil {
				t.Fatal(err)
			}
			printNames(w, l.Items)
		}},
		{"explain warnings", func(t *testing.T, w *bytes.Buffer, v string) {
			printWarnings(w, hostileList(v).Warnings)
		}},
		{"errors", func(t *testing.T, w *bytes.Buffer, v string) {
			PrintError(w, fmt.Errorf("reading the scheduler's metrics: %w", errors.New("answered: "+v)))
		}},
	}
	for _, val := range values {
		for _, p := range printers {
			t.Run(val.name+"/"+p.name, func(t *testing.T) {
				var b bytes.Buffer
				p.print(t, &b, val.v)
				out := b.String()
				if i := strings.IndexAny(out, "\x1b\r\b\a\u202e\u009b"); i >= 0 {
					t.Errorf("a control character reaches the output at byte %d: %q", i, out[max(0, i-20):min(len(out), i+20)])
				}
				switch {
				case val.long && (len(out) > 16<<10 || !strings.Contains(out, "more bytes)")):
					t.Errorf("a %d-byte value gives %d bytes of output, want it cut with a marker", len(val.v), len(out))
				case !val.long && !strings.Contains(out, val.shown):
					t.Errorf("output lacks %q:\n%s", val.shown, out)
				}
			})
		}
		t.Run(val.name+"/-o json keeps it exact", func(t *testing.T) {
			want, _ := json.Marshal(val.v)
			pf := genericclioptions.NewPrintFlags("").WithDefaultOutput("json")
			p, err := pf.ToPrinter()
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := p.PrintObj(hostileList(val.v), &b); err != nil {
				t.Fatal(err)
			}
			var back explain.ExplanationList
			if err := json.Unmarshal(b.Bytes(), &back); err != nil {
				t.Fatal(err)
			}
			if got := back.Items[0].LastFailure.Kind; got != val.v {
				t.Errorf("-o json gives %q back, want %s exactly", got, want)
			}
		})
	}
}
