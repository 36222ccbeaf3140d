package metricscrape

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// smallExposition has every family a Snapshot reads, in the shape
// kube-scheduler v1.36 writes them.
const smallExposition = `# HELP kubernetes_build_info [ALPHA] A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, build date, Go version, and compiler from which Kubernetes was built, and platform on which it is running.
# TYPE kubernetes_build_info gauge
kubernetes_build_info{build_date="2026-01-01T00:00:00Z",compiler="gc",git_commit="abc123",git_tree_state="clean",git_version="v1.36.3",go_version="go1.26.8",major="1",minor="36",platform="linux/amd64"} 1
# HELP kubernetes_feature_enabled [BETA] This metric records the data about the stage and enablement of a k8s feature.
# TYPE kubernetes_feature_enabled gauge
kubernetes_feature_enabled{name="SchedulerPopFromBackoffQ",stage="BETA"} 1
kubernetes_feature_enabled{name="SchedulerQueueingHints",stage=""} 1
kubernetes_feature_enabled{name="SchedulerAsyncAPICalls",stage="BETA"} 0
# HELP scheduler_pending_pods [STABLE] Number of pending pods, by the queue type.
# TYPE scheduler_pending_pods gauge
scheduler_pending_pods{queue="active"} 0
scheduler_pending_pods{queue="backoff"} 3
scheduler_pending_pods{queue="gated"} 1
scheduler_pending_pods{queue="unschedulable"} 7
# HELP scheduler_queue_incoming_pods_total [STABLE] Number of pods added to scheduling queues by event and queue type.
# TYPE scheduler_queue_incoming_pods_total counter
scheduler_queue_incoming_pods_total{event="PodAdd",queue="active"} 12
scheduler_queue_incoming_pods_total{event="UnschedulablePodAdd",queue="active"} 20
scheduler_queue_incoming_pods_total{event="ScheduleAttemptFailure",queue="unschedulable"} 9
scheduler_queue_incoming_pods_total{event="NodeAdd",queue="backoff"} 5
scheduler_queue_incoming_pods_total{event="PopFromBackoffQ",queue="active"} 2
# HELP scheduler_schedule_attempts_total [STABLE] Number of attempts to schedule pods, by the result.
# TYPE scheduler_schedule_attempts_total counter
scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 10
scheduler_schedule_attempts_total{profile="default-scheduler",result="unschedulable"} 9
scheduler_schedule_attempts_total{profile="other",result="scheduled"} 2
# HELP scheduler_unschedulable_pods [BETA] The number of unschedulable pods broken down by plugin name.
# TYPE scheduler_unschedulable_pods gauge
scheduler_unschedulable_pods{plugin="NodeResourcesFit",profile="default-scheduler"} 7
# HELP scheduler_pod_scheduling_attempts [STABLE] Number of attempts to successfully schedule a pod.
# TYPE scheduler_pod_scheduling_attempts histogram
scheduler_pod_scheduling_attempts_bucket{le="1"} 8
scheduler_pod_scheduling_attempts_bucket{le="2"} 11
scheduler_pod_scheduling_attempts_bucket{le="4"} 12
scheduler_pod_scheduling_attempts_bucket{le="8"} 12
scheduler_pod_scheduling_attempts_bucket{le="16"} 12
scheduler_pod_scheduling_attempts_bucket{le="+Inf"} 12
scheduler_pod_scheduling_attempts_sum 17
scheduler_pod_scheduling_attempts_count 12
# HELP scheduler_pod_scheduling_sli_duration_seconds [BETA] E2e latency for a pod being scheduled.
# TYPE scheduler_pod_scheduling_sli_duration_seconds histogram
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="1",le="0.01"} 2
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="1",le="0.02"} 8
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="1",le="+Inf"} 8
scheduler_pod_scheduling_sli_duration_seconds_sum{attempts="1"} 0.1
scheduler_pod_scheduling_sli_duration_seconds_count{attempts="1"} 8
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="2",le="0.01"} 0
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="2",le="0.02"} 0
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="2",le="+Inf"} 4
scheduler_pod_scheduling_sli_duration_seconds_sum{attempts="2"} 6
scheduler_pod_scheduling_sli_duration_seconds_count{attempts="2"} 4
# HELP scheduler_pod_scheduled_after_flush_total [ALPHA] Number of pods that were successfully scheduled after being flushed from unschedulablePods due to timeout.
# TYPE scheduler_pod_scheduled_after_flush_total counter
scheduler_pod_scheduled_after_flush_total 1
# HELP scheduler_inflight_events [ALPHA] Number of events currently tracked in the scheduling queue.
# TYPE scheduler_inflight_events gauge
scheduler_inflight_events{event="PodPopped"} 1
# HELP workqueue_depth [ALPHA] Current depth of workqueue
# TYPE workqueue_depth gauge
workqueue_depth{name="DynamicServingCertificateController"} 0
`

func TestParseText(t *testing.T) {
	s, err := ParseText("test", []byte(smallExposition))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]float64{"active": 0, "backoff": 3, "gated": 1, "unschedulable": 7}, s.Pending); diff != "" {
		t.Errorf("Pending (-want, +got):\n%s", diff)
	}
	if got, want := s.PendingTotal(), 11.0; got != want {
		t.Errorf("PendingTotal() = %v, want %v", got, want)
	}
	wantIncoming := map[QueueEvent]float64{
		{QueueActive, "PodAdd"}:                           12,
		{QueueActive, "UnschedulablePodAdd"}:              20,
		{QueueUnschedulable, EventScheduleAttemptFailure}: 9,
		{QueueBackoff, "NodeAdd"}:                         5,
		{QueueActive, EventPopFromBackoffQ}:               2,
	}
	if diff := cmp.Diff(wantIncoming, s.Incoming); diff != "" {
		t.Errorf("Incoming (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]float64{"scheduled": 12, "unschedulable": 9}, s.Attempts); diff != "" {
		t.Errorf("Attempts summed over profiles (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"default-scheduler", "other"}, s.Profiles); diff != "" {
		t.Errorf("Profiles (-want, +got):\n%s", diff)
	}
	wantGates := map[string]FeatureGate{
		GateSchedulerPopFromBackoffQ: {Enabled: true, Stage: "BETA"},
		GateSchedulerQueueingHints:   {Enabled: true},
		GateSchedulerAsyncAPICalls:   {Enabled: false, Stage: "BETA"},
	}
	if diff := cmp.Diff(wantGates, s.FeatureGates); diff != "" {
		t.Errorf("FeatureGates (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(BuildInfo{GitVersion: "v1.36.3", GitCommit: "abc123", GoVersion: "go1.26.8", Platform: "linux/amd64"}, s.Build); diff != "" {
		t.Errorf("Build (-want, +got):\n%s", diff)
	}
	if s.ScheduledAfterFlush == nil || *s.ScheduledAfterFlush != 1 {
		t.Errorf("ScheduledAfterFlush = %v, want 1", s.ScheduledAfterFlush)
	}
	if s.Leader != nil {
		t.Errorf("Leader = %v, want nil (not reported)", *s.Leader)
	}
	if got := s.InFlightEvents["PodPopped"]; got != 1 {
		t.Errorf("InFlightEvents[PodPopped] = %v, want 1", got)
	}
	if got := s.UnschedulableByPlugin["NodeResourcesFit"]; got != 7 {
		t.Errorf("UnschedulableByPlugin[NodeResourcesFit] = %v, want 7", got)
	}
	wantAttempts := Histogram{
		Buckets: []Bucket{{1, 8}, {2, 11}, {4, 12}, {8, 12}, {16, 12}, {math.Inf(1), 12}},
		Count:   12, Sum: 17,
	}
	if diff := cmp.Diff(wantAttempts, s.PodSchedulingAttempts); diff != "" {
		t.Errorf("PodSchedulingAttempts (-want, +got):\n%s", diff)
	}
	if got := len(s.SLI); got != 2 {
		t.Fatalf("SLI has %d attempt labels, want 2", got)
	}
	if got := s.SLI["2"].Count; got != 4 {
		t.Errorf("SLI[2].Count = %v, want 4", got)
	}
	keys := s.IncomingKeys()
	if keys[0].Queue != QueueActive || keys[len(keys)-1].Queue != QueueUnschedulable {
		t.Errorf("IncomingKeys() not in queue order: %v", keys)
	}
}

func TestParseText_errors(t *testing.T) {
	tests := []struct {
		name  string
		input string
		check func(t *testing.T, err error)
	}{
		{
			name:  "malformed line is named",
			input: "# TYPE scheduler_pending_pods gauge\nscheduler_pending_pods{queue=\"active\"} 1\nscheduler_pending_pods{queue=\"backoff\" 2\n",
			check: func(t *testing.T, err error) {
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("err = %v, want a *ParseError", err)
				}
				if pe.Line != 3 || !strings.Contains(pe.Text, `queue="backoff" 2`) {
					t.Errorf("ParseError = %+v, want line 3 with its text", pe)
				}
				if !strings.HasPrefix(err.Error(), "src:3: malformed metrics exposition") {
					t.Errorf("Error() = %q", err)
				}
			},
		},
		{
			name:  "a 403 body",
			input: "Forbidden (user=system:anonymous, verb=get, resource=, subresource=)\n",
			check: func(t *testing.T, err error) {
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Line != 1 {
					t.Fatalf("err = %v, want a *ParseError on line 1", err)
				}
			},
		},
		{
			name:  "kube-apiserver metrics",
			input: "# TYPE apiserver_request_total counter\napiserver_request_total{code=\"200\"} 5\n# TYPE kubernetes_build_info gauge\nkubernetes_build_info{git_version=\"v1.36.3\"} 1\n",
			check: func(t *testing.T, err error) {
				var ns *NotSchedulerError
				if !errors.As(err, &ns) {
					t.Fatalf("err = %v, want a *NotSchedulerError", err)
				}
				if ns.Looks != "kube-apiserver" || ns.Families != 2 {
					t.Errorf("NotSchedulerError = %+v", ns)
				}
				if !strings.Contains(err.Error(), "not a kube-scheduler") {
					t.Errorf("Error() = %q", err)
				}
			},
		},
		{
			name:  "empty",
			input: "",
			check: func(t *testing.T, err error) {
				var ns *NotSchedulerError
				if !errors.As(err, &ns) || ns.Families != 0 {
					t.Fatalf("err = %v, want a *NotSchedulerError with no families", err)
				}
			},
		},
		{
			name:  "negative counter",
			input: "# TYPE scheduler_pending_pods gauge\nscheduler_pending_pods{queue=\"active\"} 0\n# TYPE scheduler_schedule_attempts_total counter\nscheduler_schedule_attempts_total{result=\"scheduled\"} -1\n",
			check: func(t *testing.T, err error) {
				if err == nil || !strings.Contains(err.Error(), "scheduler_schedule_attempts_total") {
					t.Fatalf("err = %v, want one naming the series", err)
				}
			},
		},
		{
			name:  "NaN gauge",
			input: "# TYPE scheduler_pending_pods gauge\nscheduler_pending_pods{queue=\"active\"} NaN\n",
			check: func(t *testing.T, err error) {
				if err == nil || !strings.HasPrefix(err.Error(), "src: ") || !strings.Contains(err.Error(), "NaN") {
					t.Fatalf("err = %v, want one about NaN naming the source", err)
				}
			},
		},
		{
			name:  "a value beyond any count",
			input: "# TYPE scheduler_pending_pods gauge\nscheduler_pending_pods{queue=\"active\"} 1e20\n",
			check: func(t *testing.T, err error) {
				if err == nil || !strings.HasPrefix(err.Error(), "src: ") || !strings.Contains(err.Error(), `scheduler_pending_pods{queue="active"} has value 1e+20, beyond any count`) {
					t.Fatalf("err = %v, want one naming the source and the series", err)
				}
			},
		},
		{
			name:  "a series given twice",
			input: "# TYPE scheduler_pending_pods gauge\nscheduler_pending_pods{queue=\"active\"} 1\nscheduler_pending_pods{queue=\"active\"} 2\n",
			check: func(t *testing.T, err error) {
				if err == nil || !strings.HasPrefix(err.Error(), "src: ") || !strings.Contains(err.Error(), `scheduler_pending_pods{queue="active"} is given twice`) {
					t.Fatalf("err = %v, want one naming the source and the series", err)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseText("src", []byte(tc.input))
			tc.check(t, err)
		})
	}
}

func TestParseText_warnings(t *testing.T) {
	// A leaking gauge is an upstream bug worth showing, not a parse error;
	// a queue the scheduler does not know is counted nowhere. Both are
	// kept, with a warning naming the source and the series.
	tests := []struct {
		name, input, want string
		check             func(t *testing.T, s *Snapshot)
	}{
		{
			name:  "negative gauge",
			input: "# TYPE scheduler_pending_pods gauge\nscheduler_pending_pods{queue=\"gated\"} -1\n",
			want:  `src: scheduler_pending_pods{queue="gated"} has value -1: a count below zero`,
			check: func(t *testing.T, s *Snapshot) {
				if s.Pending[QueueGated] != -1 {
					t.Errorf("Pending[gated] = %v, want -1", s.Pending[QueueGated])
				}
			},
		},
		{
			name:  "unknown queue",
			input: "# TYPE scheduler_pending_pods gauge\nscheduler_pending_pods{queue=\"Active\"} 4\n",
			want:  `src: scheduler_pending_pods{queue="Active"}: queue "Active" is not one the scheduler reports (active, backoff, unschedulable, gated, incomplete, pending)`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseText("src", []byte(tc.input))
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Warnings) != 1 || !strings.HasPrefix(s.Warnings[0], tc.want) {
				t.Errorf("Warnings = %q, want one starting %q", s.Warnings, tc.want)
			}
			if tc.check != nil {
				tc.check(t, s)
			}
		})
	}
}

func TestHistogram_Quantile(t *testing.T) {
	h := Histogram{Buckets: []Bucket{{0.01, 2}, {0.02, 8}, {0.04, 10}, {math.Inf(1), 10}}, Count: 10, Sum: 0.2}
	tests := []struct {
		q    float64
		want float64
	}{
		{0, 0},
		{0.2, 0.01},
		{0.5, 0.015},
		{0.9, 0.03},
		{1, 0.04},
	}
	for _, tc := range tests {
		if got := h.Quantile(tc.q); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	inInf := Histogram{Buckets: []Bucket{{1, 0}, {2, 1}, {math.Inf(1), 10}}}
	if got := inInf.Quantile(0.99); got != 2 {
		t.Errorf("Quantile in the +Inf bucket = %v, want the largest finite bound 2", got)
	}
	if got := (Histogram{}).Quantile(0.5); !math.IsNaN(got) {
		t.Errorf("empty Quantile = %v, want NaN", got)
	}
	if got := h.Mean(); math.Abs(got-0.02) > 1e-12 {
		t.Errorf("Mean() = %v, want 0.02", got)
	}
}

func TestShorten(t *testing.T) {
	tests := []struct{ in, want string }{
		{"bb\n", "bb"},
		{"bb\r\n", "bb"},
		{strings.Repeat("x", 200) + "\n", strings.Repeat("x", maxErrorLineBytes) + "…"},
		// Cut at a character's start, not inside one.
		{strings.Repeat("x", maxErrorLineBytes-1) + "é", strings.Repeat("x", maxErrorLineBytes-1) + "…"},
	}
	for _, tc := range tests {
		if got := shorten([]byte(tc.in)); got != tc.want {
			t.Errorf("shorten(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
