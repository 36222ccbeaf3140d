package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/clock"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/status"
)

const recordedDir = "../../testdata/metrics"

func recorded(t *testing.T, name string, at time.Time) *metricscrape.Snapshot {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(recordedDir, name))
	if err != nil {
		t.Fatal(err)
	}
	s, err := metricscrape.ParseText(name, data)
	if err != nil {
		t.Fatal(err)
	}
	s.Time = at
	s.Origin = metricscrape.Origin{Kind: metricscrape.OriginFile, Address: name}
	return s
}

// autoClock is a clock whose After fires at once and moves time on.
type autoClock struct {
	clock.RealClock
	mu  sync.Mutex
	now time.Time
}

func (c *autoClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *autoClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// fakeSource hands out snapshots in turn, stamped with the clock's time;
// an error in the list is returned instead. After the list it calls done.
type fakeSource struct {
	clock *autoClock
	steps []any // *metricscrape.Snapshot or error
	done  func()
	calls int
}

func (s *fakeSource) Scrape(ctx context.Context) (*metricscrape.Snapshot, error) {
	if s.calls >= len(s.steps) {
		if s.done != nil {
			s.done()
		}
		return nil, ctx.Err()
	}
	step := s.steps[s.calls]
	s.calls++
	if err, ok := step.(error); ok {
		return nil, err
	}
	snap := *step.(*metricscrape.Snapshot)
	snap.Time = s.clock.Now()
	return &snap, nil
}

func (s *fakeSource) String() string { return "fake" }

func newTestStatusOptions(src metricscrape.Source, clk clock.Clock) (*StatusOptions, *bytes.Buffer) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	getter := genericclioptions.NewTestConfigFlags().WithClientConfig(clientcmd.NewDefaultClientConfig(*clientcmdapi.NewConfig(), &clientcmd.ConfigOverrides{}))
	o := NewStatusOptions(getter, streams)
	o.source = src
	o.clock = clk
	o.timeout = time.Second
	return o, out
}

func TestStatusOptions_Validate(t *testing.T) {
	tests := []struct {
		name    string
		set     func(o *StatusOptions)
		wantErr string
	}{
		{name: "defaults", set: func(o *StatusOptions) {}},
		{name: "url and file", set: func(o *StatusOptions) { o.MetricsURL, o.MetricsFile = "http://x", "f" }, wantErr: "give one of them"},
		{name: "url and prometheus", set: func(o *StatusOptions) { o.MetricsURL, o.PrometheusURL = "http://x", "http://p" }, wantErr: "give one of them"},
		{name: "selector without prometheus", set: func(o *StatusOptions) { o.PrometheusSelector = `job="x"` }, wantErr: "--prometheus-selector needs --prometheus-url"},
		{name: "zero interval", set: func(o *StatusOptions) { o.Interval = 0 }, wantErr: "--interval=0s"},
		{name: "1ns interval", set: func(o *StatusOptions) { o.Interval = time.Nanosecond }, wantErr: "--interval=1ns: want 500ms to 1h0m0s"},
		{name: "1000000h interval", set: func(o *StatusOptions) { o.Interval = 1000000 * time.Hour }, wantErr: "--interval=1000000h0m0s: want 500ms to 1h0m0s"},
		{name: "an hour", set: func(o *StatusOptions) { o.Interval = time.Hour }},
		{name: "header that does not parse", set: func(o *StatusOptions) { _ = o.PrometheusHeaders.Set("no colon") }, wantErr: "--prometheus-header #1: want 'Name: value'"},
		{name: "token file without prometheus", set: func(o *StatusOptions) { o.PrometheusBearerTokenFile = "t" }, wantErr: "--prometheus-bearer-token-file needs --prometheus-url"},
		{name: "header without prometheus", set: func(o *StatusOptions) { _ = o.PrometheusHeaders.Set("X-Scope-OrgID: a") }, wantErr: "--prometheus-header needs --prometheus-url"},
		{name: "CA without prometheus", set: func(o *StatusOptions) { o.PrometheusCertificateAuthority = "ca" }, wantErr: "--prometheus-certificate-authority needs --prometheus-url"},
		{name: "watch a file", set: func(o *StatusOptions) { o.Watch, o.MetricsFile = true, "f" }, wantErr: "--watch and --metrics-file"},
		{name: "-o name", set: func(o *StatusOptions) { *o.printFlags.OutputFormat = "name" }, wantErr: "-o name: status describes the scheduler's queue, which has no object name; status takes wide, json, yaml"},
		{name: "-o bogus", set: func(o *StatusOptions) { *o.printFlags.OutputFormat = "bogus" }, wantErr: "-o bogus: unknown output format; status takes wide, json, yaml"},
		{name: "-o wide", set: func(o *StatusOptions) { *o.printFlags.OutputFormat = "wide" }},
		{name: "-o json", set: func(o *StatusOptions) { *o.printFlags.OutputFormat = "json" }},
		{name: "scheduler namespace", set: func(o *StatusOptions) { o.SchedulerName, o.SchedulerNamespace = "my-scheduler", "scheduler-plugins" }},
		{name: "scheduler namespace not a name", set: func(o *StatusOptions) { o.SchedulerNamespace = "Scheduler_Plugins" }, wantErr: "--scheduler-namespace=Scheduler_Plugins: not a namespace name"},
		{name: "scheduler namespace with a url", set: func(o *StatusOptions) { o.MetricsURL, o.SchedulerNamespace = "http://x", "scheduler-plugins" }, wantErr: "--scheduler-namespace says where discovery looks; --metrics-url names the source already"},
		{name: "-o jsonpath", set: func(o *StatusOptions) { *o.printFlags.OutputFormat = "jsonpath={.pending.total}" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, _ := newTestStatusOptions(nil, nil)
			tc.set(o)
			err := o.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Validate() = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestStatus_outputFormats: -h lists exactly the -o values that work.
func TestStatus_outputFormats(t *testing.T) {
	cmd := NewCmdStatus(genericclioptions.NewTestConfigFlags(), genericiooptions.NewTestIOStreamsDiscard())
	usage := cmd.Flags().Lookup("output").Usage
	listed := strings.Split(strings.TrimSuffix(strings.TrimPrefix(usage, "Output format. One of: ("), ")"), ", ")
	if len(listed) < 3 || listed[0] != "wide" || strings.Contains(usage, "name") {
		t.Fatalf("-o help %q, want wide and the printers, without name", usage)
	}
	for _, f := range listed {
		o, _ := newTestStatusOptions(nil, nil)
		*o.printFlags.OutputFormat = f
		if err := o.Validate(); err != nil && strings.Contains(err.Error(), "unknown output format") {
			t.Errorf("-o %s is listed in -h but refused: %v", f, err)
		}
	}
}

func TestNewSchedulerStatus_recorded(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	st, err := status.NewSchedulerStatus(recorded(t, "v1.36-parked.prom", t0), recorded(t, "v1.36-settled.prom", t0.Add(4*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(status.PendingPods{Active: 0, Backoff: 5, Unschedulable: 6, Gated: 3, Total: 14}, st.Pending); diff != "" {
		t.Errorf("Pending (-want, +got):\n%s", diff)
	}
	if st.Scheduler.Version != "v1.36.3" || st.RateWindow.Duration != 4*time.Second {
		t.Errorf("Version %q, window %v", st.Scheduler.Version, st.RateWindow)
	}
	if st.FeatureGates[0] != (status.FeatureGateStatus{Name: "SchedulerPopFromBackoffQ", Enabled: true, Stage: "BETA"}) {
		t.Errorf("first gate = %+v", st.FeatureGates[0])
	}
	// Busiest first: PopFromBackoffQ and ScheduleAttemptFailure moved 20 and
	// 18 pods in 4 s.
	var top []string
	for _, in := range st.Incoming[:3] {
		top = append(top, fmt.Sprintf("%s/%s=%v", in.Queue, in.Event, *in.PerSecond))
	}
	if diff := cmp.Diff([]string{"activeQ/PopFromBackoffQ=5", "unschedulablePods/ScheduleAttemptFailure=4.5", "backoffQ/AssignedPodDelete=3"}, top); diff != "" {
		t.Errorf("busiest incoming (-want, +got):\n%s", diff)
	}
	if a := st.Attempts[0]; a.Result != "scheduled" || a.Total != 22 || *a.PerSecond != 0.5 {
		t.Errorf("attempts[0] = %+v", a)
	}
	if st.Scheduled.Pods != 22 || st.Scheduled.SLIp50 == nil || st.Scheduled.MeanAttempts < 1 {
		t.Errorf("Scheduled = %+v", st.Scheduled)
	}
	names := signalNames(st.Signals)
	if diff := cmp.Diff([]string{status.SignalBackoffQWaitsWhileActiveQEmpty}, names); diff != "" {
		t.Errorf("signals (-want, +got):\n%s", diff)
	}
	if st.Signals[0].Severity != status.SeverityWarning || !strings.Contains(st.Signals[0].Message, "error backoffs") {
		t.Errorf("signal = %+v: backoffQ held pods in both scrapes with the gate on", st.Signals[0])
	}
}

func signalNames(sigs []status.Signal) []string {
	var out []string
	for _, s := range sigs {
		out = append(out, s.Name)
	}
	return out
}

func TestSignals(t *testing.T) {
	t0 := time.Unix(0, 0)
	type queues struct{ active, backoff, unsched float64 }
	snap := func(at time.Duration, q queues, pfb *bool, pops, scheduled, failed float64) *metricscrape.Snapshot {
		s := &metricscrape.Snapshot{
			Time:         t0.Add(at),
			Pending:      map[string]float64{"active": q.active, "backoff": q.backoff, "unschedulable": q.unsched},
			Incoming:     map[metricscrape.QueueEvent]float64{{Queue: "active", Event: "PopFromBackoffQ"}: pops},
			Attempts:     map[string]float64{"scheduled": scheduled, "unschedulable": failed},
			FeatureGates: map[string]metricscrape.FeatureGate{},
		}
		if pfb != nil {
			s.FeatureGates["SchedulerPopFromBackoffQ"] = metricscrape.FeatureGate{Enabled: *pfb}
		}
		return s
	}
	on, off := true, false
	notLeader := snap(2*time.Second, queues{}, &on, 0, 0, 0)
	notLeader.Leader = &off
	tests := []struct {
		name      string
		prev, cur *metricscrape.Snapshot
		want      map[string]string // name → severity
		wantText  string
	}{
		{
			name: "quiet and empty",
			prev: snap(0, queues{}, &on, 0, 10, 0), cur: snap(2*time.Second, queues{}, &on, 0, 10, 0),
			want: map[string]string{},
		},
		{
			name: "backoffQ waits once with the gate on",
			prev: snap(0, queues{1, 0, 0}, &on, 0, 10, 0), cur: snap(2*time.Second, queues{0, 4, 0}, &on, 0, 12, 0),
			want: map[string]string{status.SignalBackoffQWaitsWhileActiveQEmpty: status.SeverityInfo},
		},
		{
			name: "backoffQ waits in both scrapes with the gate off",
			prev: snap(0, queues{0, 4, 0}, &off, 0, 10, 0), cur: snap(2*time.Second, queues{0, 4, 0}, &off, 0, 12, 0),
			want:     map[string]string{status.SignalBackoffQWaitsWhileActiveQEmpty: status.SeverityWarning},
			wantText: "wait out their backoff",
		},
		{
			name: "gate not reported",
			prev: nil, cur: snap(0, queues{0, 4, 0}, nil, 0, 10, 0),
			want: map[string]string{status.SignalBackoffQWaitsWhileActiveQEmpty: status.SeverityInfo},
		},
		{
			name: "PopFromBackoffQ rises while activeQ holds pods",
			prev: snap(0, queues{3, 0, 0}, &on, 10, 10, 0), cur: snap(2*time.Second, queues{3, 0, 0}, &on, 16, 20, 0),
			want:     map[string]string{status.SignalPopFromBackoffQWhileActiveQBusy: status.SeverityInfo},
			wantText: "3/s popped from backoffQ",
		},
		{
			name: "nothing scheduled, every attempt failed",
			prev: snap(0, queues{0, 0, 8}, &on, 0, 10, 0), cur: snap(2*time.Second, queues{0, 0, 8}, &on, 0, 10, 8),
			want:     map[string]string{status.SignalNoPodScheduled: status.SeverityWarning},
			wantText: "every attempt failed (4/s unschedulable, 0/s error)",
		},
		{
			name: "no attempt although activeQ holds pods",
			prev: snap(0, queues{5, 0, 0}, &on, 0, 10, 0), cur: snap(2*time.Second, queues{5, 0, 0}, &on, 0, 10, 0),
			want:     map[string]string{status.SignalNoPodScheduled: status.SeverityWarning},
			wantText: "is this scheduler the leader",
		},
		{
			name: "parked pods wait for an event",
			prev: snap(0, queues{0, 0, 8}, &on, 0, 10, 0), cur: snap(2*time.Second, queues{0, 0, 8}, &on, 0, 10, 0),
			want: map[string]string{status.SignalNoPodScheduled: status.SeverityInfo},
		},
		{
			name: "a file has no rates",
			prev: nil, cur: snap(0, queues{0, 0, 8}, &on, 0, 10, 0),
			want: map[string]string{},
		},
		{
			name: "not the leader, counters reset",
			prev: snap(0, queues{}, &on, 0, 10, 0), cur: notLeader,
			want: map[string]string{status.SignalNotLeader: status.SeverityWarning, status.SignalRatesReset: status.SeverityInfo},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := status.NewSchedulerStatus(tc.prev, tc.cur)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			var text string
			for _, s := range st.Signals {
				got[s.Name] = s.Severity
				text += s.Message + "\n"
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("signals (-want, +got):\n%s\n%s", diff, text)
			}
			if !strings.Contains(text, tc.wantText) {
				t.Errorf("messages %q do not say %q", text, tc.wantText)
			}
		})
	}
}

func TestPrintStatusTable(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	st, err := status.NewSchedulerStatus(recorded(t, "v1.36-parked.prom", t0), recorded(t, "v1.36-settled.prom", t0.Add(4*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := PrintStatusTable(&b, st); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"SCHEDULER  kube-scheduler v1.36.3 (go1.26.8, linux/amd64, queue model v1.36)",
		"GATES      SchedulerPopFromBackoffQ=on (BETA)  SchedulerQueueingHints=on  SchedulerAsyncAPICalls=off (BETA)",
		"PENDING    activeQ 0  backoffQ 5  unschedulablePods 6  gated 3  total 14",
		"INCOMING (per second over the last 4s)",
		"activeQ            PopFromBackoffQ         5       68",
		"ATTEMPTS",
		"scheduled      0.5     22",
		"22 pods scheduled; queue entry to bound p50",
		"! BackoffQWaitsWhileActiveQEmpty: activeQ is empty while backoffQ holds 5 pods",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}

	// -o wide: every series, quiet ones too, and the scheduler's commit.
	var wide bytes.Buffer
	if err := printStatusTable(&wide, st, tableOptions{wide: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "quiet series not shown; -o wide lists them all") || strings.Contains(wide.String(), "quiet series") {
		t.Errorf("the table hides no quiet series, or the wide one does:\n%s\n%s", out, wide.String())
	}
	if got, want := strings.Count(wide.String(), "\n"), strings.Count(out, "\n"); got <= want {
		t.Errorf("wide table has %d lines, the table %d: want more", got, want)
	}
	if !strings.Contains(wide.String(), "linux/amd64, commit 0000000000000000000000000000000000000000, queue model v1.36") {
		t.Errorf("wide table lacks the commit:\n%s", wide.String())
	}

	// One snapshot: totals, no rates, no rate-based signals.
	st, err = status.NewSchedulerStatus(nil, recorded(t, "v1.36-idle.prom", t0))
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := PrintStatusTable(&b, st); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"INCOMING (totals only: one snapshot has no rates)", "-      -      -       0", "0 pods scheduled\n", "SIGNALS\n  none"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("idle table lacks %q:\n%s", want, b.String())
		}
	}
}

func TestStatusOptions_Run(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	parked, settled := recorded(t, "v1.36-parked.prom", t0), recorded(t, "v1.36-settled.prom", t0)

	t.Run("two scrapes an interval apart", func(t *testing.T) {
		clk := &autoClock{now: t0}
		o, out := newTestStatusOptions(&fakeSource{clock: clk, steps: []any{parked, settled}}, clk)
		o.Interval = 4 * time.Second
		if err := o.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "per second over the last 4s") || strings.Contains(out.String(), "Every") {
			t.Errorf("output:\n%s", out)
		}
	})

	t.Run("json", func(t *testing.T) {
		clk := &autoClock{now: t0}
		o, out := newTestStatusOptions(&fakeSource{clock: clk, steps: []any{parked, settled}}, clk)
		*o.printFlags.OutputFormat = "json"
		if err := o.Complete(nil); err != nil {
			t.Fatal(err)
		}
		if err := o.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if got["kind"] != "SchedulerStatus" || got["apiVersion"] != "schedq.kubectl-schedq.io/v1alpha1" || got["rateWindow"] != "2s" {
			t.Errorf("json = %s", out)
		}
		pending := got["pending"].(map[string]any)
		if pending["backoffQ"] != 5.0 || pending["total"] != 14.0 {
			t.Errorf("pending = %v", pending)
		}
	})

	t.Run("watch redraws until the context ends, and survives a failed scrape", func(t *testing.T) {
		clk := &autoClock{now: t0}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		src := &fakeSource{clock: clk, steps: []any{parked, settled, errors.New("connection refused"), settled}, done: cancel}
		o, out := newTestStatusOptions(src, clk)
		o.Watch = true
		if err := o.Run(ctx); err != nil {
			t.Fatal(err)
		}
		frames := strings.Count(out.String(), "Every 2s: kubectl schedq status")
		if frames != 3 {
			t.Errorf("%d frames, want 3 (first, failed, recovered):\n%s", frames, out)
		}
		if !strings.Contains(out.String(), "error: connection refused\n(showing the last good scrape; retrying)") {
			t.Errorf("the failed frame does not say so:\n%s", out)
		}
	})

	t.Run("watch on a terminal redraws in place", func(t *testing.T) {
		clk := &autoClock{now: t0}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		o, out := newTestStatusOptions(&fakeSource{clock: clk, steps: []any{parked, settled, settled}, done: cancel}, clk)
		o.Watch, o.terminal = true, true
		if err := o.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(out.String(), "\x1b[H"); n != 2 {
			t.Errorf("%d cursor-home sequences, want one per frame (2)", n)
		}
		if strings.Contains(out.String(), "\x1b[2J") {
			t.Error("full-screen clear: it flickers")
		}
		if !strings.HasSuffix(out.String(), "\x1b[J") {
			t.Error("the rest of the screen is not cleared after a frame")
		}
	})

	t.Run("first scrape fails: the error, with the remedy", func(t *testing.T) {
		clk := &autoClock{now: t0}
		o, _ := newTestStatusOptions(&fakeSource{clock: clk, steps: []any{metricscrape.ErrNoSchedulerPod}}, clk)
		err := o.Run(context.Background())
		if err == nil || !strings.Contains(err.Error(), "--prometheus-url") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestStatusOptions_explain(t *testing.T) {
	o, _ := newTestStatusOptions(nil, nil)
	o.timeout = 5 * time.Second
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{
			name: "403 names the identity and prints the RBAC",
			err:  &metricscrape.ForbiddenError{Target: "https://s/metrics", Identity: &metricscrape.Identity{Username: "alice", Groups: []string{"dev"}}},
			want: []string{`https://s/metrics: 403 Forbidden: user "alice" may not get /metrics`, "let alice (groups dev) read", "\nkubectl apply -f - <<'EOF'\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\n", `- nonResourceURLs: ["/metrics"]`, "\n---\n", "  name: \"alice\"\nEOF\n", "--metrics-file"},
		},
		{
			name: "port-forward 403",
			err:  &metricscrape.PortForwardForbiddenError{Step: "listing", Err: errors.New("forbidden")},
			want: []string{"listing: forbidden", "pods/portforward", "namespace: kube-system"},
		},
		{
			name: "timeout",
			err:  &metricscrape.TransportError{Kind: metricscrape.Timeout, Target: "https://s/metrics", Err: context.DeadlineExceeded},
			want: []string{"reading the scheduler's metrics from https://s/metrics: no answer within 5s (wait longer with --request-timeout"},
		},
		{
			name: "a TLS handshake that never completes",
			err:  &metricscrape.TransportError{Kind: metricscrape.Timeout, Target: "https://s/metrics", Err: &url.Error{Op: "Get", URL: "https://s/metrics", Err: errors.New("net/http: TLS handshake timeout")}},
			want: []string{"reading the scheduler's metrics from https://s/metrics: the TLS handshake did not complete within 10s", "which --request-timeout does not change"},
		},
		{
			name: "the API server does not answer on the way to the scheduler",
			err:  &metricscrape.APIStepError{Step: "listing kube-scheduler pods in kube-system", Err: context.DeadlineExceeded},
			want: []string{"finding the scheduler: listing kube-scheduler pods in kube-system (API server): no answer within 5s"},
		},
		{
			name: "tls",
			err:  &metricscrape.TransportError{Kind: metricscrape.TLSFailure, Target: "https://s/metrics", Err: errors.New("x509: certificate signed by unknown authority")},
			want: []string{"x509", "--certificate-authority", "--insecure-skip-tls-verify"},
		},
		{
			name: "no scheduler found, no platform recognised",
			err:  &metricscrape.NotFoundError{Tried: []metricscrape.Attempt{{Platform: "kubeadm", Evidence: "no pod component=kube-scheduler in kube-system"}}},
			want: []string{"no kube-scheduler found (kubeadm: no pod component=kube-scheduler in kube-system)", "--metrics-url URL", "--prometheus-url URL"},
		},
		{
			name: "no scheduler found on a managed cluster",
			err: &metricscrape.NotFoundError{Unreachable: &metricscrape.UnreachableError{Platform: "GKE", Evidence: "server version v1.33.4-gke.1245000",
				Why: "no scheduler pod: GKE runs kube-scheduler out of sight", Remedy: "use --prometheus-url with its PromQL endpoint"}},
			want: []string{"looks like GKE (server version v1.33.4-gke.1245000)", "--prometheus-url"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := o.withRemedy(tc.err).Error()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("message lacks %q:\n%s", w, got)
				}
			}
			if !errors.Is(o.withRemedy(tc.err), tc.err) {
				t.Error("the cause is not wrapped")
			}
			// What is between the heredoc markers applies as it is.
			if _, doc, ok := strings.Cut(got, "<<'EOF'\n"); ok {
				doc, _, _ = strings.Cut(doc, "EOF\n")
				for _, part := range strings.Split(doc, "\n---\n") {
					var obj map[string]any
					if err := yaml.UnmarshalStrict([]byte(part), &obj); err != nil || obj["kind"] == nil || obj["metadata"] == nil {
						t.Errorf("document does not decode (%v):\n%s", err, part)
					}
				}
			}
		})
	}
}

func TestNewCmdStatus(t *testing.T) {
	file := filepath.Join(recordedDir, "v1.36-settled.prom")
	settled, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		stdin   []byte
		check   func(t *testing.T, out string)
		wantErr string
	}{
		{
			name: "table from a file",
			args: []string{"status", "--metrics-file", file},
			check: func(t *testing.T, out string) {
				if !strings.Contains(out, "PENDING    activeQ 0  backoffQ 5  unschedulablePods 6  gated 3  total 14") {
					t.Errorf("output:\n%s", out)
				}
			},
		},
		{
			name: "yaml",
			args: []string{"status", "--metrics-file", file, "-o", "yaml"},
			check: func(t *testing.T, out string) {
				var st status.SchedulerStatus
				if err := yaml.UnmarshalStrict([]byte(out), &st); err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				if st.Pending.Total != 14 || st.Source.Kind != metricscrape.OriginFile || st.RateWindow != nil {
					t.Errorf("status = %+v", st)
				}
			},
		},
		{
			name: "jsonpath",
			args: []string{"status", "--metrics-file", file, "-o", "jsonpath={.pending.unschedulablePods}"},
			check: func(t *testing.T, out string) {
				if out != "6" {
					t.Errorf("output = %q, want 6", out)
				}
			},
		},
		{name: "malformed file", args: []string{"status", "--metrics-file", "status_test.go"}, wantErr: "status_test.go:1: malformed metrics exposition"},
		{name: "two sources", args: []string{"status", "--metrics-file", file, "--metrics-url", "http://x"}, wantErr: "give one of them"},
		{name: "watch a file", args: []string{"status", "--metrics-file", file, "-w"}, wantErr: "--watch and --metrics-file"},
		{
			name:  "--metrics-file - reads stdin",
			args:  []string{"status", "--metrics-file", "-", "-o", "jsonpath={.source.address} {.pending.total}"},
			stdin: settled,
			check: func(t *testing.T, out string) {
				if out != "stdin 14" {
					t.Errorf("output = %q, want %q", out, "stdin 14")
				}
			},
		},
		{name: "--metrics-file - malformed", args: []string{"status", "--metrics-file", "-"}, stdin: []byte("not metrics\n"), wantErr: "stdin:1: malformed metrics exposition"},
		{name: "--request-timeout abc with a file", args: []string{"status", "--metrics-file", file, "--request-timeout", "abc"}, wantErr: "--request-timeout=abc: want a non-negative duration"},
		{name: "--interval 1ns", args: []string{"status", "--metrics-file", file, "--interval", "1ns"}, wantErr: "--interval=1ns: want 500ms to 1h0m0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := runSchedq(tc.stdin, tc.args...)
			if wantError(t, err, tc.wantErr) {
				return
			}
			tc.check(t, out.String())
		})
	}
}

func TestStatusOptions_Complete_requestTimeout(t *testing.T) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443"}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "c"
	for _, tc := range []struct {
		flag string
		want time.Duration
	}{{"5s", 5 * time.Second}, {"0", DefaultRequestTimeout}} {
		streams, _, _, _ := genericiooptions.NewTestIOStreams()
		getter := genericclioptions.NewTestConfigFlags().WithClientConfig(clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{Timeout: tc.flag}))
		o := NewStatusOptions(getter, streams)
		o.MetricsFile = filepath.Join(recordedDir, "v1.36-idle.prom")
		if err := o.Complete(nil); err != nil {
			t.Fatal(err)
		}
		if o.timeout != tc.want {
			t.Errorf("--request-timeout=%s: timeout %s, want %s", tc.flag, o.timeout, tc.want)
		}
	}
}

// v137Shaped is a recorded v1.36 scrape as a v1.37 scheduler would serve it:
// its version, the new pod event name, the two pod-group queues and the
// entities gauge.
func v137Shaped(t *testing.T, name string, at time.Time) *metricscrape.Snapshot {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(recordedDir, name))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(data), `git_version="v1.36.3"`, `git_version="v1.37.2"`)
	text = strings.ReplaceAll(text, "UnschedulablePodAdd", "UnscheduledPodAdd")
	text = strings.Replace(text, `scheduler_pending_pods{queue="active"}`,
		`scheduler_pending_pods{queue="incomplete"} 2`+"\n"+`scheduler_pending_pods{queue="pending"} 3`+"\n"+`scheduler_pending_pods{queue="active"}`, 1)
	text += "# HELP scheduler_queued_entities [ALPHA] Number of queued entities.\n# TYPE scheduler_queued_entities gauge\n" +
		`scheduler_queued_entities{queue="backoff",type="pod"} 4` + "\n" +
		`scheduler_queued_entities{queue="backoff",type="podgroup"} 1` + "\n"
	s, err := metricscrape.ParseText(name, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	s.Time = at
	s.Origin = metricscrape.Origin{Kind: metricscrape.OriginFile, Address: name}
	return s
}

// TestStatus_v137: a v1.37 scheduler's queues and entities are all shown,
// none warned about, its arrivals counted under v1.37's event name, and the
// model named after its version.
func TestStatus_v137(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	prev, cur := v137Shaped(t, "v1.36-parked.prom", t0), v137Shaped(t, "v1.36-settled.prom", t0.Add(4*time.Second))
	if len(cur.Warnings) != 0 {
		t.Errorf("warnings on a v1.37 exposition: %q", cur.Warnings)
	}
	st, err := status.NewSchedulerStatus(prev, cur)
	if err != nil {
		t.Fatal(err)
	}
	if st.Scheduler.Model != "v1.37" || st.Scheduler.ModelNote != "" {
		t.Errorf("model = %q (%q), want v1.37", st.Scheduler.Model, st.Scheduler.ModelNote)
	}
	p := st.Pending
	if p.IncompletePodGroupPods == nil || *p.IncompletePodGroupPods != 2 || p.PendingPodGroupPods == nil || *p.PendingPodGroupPods != 3 {
		t.Errorf("pod-group queues = %v, %v, want 2 and 3", p.IncompletePodGroupPods, p.PendingPodGroupPods)
	}
	if p.Total != p.Active+p.Backoff+p.Unschedulable+p.Gated+5 {
		t.Errorf("total %d leaves out the pod-group queues (%+v)", p.Total, p)
	}
	arrivals := int64(0)
	for _, in := range st.Incoming {
		if in.Event == "UnscheduledPodAdd" {
			arrivals += in.Total
		}
	}
	if arrivals == 0 {
		t.Error("no arrival counted under UnscheduledPodAdd")
	}
	var b bytes.Buffer
	if err := PrintStatusTable(&b, st); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"queue model v1.37", "incompletePodGroupPods 2  pendingPodGroupPods 3", "ENTITIES   backoffQ pod 4  backoffQ podgroup 1"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	// A v1.36 scheduler has no pod-group queues: none is shown.
	old, err := status.NewSchedulerStatus(nil, recorded(t, "v1.36-settled.prom", t0))
	if err != nil {
		t.Fatal(err)
	}
	if old.Pending.IncompletePodGroupPods != nil || old.Scheduler.Model != "v1.36" {
		t.Errorf("v1.36: pod-group queue %v, model %q", old.Pending.IncompletePodGroupPods, old.Scheduler.Model)
	}
}

// TestStatus_unknownVersion: a scheduler of a version without a model is
// read with the current release's and says so.
func TestStatus_unknownVersion(t *testing.T) {
	s := recorded(t, "v1.36-settled.prom", time.Now())
	s.Build.GitVersion = "v1.33.5"
	st, err := status.NewSchedulerStatus(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	if st.Scheduler.Model != "v1.37" || !strings.Contains(st.Scheduler.ModelNote, "v1.33 has no queue model") {
		t.Errorf("model %q, note %q", st.Scheduler.Model, st.Scheduler.ModelNote)
	}
}

// fakeHistorian holds the scheduler's series from oldest to newest: it
// answers with before for instants before newest and with cur from newest.
type fakeHistorian struct {
	now, oldest, newest time.Time
	before, cur         *metricscrape.Snapshot
	oldestErr           error
	asked               []time.Time
}

func (h *fakeHistorian) Scrape(ctx context.Context) (*metricscrape.Snapshot, error) {
	return h.ScrapeAt(ctx, h.now)
}

func (h *fakeHistorian) ScrapeAt(_ context.Context, t time.Time) (*metricscrape.Snapshot, error) {
	h.asked = append(h.asked, t)
	if t.Before(h.oldest) {
		return nil, fmt.Errorf("Prometheus at fake has no scheduler_pending_pods series at %s", t.Format(time.RFC3339))
	}
	snap := *h.cur
	if t.Before(h.newest) {
		snap = *h.before
	}
	snap.Time = t
	return &snap, nil
}

func (h *fakeHistorian) HeldSpan(_ context.Context, t time.Time, window time.Duration) (time.Time, time.Time, error) {
	if h.oldestErr != nil {
		return time.Time{}, time.Time{}, h.oldestErr
	}
	return h.oldest, h.newest, nil
}

func (h *fakeHistorian) String() string { return "Prometheus at fake" }

// TestStatusOptions_measureAt: through Prometheus, status answers from the
// first sample on, with rates over the data there is, and says how much.
func TestStatusOptions_measureAt(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	parked, settled := recorded(t, "v1.36-parked.prom", now), recorded(t, "v1.36-settled.prom", now)
	tests := []struct {
		name           string
		oldest, newest time.Time
		oldestErr      error
		wantWindow     time.Duration // 0: no rates
		wantWarning    string
		wantErr        string
	}{
		{name: "an hour of data", oldest: now.Add(-time.Hour), newest: now, wantWindow: PrometheusRateWindow},
		{name: "thirty seconds of data", oldest: now.Add(-40 * time.Second), newest: now.Add(-10 * time.Second), wantWindow: 30 * time.Second,
			wantWarning: "rates over the 30s of data Prometheus at fake holds (2026-01-01T11:59:20Z to 2026-01-01T11:59:50Z), less than 5m0s"},
		{name: "one sample", oldest: now.Add(-10 * time.Second), newest: now.Add(-10 * time.Second),
			wantWarning: "Prometheus at fake holds one sample of the scheduler so far (at 2026-01-01T11:59:50Z): no rates yet"},
		{name: "nothing", oldestErr: errors.New("Prometheus at fake has no scheduler_pending_pods series in the 5m0s before 2026-01-01T12:00:00Z"),
			wantErr: "has no scheduler_pending_pods series in the 5m0s before"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			newest := tt.newest
			if newest.IsZero() {
				newest = now
			}
			h := &fakeHistorian{now: now, oldest: tt.oldest, newest: newest, oldestErr: tt.oldestErr, before: parked, cur: settled}
			clk := &autoClock{now: now}
			o, _ := newTestStatusOptions(h, clk)
			st, err := o.measure(context.Background(), nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("measure: %v (asked at %v)", err, h.asked)
			}
			switch {
			case tt.wantWindow == 0 && st.RateWindow != nil:
				t.Errorf("RateWindow = %v, want none", st.RateWindow)
			case tt.wantWindow != 0 && (st.RateWindow == nil || st.RateWindow.Duration != tt.wantWindow):
				t.Errorf("RateWindow = %v, want %v", st.RateWindow, tt.wantWindow)
			}
			var warned bool
			for _, w := range st.Warnings {
				if strings.Contains(w, "of data") || strings.Contains(w, "one sample") {
					warned = true
					if tt.wantWarning == "" || !strings.Contains(w, tt.wantWarning) {
						t.Errorf("warning %q, want %q", w, tt.wantWarning)
					}
				}
			}
			if !warned && tt.wantWarning != "" {
				t.Errorf("warnings %q, want one containing %q", st.Warnings, tt.wantWarning)
			}
			if !st.Time.Time.Equal(newest) {
				t.Errorf("status time %s, want the newest sample's %s (asked at %v)", st.Time.UTC(), newest, h.asked)
			}
			if float64(st.Pending.Unschedulable) != settled.Pending[metricscrape.QueueUnschedulable] {
				t.Errorf("pending unschedulable %v, want the current %v", st.Pending.Unschedulable, settled.Pending[metricscrape.QueueUnschedulable])
			}
		})
	}
}

// TestStatusOptions_Run_failover: a failover between two scrapes (another
// scheduler pod, another Lease holder) gives no rates, since the new
// leader's counters are its own, and says so; the next frame has rates
// again. The same scheduler read twice has its rates.
func TestStatusOptions_Run_failover(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(name, pod, holder string) *metricscrape.Snapshot {
		s := recorded(t, name, t0)
		s.Origin = metricscrape.Origin{Kind: metricscrape.OriginPortForward, Address: pod + ":10259", Pod: pod, LeaseHolder: holder}
		return s
	}
	// The follower's counters are above the leader's: without the check
	// the rates would be the difference of two schedulers' counters.
	leader := at("v1.36-parked.prom", "kube-system/kube-scheduler-cp-1", "cp-1_a")
	newLeader := at("v1.36-settled.prom", "kube-system/kube-scheduler-cp-2", "cp-2_b")
	for _, tc := range []struct {
		name  string
		steps []any
		// rates says, frame by frame, whether the frame has rates.
		rates []bool
	}{
		{"one scheduler", []any{leader, leader, leader}, []bool{true, true}},
		{"a failover between the two scrapes of one status", []any{leader, newLeader, newLeader}, []bool{false, true}},
		{"a failover between two frames", []any{leader, leader, newLeader, newLeader}, []bool{true, false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &autoClock{now: t0}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			o, out := newTestStatusOptions(&fakeSource{clock: clk, steps: tc.steps, done: cancel}, clk)
			o.Watch = true
			*o.printFlags.OutputFormat = "json"
			if err := o.Complete(nil); err != nil {
				t.Fatal(err)
			}
			if err := o.Run(ctx); err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(out)
			var got []bool
			for dec.More() {
				var st status.SchedulerStatus
				if err := dec.Decode(&st); err != nil {
					t.Fatal(err)
				}
				got = append(got, st.RateWindow != nil)
				warned := strings.Contains(strings.Join(st.Warnings, "\n"), "no rates: the scrapes 2s apart read two schedulers (kube-system/kube-scheduler-cp-1, then kube-system/kube-scheduler-cp-2)")
				if warned == (st.RateWindow != nil) {
					t.Errorf("frame %d: rates %v, warnings %q", len(got), st.RateWindow, st.Warnings)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.rates) {
				t.Errorf("frames with rates %v, want %v", got, tc.rates)
			}
		})
	}
}

// TestPrintStatusTable_schedulers: status names the Lease holder's standby
// replicas, the profiles of the scheduler it read (its /configz), and the
// other kube-schedulers looked at with theirs; -o json lists them too.
func TestPrintStatusTable_schedulers(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	snap := recorded(t, "v1.36-parked.prom", t0)
	snap.Origin = metricscrape.Origin{Kind: metricscrape.OriginPortForward, Platform: "kubeadm, second scheduler",
		Address: "kube-system/second-7f9-b:10259", Pod: "kube-system/second-7f9-b", Node: "cp-1",
		Lease: "kube-system/second-scheduler", LeaseHolder: "second-7f9-b_x", Candidates: 2,
		Standby:  []string{"kube-system/second-7f9-a"},
		Profiles: []string{"second-scheduler"},
		Others:   []metricscrape.SchedulerSeen{{Pod: "kube-system/kube-scheduler-cp-2", Lease: "kube-system/kube-scheduler", Profiles: []string{"default-scheduler", "batch"}}},
	}
	st, err := status.NewSchedulerStatus(nil, snap)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := PrintStatusTable(&b, st); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"STANDBY    kube-system/second-7f9-a (waiting for Lease kube-system/second-scheduler: their queues are not live)\n",
		"PROFILES   second-scheduler (its /configz)\n",
		"OTHERS     kube-system/kube-scheduler-cp-2 (profiles default-scheduler, batch)\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"standby":["kube-system/second-7f9-a"]`, `"profiles":["second-scheduler"]`,
		`"others":[{"pod":"kube-system/kube-scheduler-cp-2","lease":"kube-system/kube-scheduler","profiles":["default-scheduler","batch"]}]`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("json lacks %s:\n%s", want, data)
		}
	}
}
