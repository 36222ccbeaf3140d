package cmd

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

// TestExplain_scriptable: stdout holds the table (or names, or columns)
// alone, for scripts; the count per queue goes to stderr.
func TestExplain_scriptable(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantOut    []string // lines, in order, that stdout starts with
		wantNotOut []string
		wantErrOut string
	}{
		{name: "table: counts on stderr", args: []string{"-A"},
			wantOut: []string{"NAMESPACE  NAME", "default    big-0"}, wantNotOut: []string{"pod(s):"}, wantErrOut: "16 pod(s): errorBackoffQ 5, unschedulablePods 8, gated 3"},
		{name: "--no-headers", args: []string{"-A", "--no-headers"},
			wantOut: []string{"default  big-0"}, wantNotOut: []string{"NAMESPACE"}},
		{name: "-o name", args: []string{"-A", "-o", "name"},
			wantOut: []string{"pod/big-0", "pod/big-1"}, wantNotOut: []string{"NAMESPACE", "pod(s):"}},
		{name: "-o custom-columns", args: []string{"-A", "-o", "custom-columns=NAME:.name,QUEUE:.queue,ATTEMPTS:{.attempts}"},
			wantOut: []string{"NAME          QUEUE               ATTEMPTS", "big-0         unschedulablePods   1"}},
		{name: "-o custom-columns --no-headers", args: []string{"-A", "--no-headers", "-o", "custom-columns=NAME:.name"},
			wantOut: []string{"big-0", "big-1"}},
		{name: "--sort-by queue", args: []string{"-A", "--no-headers", "--sort-by", ".queue", "-o", "custom-columns=Q:.queue"},
			wantOut: []string{"errorBackoffQ", "errorBackoffQ", "errorBackoffQ", "errorBackoffQ", "errorBackoffQ", "gated"}},
		{name: "--sort-by a number", args: []string{"-A", "--no-headers", "--sort-by", "{.attempts}", "-o", "custom-columns=N:.name"},
			wantOut: []string{"gated-0", "gated-1", "gated-2"}},
		{name: "-o wide with named pods is the wide table", args: []string{"big-1", "gated-0", "-o", "wide"},
			wantOut: []string{"NAMESPACE  NAME     QUEUE", "default    big-1"}, wantNotOut: []string{"why:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, _, out, errOut := newTestExplain(t, parkedCluster(0), tc.args...)
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			if err := o.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(out.String(), "\n")
			for i, want := range tc.wantOut {
				if i >= len(lines) || !strings.HasPrefix(lines[i], want) {
					t.Errorf("stdout line %d does not start with %q:\n%s", i+1, want, out)
				}
			}
			for _, bad := range tc.wantNotOut {
				if strings.Contains(out.String(), bad) {
					t.Errorf("stdout has %q:\n%s", bad, out)
				}
			}
			if !strings.Contains(errOut.String(), tc.wantErrOut) {
				t.Errorf("stderr %q lacks %q", errOut, tc.wantErrOut)
			}
		})
	}
}

// TestExplain_outputErrors: a format explain does not take is refused with
// every format it does take.
func TestExplain_outputErrors(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr []string
	}{
		{[]string{"explain", "-A", "-o", "table"}, []string{"-o table: unknown output format; explain takes wide, name, custom-columns=", "json", "yaml", "jsonpath"}},
		{[]string{"explain", "-A", "-o", "custom-columns"}, []string{"-o custom-columns= needs HEADER:JSONPATH pairs"}},
		{[]string{"explain", "-A", "-o", "custom-columns=NAME"}, []string{`"NAME" is not HEADER:JSONPATH`}},
		{[]string{"explain", "-A", "--sort-by", "{.attempts"}, []string{"--sort-by={.attempts"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			root := NewCmdSchedq(genericiooptions.NewTestIOStreamsDiscard())
			root.SetArgs(append(tc.args, "--kubeconfig", kubeconfigFor(t, "https://127.0.0.1:1")))
			err := root.Execute()
			for _, want := range tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want %q", err, want)
				}
			}
		})
	}
}

// TestExplain_sortByMatchesNothing: --sort-by with a path no pod has is
// refused, as kubectl refuses it, rather than sorting by nothing.
func TestExplain_sortByMatchesNothing(t *testing.T) {
	for _, path := range []string{".nosuch", "{.queu}"} {
		t.Run(path, func(t *testing.T) {
			o, _, out, _ := newTestExplain(t, parkedCluster(0), "-A", "--sort-by", path)
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			err := o.Run(context.Background())
			if err == nil || !strings.Contains(err.Error(), "--sort-by="+path+": couldn't find any field with path") {
				t.Errorf("err = %v, want the path refused", err)
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q, want nothing", out)
			}
		})
	}
}

// TestNextTry: the NEXT TRY column is the time until the estimated next
// attempt (its clock time too, wide); for a pod waiting for an event, the
// leftover flush's deadline; "-" when nothing names a time.
func TestNextTry(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	tests := []struct {
		name       string
		nr         *explain.NextRetry
		want, wide string
	}{
		{"estimate", &explain.NextRetry{Estimate: at(3200 * time.Millisecond), Earliest: at(0), Latest: at(5 * time.Second)}, "3.2s", "3.2s (12:00:03)"},
		{"due", &explain.NextRetry{Estimate: at(-time.Second), Earliest: at(-time.Second)}, "now", "now (12:00:00)"},
		{"waits for an event or the flush", &explain.NextRetry{Latest: at(5*time.Minute + 28*time.Second), Triggers: []string{"NodeAdd"}}, "event or 5m28s", "event or 5m28s (12:05:28)"},
		{"gated", &explain.NextRetry{Triggers: []string{"TargetPodUpdatePodSchedulingGatesEliminated"}, Note: "when the last gate is removed"}, "-", "-"},
		{"none", nil, "-", "-"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := nextTry(tc.nr, now, false); got != tc.want {
				t.Errorf("nextTry = %q, want %q", got, tc.want)
			}
			if got := nextTry(tc.nr, now, true); got != tc.wide {
				t.Errorf("nextTry, wide = %q, want %q", got, tc.wide)
			}
		})
	}
}

// TestExplain_nextTryAndAttemptsColumns: the table has NEXT TRY after
// ATTEMPTS, -o wide its time and the retry window; an estimated count
// shows as ~N, a lower bound as ≥N.
func TestExplain_nextTryAndAttemptsColumns(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	est := now.Add(2 * time.Second)
	most := 40
	l := explain.NewExplanationList([]explain.Explanation{
		{Namespace: "ns", Name: "churned", State: explain.StatePending, Queue: queue.LocationBackoff, Confidence: 0.9, Attempts: 37,
			AttemptsCount: &explain.AttemptsCount{Kind: explain.AttemptsEstimated, Min: 3, Max: &most},
			NextRetry:     &explain.NextRetry{Estimate: &est, Earliest: &now, Latest: &est}},
		{Namespace: "ns", Name: "hidden", State: explain.StatePending, Queue: queue.LocationUnschedulable, Confidence: 0.9, Attempts: 3,
			AttemptsCount: &explain.AttemptsCount{Kind: explain.AttemptsAtLeast, Min: 3}},
	}, nil, nil, now)
	for _, c := range []struct {
		opts TableOptions
		want []string
	}{
		{TableOptions{}, []string{"ATTEMPTS  NEXT TRY  SUMMARY", "~37       2s", "≥3        -"}},
		{TableOptions{Wide: true}, []string{"ATTEMPTS  NEXT TRY", "RETRY WINDOW", "~37       2s (" + est.Local().Format("15:04:05") + ")"}},
	} {
		var b strings.Builder
		if err := PrintExplanations(&b, l, c.opts); err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("wide=%v: table lacks %q:\n%s", c.opts.Wide, w, b.String())
			}
		}
	}
}
