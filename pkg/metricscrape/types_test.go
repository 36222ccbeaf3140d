package metricscrape

import (
	"strings"
	"testing"
)

// TestParseText_mistyped reads expositions whose # TYPE contradicts a
// scheduler metric's type, and one with CRLF line endings: each is an error
// that names the series and the line, or the line endings.
func TestParseText_mistyped(t *testing.T) {
	const head = "# HELP scheduler_pending_pods Number of pending pods, by the queue type.\n"
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"a gauge typed histogram", head + "# TYPE scheduler_pending_pods histogram\nscheduler_pending_pods{queue=\"active\"} 3\n",
			[]string{"f:2:", "# TYPE scheduler_pending_pods histogram: kube-scheduler's scheduler_pending_pods is a gauge"}},
		{"a gauge typed counter", head + "# TYPE scheduler_pending_pods counter\nscheduler_pending_pods{queue=\"active\"} 3\n",
			[]string{"f:2:", "scheduler_pending_pods is a gauge"}},
		{"a counter typed summary", head + "# TYPE scheduler_pending_pods gauge\nscheduler_pending_pods{queue=\"active\"} 3\n" +
			"# TYPE scheduler_schedule_attempts_total summary\nscheduler_schedule_attempts_total{result=\"scheduled\"} 1\n",
			[]string{"f:4:", "kube-scheduler's scheduler_schedule_attempts_total is a counter"}},
		{"CRLF line endings", strings.ReplaceAll(head+"# TYPE scheduler_pending_pods gauge\nscheduler_pending_pods{queue=\"active\"} 3\n", "\n", "\r\n"),
			[]string{"f:2:", "CRLF (Windows) line endings", "dos2unix"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap, err := ParseText("f", []byte(tc.text))
			if err == nil {
				t.Fatalf("no error; pending %v", snap.Pending)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	// Untyped, as federation writes it, is read.
	snap, err := ParseText("f", []byte(head+"# TYPE scheduler_pending_pods untyped\nscheduler_pending_pods{queue=\"active\"} 3\n"))
	if err != nil || snap.Pending["active"] != 3 {
		t.Errorf("untyped: %v, %v", snap, err)
	}
}
