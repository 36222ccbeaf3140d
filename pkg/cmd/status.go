package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
)

// Defaults of `status`.
const (
	// DefaultStatusInterval is the time between the two scrapes that give
	// rates, and between redraws with --watch.
	DefaultStatusInterval = 2 * time.Second
	// MinStatusInterval is the shortest --interval: below it the rates are
	// noise and --watch only redraws the same numbers.
	MinStatusInterval = 500 * time.Millisecond
	// PrometheusRateWindow is the rate window with --prometheus-url: a
	// Prometheus server samples every 15–60 s, so shorter windows show nothing.
	PrometheusRateWindow = 5 * time.Minute
)

// StatusOptions shows what the live scheduler's queue is doing.
type StatusOptions struct {
	genericiooptions.IOStreams

	getter     genericclioptions.RESTClientGetter
	printFlags *genericclioptions.PrintFlags

	metricsFlags
	Watch    bool
	Interval time.Duration

	// Set by Complete.
	source   metricscrape.Source
	timeout  time.Duration
	printObj printers.ResourcePrinterFunc // nil: the table
	terminal bool                         // Out is a terminal: --watch redraws in place
	clock    clock.Clock
}

// NewStatusOptions returns the defaults. getter is the root's ConfigFlags.
func NewStatusOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *StatusOptions {
	pf := genericclioptions.NewPrintFlags("")
	pf.NamePrintFlags = nil // -o name has no meaning here
	return &StatusOptions{
		IOStreams:  streams,
		getter:     getter,
		printFlags: pf,
		Interval:   DefaultStatusInterval,
		clock:      clock.RealClock{},
	}
}

// NewCmdStatus returns `kubectl schedq status`.
func NewCmdStatus(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewStatusOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show what the live scheduler's queue is doing",
		Long: `Show what kube-scheduler's scheduling queue is doing now, from the scheduler's
own metrics: its version and the feature gates that change the queue, how many
pods wait in activeQ, backoffQ, unschedulablePods and gated, which events move
pods between them (per second), scheduling attempts per second by result, and
the signals KEP-5142 names for operators:

  - activeQ is empty while backoffQ holds pods,
  - PopFromBackoffQ rises while activeQ is not empty,
  - no pod is scheduled while pods are pending.

Rates come from two scrapes --interval apart (with --prometheus-url, from
the last 5 minutes). The metrics are read from the first of:

  1. --metrics-url URL: a scheduler's /metrics (https uses the kubeconfig's
     credentials; the scheduler's certificate is checked against the
     kubeconfig's CA unless --insecure-skip-tls-verify);
  2. --prometheus-url URL: a Prometheus server that scrapes the scheduler,
     for clusters that hide it (EKS, GKE, AKS);
  3. --metrics-file FILE: a saved exposition (totals only, no rates);
  4. the scheduler endpoint in the kubeconfig (schedq-perf's control plane);
  5. the kube-scheduler pod in kube-system (the Lease holder when there are
     several), through a port-forward to 10259 with the kubeconfig's
     credentials. This needs get/list pods, get and create pods/portforward
     (client-go's WebSocket port-forward is a GET) and get
     leases in kube-system, and get on the /metrics non-resource URL.

Each scrape, discovery and port-forward included, gives up after
--request-timeout (30s when it is not set or 0).`,
		Example: `  # The queue of the cluster in the current context
  kubectl schedq status

  # Redraw every 5 seconds until interrupted
  kubectl schedq status --watch --interval 5s

  # A scheduler whose metrics you can reach directly
  kubectl schedq status --metrics-url https://10.0.0.10:10259/metrics --insecure-skip-tls-verify

  # A managed cluster, through the Prometheus server that scrapes its scheduler
  kubectl schedq status --prometheus-url http://prometheus.example:9090 --prometheus-selector 'job="kube-scheduler"'

  # A saved exposition, e.g. attached to a bug report (saved on a control-plane
  # node with: curl -sk -H "Authorization: Bearer $TOKEN" https://127.0.0.1:10259/metrics)
  kubectl schedq status --metrics-file scheduler.prom

  # Machine-readable
  kubectl schedq status -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(cmd); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return usageError(cmd, err)
			}
			return o.Run(cmd.Context())
		},
	}
	o.metricsFlags.addFlags(cmd)
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", o.Watch, "Redraw at every --interval until interrupted")
	cmd.Flags().DurationVar(&o.Interval, "interval", o.Interval, "Time between the two scrapes that give rates, and between redraws (at least 500ms)")
	o.printFlags.AddFlags(cmd)
	_ = cmd.RegisterFlagCompletionFunc("output", completeOutput(o.printFlags.AllowedFormats()))
	return cmd
}

// validateInterval checks --interval of status and explain --watch.
func validateInterval(d time.Duration) error {
	if d < MinStatusInterval {
		return fmt.Errorf("--interval=%s: want at least %s, such as the default %s", d, MinStatusInterval, DefaultStatusInterval)
	}
	return nil
}

// Validate checks the flags without I/O.
func (o *StatusOptions) Validate() error {
	src := o.metricsFlags.options()
	if err := src.Validate(); err != nil {
		return err
	}
	if err := validateInterval(o.Interval); err != nil {
		return err
	}
	if o.Watch && o.MetricsFile != "" {
		return errors.New("--watch and --metrics-file do not go together: a file does not change")
	}
	if out := o.output(); out != "" {
		if _, err := o.printFlags.ToPrinter(); err != nil {
			return err
		}
	}
	return nil
}

func (o *StatusOptions) output() string {
	if o.printFlags.OutputFormat == nil {
		return ""
	}
	return *o.printFlags.OutputFormat
}

// Complete resolves the metrics source, the timeout and the printer.
func (o *StatusOptions) Complete(cmd *cobra.Command) error {
	var err error
	if o.timeout, err = requestTimeout(cmd, o.getter); err != nil {
		return err
	}
	if o.output() != "" {
		p, err := o.printFlags.ToPrinter()
		if err != nil {
			return err
		}
		o.printObj = p.PrintObj
	}
	if f, ok := o.Out.(*os.File); ok {
		o.terminal = isTerminal(f)
	}
	if o.source != nil { // set by tests
		return nil
	}
	if !o.metricsFlags.named() {
		// The kubeconfig finds the scheduler: say plainly if there is none.
		if _, err := restConfig(o.getter, "name the metrics with --metrics-url, --prometheus-url or --metrics-file"); err != nil {
			return err
		}
	}
	opts := o.metricsFlags.options()
	opts.Stdin = o.In
	opts.KubeConfig = o.getter.ToRawKubeConfigLoader()
	src, err := metricscrape.Resolve(opts)
	if err != nil {
		if errors.Is(err, metricscrape.ErrNoKubeconfig) || clientcmd.IsEmptyConfig(err) {
			return &noKubeconfigError{alternatives: "name the metrics with --metrics-url, --prometheus-url or --metrics-file"}
		}
		return err
	}
	o.source = src
	return nil
}

// Run scrapes, prints, and with --watch keeps redrawing until ctx ends or
// the process is interrupted.
func (o *StatusOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.Watch {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	st, err := o.measure(ctx, nil)
	if err != nil {
		return o.explain(err)
	}
	if err := o.print(st, 0); err != nil {
		return err
	}
	if !o.Watch {
		return nil
	}
	last := st
	for frame := 1; ; frame++ {
		select {
		case <-ctx.Done():
			return nil
		case <-o.clock.After(o.Interval):
		}
		st, err := o.measure(ctx, last)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			// Keep the last picture and say what went wrong; the next
			// round may work again (a leader change, a slow scrape).
			failed := last.DeepCopy()
			failed.Error = o.explain(err).Error()
			st = failed
		} else {
			last = st
		}
		if err := o.print(st, frame); err != nil {
			return err
		}
	}
}

// measure takes what one status needs: two snapshots, or with --watch one
// new snapshot compared to the previous status's.
func (o *StatusOptions) measure(ctx context.Context, prev *SchedulerStatus) (*SchedulerStatus, error) {
	if h, ok := o.source.(metricscrape.Historian); ok {
		window := max(o.Interval, PrometheusRateWindow)
		now := o.clock.Now()
		before, err := o.scrapeAt(ctx, h, now.Add(-window))
		if err != nil {
			return nil, err
		}
		cur, err := o.scrapeAt(ctx, h, now)
		if err != nil {
			return nil, err
		}
		return NewSchedulerStatus(before, cur)
	}
	if prev != nil && prev.snapshot != nil {
		cur, err := o.scrape(ctx)
		if err != nil {
			return nil, err
		}
		return NewSchedulerStatus(prev.snapshot, cur)
	}
	first, err := o.scrape(ctx)
	if err != nil {
		return nil, err
	}
	if o.MetricsFile != "" {
		return NewSchedulerStatus(nil, first)
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-o.clock.After(o.Interval):
	}
	cur, err := o.scrape(ctx)
	if err != nil {
		return nil, err
	}
	return NewSchedulerStatus(first, cur)
}

func (o *StatusOptions) scrape(ctx context.Context) (*metricscrape.Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	return o.source.Scrape(ctx)
}

func (o *StatusOptions) scrapeAt(ctx context.Context, h metricscrape.Historian, t time.Time) (*metricscrape.Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	return h.ScrapeAt(ctx, t)
}

// print writes one status: through -o's printer, or as the table (redrawn
// in place on a terminal with --watch).
func (o *StatusOptions) print(st *SchedulerStatus, frame int) error {
	if !o.Watch {
		for _, w := range st.Warnings {
			fmt.Fprintf(o.ErrOut, "warning: %s\n", w)
		}
	}
	if o.printObj != nil {
		return o.printObj(st, o.Out)
	}
	var b strings.Builder
	if o.Watch {
		fmt.Fprintf(&b, "Every %s: kubectl schedq status    %s\n\n", o.Interval, st.Time.Local().Format("15:04:05"))
	}
	if err := printStatusTable(&b, st, o.Watch); err != nil {
		return err
	}
	text := b.String()
	switch {
	case o.Watch && o.terminal:
		text = redraw(text)
	case o.Watch && frame > 0:
		text = "\n" + text
	}
	_, err := io.WriteString(o.Out, text)
	return err
}

// redraw turns a frame into terminal output that overwrites the previous
// one: cursor home, every line cleared to its end, the rest of the screen
// cleared. No full-screen clear, so there is no flicker.
func redraw(frame string) string {
	const home, eol, eos = "\x1b[H", "\x1b[K", "\x1b[J"
	return home + strings.ReplaceAll(frame, "\n", eol+"\n") + eos
}

// explain adds what the user can do to a scrape error.
func (o *StatusOptions) explain(err error) error {
	var (
		forbidden   *metricscrape.ForbiddenError
		pfForbidden *metricscrape.PortForwardForbiddenError
		transport   *metricscrape.TransportError
		noLeader    *metricscrape.NoLeaderError
	)
	alternatives := "or read the metrics another way: --metrics-url URL, --prometheus-url URL or --metrics-file FILE"
	switch {
	case errors.As(err, &forbidden):
		who := "the identity"
		if forbidden.Identity != nil && forbidden.Identity.Username != "" {
			who = forbidden.Identity.String()
		}
		return fmt.Errorf("%w\n\nA cluster admin can let %s read kube-scheduler's metrics with\n\nkubectl apply -f - <<'EOF'\n%sEOF\n\n%s",
			err, who, forbidden.Remedy(), alternatives)
	case errors.As(err, &pfForbidden):
		who := "the identity"
		if pfForbidden.Identity != nil && pfForbidden.Identity.Username != "" {
			who = pfForbidden.Identity.String()
		}
		return fmt.Errorf("%w\n\nFinding the scheduler needs access to kube-system; a cluster admin can let %s in with\n\nkubectl apply -f - <<'EOF'\n%sEOF\n\n%s",
			err, who, pfForbidden.Remedy(), alternatives)
	case errors.Is(err, metricscrape.ErrNoSchedulerPod):
		return fmt.Errorf("%w; use --metrics-url URL (a scheduler /metrics you can reach) or --prometheus-url URL (a Prometheus server that scrapes it)", err)
	case errors.As(err, &noLeader):
		return fmt.Errorf("%w; use --metrics-url with the leader's address", err)
	case errors.As(err, &transport):
		switch transport.Kind {
		case metricscrape.Timeout:
			return bounded("reading the scheduler's metrics from "+transport.Target, o.timeout, err)
		case metricscrape.TLSFailure:
			return fmt.Errorf("%w; if the scheduler's serving certificate is signed by another CA pass --certificate-authority FILE, or skip the check with --insecure-skip-tls-verify", err)
		}
	}
	return boundedScrape(o.source, o.timeout, err)
}

// SchedulerStatus is what `status` shows; -o json|yaml prints it as is.
type SchedulerStatus struct {
	metav1.TypeMeta `json:",inline"`

	// Time is when the (second) snapshot was taken.
	Time metav1.Time `json:"time"`
	// Source says where the metrics came from.
	Source metricscrape.Origin `json:"source"`
	// Scheduler is the scheduler's identity.
	Scheduler SchedulerIdentity `json:"scheduler"`
	// FeatureGates are the gates that change the queue, as the scheduler
	// reports them.
	FeatureGates []FeatureGateStatus `json:"featureGates"`
	// Pending is scheduler_pending_pods.
	Pending PendingPods `json:"pending"`
	// RateWindow is the time the rates are measured over; absent when there
	// are no rates (a file).
	RateWindow *metav1.Duration `json:"rateWindow,omitempty"`
	// RatesReset is set when a counter went down in the window.
	RatesReset bool `json:"ratesReset,omitempty"`
	// Incoming is scheduler_queue_incoming_pods_total, busiest first.
	Incoming []IncomingPods `json:"incoming"`
	// Attempts is scheduler_schedule_attempts_total by result.
	Attempts []ScheduleAttempts `json:"attempts"`
	// Scheduled summarises the pods bound so far.
	Scheduled ScheduledPods `json:"scheduled"`
	// Signals are the conditions worth a look.
	Signals []Signal `json:"signals"`
	// Error is set on a --watch frame whose scrape failed; the rest is the
	// last good picture.
	Error string `json:"error,omitempty"`
	// Warnings name the series whose values look wrong, and the source.
	Warnings []string `json:"warnings,omitempty"`

	snapshot *metricscrape.Snapshot
}

// SchedulerIdentity says which scheduler answered.
type SchedulerIdentity struct {
	Version   string   `json:"version,omitempty"`
	GitCommit string   `json:"gitCommit,omitempty"`
	GoVersion string   `json:"goVersion,omitempty"`
	Platform  string   `json:"platform,omitempty"`
	Profiles  []string `json:"profiles,omitempty"`
	// Leader is leader_election_master_status, when reported.
	Leader *bool `json:"leader,omitempty"`
}

// FeatureGateStatus is one gate.
type FeatureGateStatus struct {
	Name    string `json:"name"`
	Enabled bool   `json:"enabled"`
	Stage   string `json:"stage,omitempty"`
}

// PendingPods is scheduler_pending_pods by queue, in upstream's words.
type PendingPods struct {
	Active        int64 `json:"activeQ"`
	Backoff       int64 `json:"backoffQ"`
	Unschedulable int64 `json:"unschedulablePods"`
	Gated         int64 `json:"gated"`
	Total         int64 `json:"total"`
}

// IncomingPods is one (queue, event) series of scheduler_queue_incoming_pods_total.
type IncomingPods struct {
	// Queue is upstream's word for the queue label (metricscrape.QueueName):
	// activeQ, backoffQ or unschedulablePods.
	Queue string `json:"queue"`
	Event string `json:"event"`
	Total int64  `json:"total"`
	// PerSecond is the rate over the window; absent without rates.
	PerSecond *float64 `json:"perSecond,omitempty"`
}

// ScheduleAttempts is one result of scheduler_schedule_attempts_total.
type ScheduleAttempts struct {
	Result    string   `json:"result"`
	Total     int64    `json:"total"`
	PerSecond *float64 `json:"perSecond,omitempty"`
}

// ScheduledPods summarises the SLI and attempts histograms.
type ScheduledPods struct {
	// Pods is how many pods were bound since the scheduler started.
	Pods int64 `json:"pods"`
	// SLIp50 and SLIp99 estimate scheduler_pod_scheduling_sli_duration_seconds'
	// quantiles over all attempt counts: from the first activeQ entry to bound.
	SLIp50 *metav1.Duration `json:"sliP50,omitempty"`
	SLIp99 *metav1.Duration `json:"sliP99,omitempty"`
	// MeanAttempts is scheduler_pod_scheduling_attempts' mean.
	MeanAttempts float64 `json:"meanAttempts"`
}

// Signal is a condition worth an operator's look.
type Signal struct {
	// Name is stable, for scripts: BackoffQWaitsWhileActiveQEmpty,
	// PopFromBackoffQWhileActiveQBusy, NoPodScheduled, NotLeader, RatesReset.
	Name string `json:"name"`
	// Severity is Warning or Info.
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// The signal names.
const (
	SignalBackoffQWaitsWhileActiveQEmpty  = "BackoffQWaitsWhileActiveQEmpty"
	SignalPopFromBackoffQWhileActiveQBusy = "PopFromBackoffQWhileActiveQBusy"
	SignalNoPodScheduled                  = "NoPodScheduled"
	SignalNotLeader                       = "NotLeader"
	SignalRatesReset                      = "RatesReset"

	SeverityWarning = "Warning"
	SeverityInfo    = "Info"
)

// SchedulerStatusAPIVersion and SchedulerStatusKind identify -o json|yaml output.
const (
	SchedulerStatusAPIVersion = "schedq.kubectl-schedq.io/v1alpha1"
	SchedulerStatusKind       = "SchedulerStatus"
)

// NewSchedulerStatus builds the status from a snapshot and, when prev is
// not nil, the rates since prev.
func NewSchedulerStatus(prev, cur *metricscrape.Snapshot) (*SchedulerStatus, error) {
	st := &SchedulerStatus{
		TypeMeta: metav1.TypeMeta{APIVersion: SchedulerStatusAPIVersion, Kind: SchedulerStatusKind},
		Time:     metav1.NewTime(cur.Time),
		Source:   cur.Origin,
		Scheduler: SchedulerIdentity{
			Version:   cur.Build.GitVersion,
			GitCommit: cur.Build.GitCommit,
			GoVersion: cur.Build.GoVersion,
			Platform:  cur.Build.Platform,
			Profiles:  cur.Profiles,
			Leader:    cur.Leader,
		},
		FeatureGates: []FeatureGateStatus{},
		Pending: PendingPods{
			Active:        count(cur.Pending[metricscrape.QueueActive]),
			Backoff:       count(cur.Pending[metricscrape.QueueBackoff]),
			Unschedulable: count(cur.Pending[metricscrape.QueueUnschedulable]),
			Gated:         count(cur.Pending[metricscrape.QueueGated]),
			Total:         count(cur.PendingTotal()),
		},
		Incoming: []IncomingPods{},
		Attempts: []ScheduleAttempts{},
		Signals:  []Signal{},
		Warnings: cur.Warnings,
		snapshot: cur,
	}
	for _, g := range metricscrape.QueueGates {
		if fg, ok := cur.FeatureGates[g]; ok {
			st.FeatureGates = append(st.FeatureGates, FeatureGateStatus{Name: g, Enabled: fg.Enabled, Stage: fg.Stage})
		}
	}

	var rates *metricscrape.Rates
	if prev != nil {
		var err error
		if rates, err = metricscrape.NewRates(prev, cur); err != nil {
			return nil, err
		}
		st.RateWindow = &metav1.Duration{Duration: rates.Window}
		st.RatesReset = rates.Reset
	}
	for _, k := range cur.IncomingKeys() {
		in := IncomingPods{Queue: metricscrape.QueueName(k.Queue), Event: k.Event, Total: count(cur.Incoming[k])}
		if rates != nil {
			in.PerSecond = rate(rates.Incoming[k])
		}
		st.Incoming = append(st.Incoming, in)
	}
	sort.SliceStable(st.Incoming, func(i, j int) bool {
		a, b := st.Incoming[i], st.Incoming[j]
		if a.PerSecond != nil && b.PerSecond != nil && *a.PerSecond != *b.PerSecond {
			return *a.PerSecond > *b.PerSecond
		}
		return a.Total > b.Total
	})
	for _, r := range metricscrape.Results {
		a := ScheduleAttempts{Result: r, Total: count(cur.Attempts[r])}
		if rates != nil {
			a.PerSecond = rate(rates.Attempts[r])
		}
		st.Attempts = append(st.Attempts, a)
	}

	var sli metricscrape.Histogram
	for _, h := range cur.SLI {
		sli = mergeHistograms(sli, h)
	}
	st.Scheduled.Pods = count(sli.Count)
	if p := sli.Quantile(0.5); !math.IsNaN(p) {
		st.Scheduled.SLIp50 = &metav1.Duration{Duration: seconds(p)}
	}
	if p := sli.Quantile(0.99); !math.IsNaN(p) {
		st.Scheduled.SLIp99 = &metav1.Duration{Duration: seconds(p)}
	}
	st.Scheduled.MeanAttempts = math.Round(cur.PodSchedulingAttempts.Mean()*100) / 100

	st.Signals = signals(prev, cur, rates)
	return st, nil
}

// signals finds the conditions KEP-5142 names for operators, and a few
// that make the others unreliable.
func signals(prev, cur *metricscrape.Snapshot, rates *metricscrape.Rates) []Signal {
	out := []Signal{}
	active := cur.Pending[metricscrape.QueueActive]
	backoff := cur.Pending[metricscrape.QueueBackoff]
	pfb, pfbKnown := cur.GateEnabled(metricscrape.GateSchedulerPopFromBackoffQ)

	if cur.Leader != nil && !*cur.Leader {
		out = append(out, Signal{Name: SignalNotLeader, Severity: SeverityWarning,
			Message: "this scheduler is not the leader: its queue is idle; read the Lease holder's metrics instead"})
	}
	if rates != nil && rates.Reset {
		out = append(out, Signal{Name: SignalRatesReset, Severity: SeverityInfo,
			Message: "a counter went down during the window: the scheduler restarted or another one took the lead; rates count from zero"})
	}

	// 1. activeQ empty while backoffQ holds pods.
	if active == 0 && backoff > 0 {
		persisted := prev != nil && prev.Pending[metricscrape.QueueActive] == 0 && prev.Pending[metricscrape.QueueBackoff] > 0
		sev := SeverityInfo
		var msg string
		switch {
		case pfbKnown && pfb:
			msg = fmt.Sprintf("activeQ is empty while backoffQ holds %s: with SchedulerPopFromBackoffQ on the scheduler pops them at once, "+
				"except pods backing off after errors (never popped early)", pods(backoff))
			if persisted {
				sev = SeverityWarning
				msg += "; it lasted across both scrapes, so these are error backoffs or Pop missed a wakeup (kubernetes#130976)"
			}
		case pfbKnown && !pfb:
			msg = fmt.Sprintf("activeQ is empty while backoffQ holds %s: with SchedulerPopFromBackoffQ off they wait out their backoff (1-10 s by default) while the scheduler idles", pods(backoff))
			if persisted {
				sev = SeverityWarning
			}
		default:
			msg = fmt.Sprintf("activeQ is empty while backoffQ holds %s", pods(backoff))
		}
		out = append(out, Signal{Name: SignalBackoffQWaitsWhileActiveQEmpty, Severity: sev, Message: msg})
	}

	if rates == nil {
		return out
	}
	// 2. PopFromBackoffQ rising while activeQ is not empty.
	if popRate := rates.Incoming[metricscrape.QueueEvent{Queue: metricscrape.QueueActive, Event: metricscrape.EventPopFromBackoffQ}]; popRate > 0 && active > 0 {
		out = append(out, Signal{Name: SignalPopFromBackoffQWhileActiveQBusy, Severity: SeverityInfo,
			Message: fmt.Sprintf("%s/s popped from backoffQ before their backoff ended while activeQ holds %s: activeQ runs dry between scrapes; "+
				"if unschedulable attempts are high too, backoffQ pods are retried early and fail again", num(popRate), pods(active))})
	}
	// 3. No scheduled attempts while pods are pending.
	waiting := active + backoff + cur.Pending[metricscrape.QueueUnschedulable]
	if rates.Attempts[metricscrape.ResultScheduled] == 0 && waiting > 0 {
		failed := rates.Attempts[metricscrape.ResultUnschedulable] + rates.Attempts[metricscrape.ResultError]
		var msg, sev string
		switch {
		case failed > 0:
			sev = SeverityWarning
			msg = fmt.Sprintf("no pod scheduled in the last %s while %s wait; every attempt failed (%s/s unschedulable, %s/s error)",
				shortDuration(rates.Window), pods(waiting), num(rates.Attempts[metricscrape.ResultUnschedulable]), num(rates.Attempts[metricscrape.ResultError]))
		case active > 0:
			sev = SeverityWarning
			msg = fmt.Sprintf("no scheduling attempt in the last %s although activeQ holds %s: is this scheduler the leader, or is it stuck?",
				shortDuration(rates.Window), pods(active))
		default:
			sev = SeverityInfo
			msg = fmt.Sprintf("no pod scheduled in the last %s while %s wait in backoffQ or unschedulablePods for their backoff or a cluster event",
				shortDuration(rates.Window), pods(waiting))
		}
		out = append(out, Signal{Name: SignalNoPodScheduled, Severity: sev, Message: msg})
	}
	return out
}

func mergeHistograms(a, b metricscrape.Histogram) metricscrape.Histogram {
	out := metricscrape.Histogram{Count: a.Count + b.Count, Sum: a.Sum + b.Sum}
	byBound := map[float64]float64{}
	for _, bk := range a.Buckets {
		byBound[bk.UpperBound] += bk.CumulativeCount
	}
	for _, bk := range b.Buckets {
		byBound[bk.UpperBound] += bk.CumulativeCount
	}
	for bound, n := range byBound {
		out.Buckets = append(out.Buckets, metricscrape.Bucket{UpperBound: bound, CumulativeCount: n})
	}
	sort.Slice(out.Buckets, func(i, j int) bool { return out.Buckets[i].UpperBound < out.Buckets[j].UpperBound })
	return out
}

func count(v float64) int64 { return int64(math.Round(v)) }

func rate(v float64) *float64 {
	r := math.Round(v*100) / 100
	return &r
}

func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond)
}

func pods(n float64) string {
	if count(n) == 1 {
		return "1 pod"
	}
	return fmt.Sprintf("%d pods", count(n))
}

// num prints a rate with at most two decimals.
func num(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

func shortDuration(d time.Duration) string {
	return d.Round(100 * time.Millisecond).String()
}

// DeepCopy copies the status.
func (s *SchedulerStatus) DeepCopy() *SchedulerStatus {
	if s == nil {
		return nil
	}
	out := *s
	out.Scheduler.Profiles = append([]string(nil), s.Scheduler.Profiles...)
	if s.Scheduler.Leader != nil {
		l := *s.Scheduler.Leader
		out.Scheduler.Leader = &l
	}
	out.FeatureGates = append([]FeatureGateStatus(nil), s.FeatureGates...)
	if s.RateWindow != nil {
		w := *s.RateWindow
		out.RateWindow = &w
	}
	out.Incoming = make([]IncomingPods, len(s.Incoming))
	for i, in := range s.Incoming {
		out.Incoming[i] = in
		if in.PerSecond != nil {
			r := *in.PerSecond
			out.Incoming[i].PerSecond = &r
		}
	}
	out.Attempts = make([]ScheduleAttempts, len(s.Attempts))
	for i, a := range s.Attempts {
		out.Attempts[i] = a
		if a.PerSecond != nil {
			r := *a.PerSecond
			out.Attempts[i].PerSecond = &r
		}
	}
	if s.Scheduled.SLIp50 != nil {
		d := *s.Scheduled.SLIp50
		out.Scheduled.SLIp50 = &d
	}
	if s.Scheduled.SLIp99 != nil {
		d := *s.Scheduled.SLIp99
		out.Scheduled.SLIp99 = &d
	}
	out.Signals = append([]Signal(nil), s.Signals...)
	out.Warnings = append([]string(nil), s.Warnings...)
	return &out
}

// DeepCopyObject implements runtime.Object.
func (s *SchedulerStatus) DeepCopyObject() runtime.Object { return s.DeepCopy() }
