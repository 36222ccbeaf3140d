package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/quote"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/status"
)

// Defaults of `status`.
const (
	// DefaultStatusInterval is the time between the two scrapes that give
	// rates, and between redraws with --watch.
	DefaultStatusInterval = 2 * time.Second
	// MinStatusInterval is the shortest --interval: below it the rates are
	// noise and --watch only redraws the same numbers.
	MinStatusInterval = 500 * time.Millisecond
	// MaxStatusInterval is the longest --interval: status waits that long
	// for its second scrape, and a longer wait is a typo, not a measurement.
	MaxStatusInterval = time.Hour
	// announcedWait is the --interval from which status says that it waits.
	announcedWait = 10 * time.Second
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
	// SchedulerName picks, among the cluster's kube-schedulers, the one
	// whose profiles serve it (metricscrape.ProfileSource).
	SchedulerName string

	// Set by Complete.
	source   metricscrape.Source
	timeout  time.Duration
	printObj printers.ResourcePrinterFunc // nil: the table
	wide     bool                         // -o wide: the table with the scheduler's details and every series
	terminal bool                         // Out is a terminal: --watch redraws in place
	clock    clock.Clock
}

// NewStatusOptions returns the defaults. getter is the root's ConfigFlags.
func NewStatusOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *StatusOptions {
	pf := genericclioptions.NewPrintFlags("")
	pf.NamePrintFlags = nil // -o name: see statusOutput
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
     for clusters that hide it (EKS, GKE, AKS); rates over its last 5
     minutes, or over what it holds when it has less (a new scheduler,
     leader or Prometheus), which status then says. One that wants
     credentials gets them from --prometheus-bearer-token-file,
     --prometheus-header and --prometheus-certificate-authority, sent to
     that server only and never printed;
  3. --metrics-file FILE: a saved exposition (totals only, no rates);
  4. discovery, which looks for the scheduler as each platform runs it, in
     this order (-v 1 prints each step; SOURCE names the platform found):
     a. the scheduler endpoint in the kubeconfig (schedq-perf's control plane);
     b. EKS: the API server's /apis/metrics.eks.amazonaws.com/v1/ksh/container/metrics
        (get on ksh/metrics in API group metrics.eks.amazonaws.com; it serves
        no /configz or /flagz);
     c. RKE2, Talos and kubeadm: the kube-scheduler pods in kube-system;
        OpenShift: those in openshift-kube-scheduler; the holder of their
        Lease when there are several, through a port-forward to 10259 with
        the kubeconfig's credentials. This needs get/list pods, get and
        create pods/portforward (client-go's WebSocket port-forward is a GET)
        and get leases in that namespace, and get on the /metrics
        non-resource URL;
     d. k3s, k0s, MicroK8s, GKE and AKS keep the scheduler out of reach:
        status says so and names the flag that gets its metrics there.

With several control-plane nodes only the Lease holder's queue is live:
status reads it and names the others (STANDBY); with --watch it follows a
failover to the new leader and says so on stderr. --scheduler-name NAME
reads the kube-scheduler that serves NAME: the one discovery finds when its
/configz has a profile of that name, else a second kube-scheduler (pods
labelled component=scheduler or component=kube-scheduler in kube-system or
the scheduler's namespace: the search sends the kubeconfig's credentials to
each) whose profiles have it, through the holder of its own Lease; PROFILES
lists the profiles of the one read and OTHERS the others looked at.

Each scrape, discovery and port-forward included, gives up after
--request-timeout (30s when it is not set or 0); a redirect to another
scheme, host or port than the server named is not followed, and every
answer is read up to a cap (an exposition 64 MiB, a Prometheus answer
16 MiB).`,
		Example: `  # The queue of the cluster in the current context
  kubectl schedq status

  # Redraw every 5 seconds until interrupted
  kubectl schedq status --watch --interval 5s

  # A scheduler whose metrics you can reach directly
  kubectl schedq status --metrics-url https://10.0.0.10:10259/metrics --insecure-skip-tls-verify

  # A managed cluster, through the Prometheus server that scrapes its scheduler
  kubectl schedq status --prometheus-url http://prometheus.example:9090 --prometheus-selector 'job="kube-scheduler"'

  # A managed or multi-tenant Prometheus that wants a token and a tenant
  kubectl schedq status --prometheus-url https://mimir.example.com/prometheus \
    --prometheus-bearer-token-file token --prometheus-header 'X-Scope-OrgID: team-a'

  # A saved exposition, e.g. attached to a bug report (saved on a control-plane
  # node with: curl -sk -H "Authorization: Bearer $TOKEN" https://127.0.0.1:10259/metrics)
  kubectl schedq status --metrics-file scheduler.prom

  # Every incoming series, quiet ones too, and the scheduler's commit and pod
  kubectl schedq status -o wide

  # A second kube-scheduler beside the cluster's own, by a scheduler name it serves
  kubectl schedq status --scheduler-name my-scheduler

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
	cmd.Flags().DurationVar(&o.Interval, "interval", o.Interval, "Time between the two scrapes that give rates, and between redraws (500ms to 1h)")
	cmd.Flags().StringVar(&o.SchedulerName, "scheduler-name", o.SchedulerName, "Read the kube-scheduler that serves this scheduler name (a profile's schedulerName): the cluster's own when one of its profiles has it, else a second kube-scheduler whose profiles do")
	o.printFlags.AddFlags(cmd)
	// wide is ours, not the printers'.
	if f := cmd.Flags().Lookup("output"); f != nil {
		f.Usage = "Output format. One of: (" + strings.Join(o.allowedFormats(), ", ") + ")"
	}
	_ = cmd.RegisterFlagCompletionFunc("output", completeOutput(o.allowedFormats()))
	return cmd
}

// allowedFormats are every -o value status takes: the table (wide) and
// the printers of data.
func (o *StatusOptions) allowedFormats() []string {
	return append([]string{"wide"}, o.printFlags.AllowedFormats()...)
}

// completePrinter chooses the output: the table, wide or not, or a printer
// of PrintFlags. -o name is refused: kubectl's name printer writes
// KIND/NAME of objects, and a status is one scheduler's queue at one
// instant, not an object with a name.
func (o *StatusOptions) completePrinter() error {
	switch out := o.output(); out {
	case "":
	case "wide":
		o.wide = true
	case "name":
		return fmt.Errorf("-o name: status describes the scheduler's queue, which has no object name; status takes %s", strings.Join(o.allowedFormats(), ", "))
	default:
		p, err := o.printFlags.ToPrinter()
		if genericclioptions.IsNoCompatiblePrinterError(err) {
			return fmt.Errorf("-o %s: unknown output format; status takes %s", out, strings.Join(o.allowedFormats(), ", "))
		}
		if err != nil {
			return err
		}
		o.printObj = p.PrintObj
	}
	return nil
}

// validateInterval checks --interval of status and explain --watch.
func validateInterval(d time.Duration) error {
	if d < MinStatusInterval || d > MaxStatusInterval {
		return fmt.Errorf("--interval=%s: want %s to %s, such as the default %s", d, MinStatusInterval, MaxStatusInterval, DefaultStatusInterval)
	}
	return nil
}

// Validate checks the flags without I/O.
func (o *StatusOptions) Validate() error {
	if err := o.metricsFlags.validate(); err != nil {
		return err
	}
	if err := validateInterval(o.Interval); err != nil {
		return err
	}
	if o.Watch && o.MetricsFile != "" {
		return errors.New("--watch and --metrics-file do not go together: a file does not change")
	}
	if o.SchedulerName != "" && o.metricsFlags.named() {
		return errors.New("--scheduler-name picks the kube-scheduler that discovery reads; --metrics-url, --prometheus-url and --metrics-file name one already")
	}
	return o.completePrinter()
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
	if err := o.completePrinter(); err != nil {
		return err
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
	opts := withTLSFlags(o.metricsFlags.options(), o.getter)
	opts.Stdin = o.In
	opts.KubeConfig = o.getter.ToRawKubeConfigLoader()
	opts.SchedulerName = o.SchedulerName
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
	ctx, interrupted, stop := interruptible(ctx)
	defer stop()
	st, err := o.measure(ctx, nil)
	if interrupted() {
		return errInterrupted
	}
	if err != nil {
		return o.withRemedy(err)
	}
	if err := o.print(st, 0); err != nil {
		return err
	}
	if !o.Watch {
		return nil
	}
	last := st
	// The source finds the scheduler again at each scrape; continuity says
	// on stderr, once, when the watch lost it and found it again.
	var continuity metricscrape.Continuity
	continuity.Observe(st.Snapshot(), nil)
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
			continuity.Observe(nil, err)
			failed := last.DeepCopy()
			failed.Error = o.withRemedy(err).Error()
			st = failed
		} else {
			if notice := continuity.Observe(st.Snapshot(), nil); notice != "" {
				fmt.Fprintf(o.ErrOut, "watch: %s\n", quote.Line(notice))
			}
			last = st
		}
		if err := o.print(st, frame); err != nil {
			return err
		}
	}
}

// measure takes what one status needs: two snapshots, or with --watch one
// new snapshot compared to the previous status's.
func (o *StatusOptions) measure(ctx context.Context, prev *status.SchedulerStatus) (*status.SchedulerStatus, error) {
	if h, ok := o.source.(metricscrape.Historian); ok {
		return o.measureAt(ctx, h)
	}
	if prev != nil && prev.Snapshot() != nil {
		cur, err := o.scrape(ctx)
		if err != nil {
			return nil, err
		}
		return rated(prev.Snapshot(), cur)
	}
	first, err := o.scrape(ctx)
	if err != nil {
		return nil, err
	}
	if o.MetricsFile != "" {
		return status.NewSchedulerStatus(nil, first)
	}
	if o.Interval >= announcedWait {
		fmt.Fprintf(o.ErrOut, "waiting %s (--interval) for the second scrape, which gives the rates\n", o.Interval)
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
	return rated(first, cur)
}

// rated is the status of cur with the rates since prev, when both read the
// same scheduler; when a failover (or a replaced scheduler pod) came
// between them, cur alone, with a warning: counters of two schedulers give
// no rate.
func rated(prev, cur *metricscrape.Snapshot) (*status.SchedulerStatus, error) {
	if metricscrape.SameScheduler(prev.Origin, cur.Origin) {
		return status.NewSchedulerStatus(prev, cur)
	}
	st, err := status.NewSchedulerStatus(nil, cur)
	if err != nil {
		return nil, err
	}
	st.Warnings = append(st.Warnings, fmt.Sprintf("no rates: the scrapes %s apart read two schedulers (%s, then %s); rates start again from the next scrape",
		status.FormatWindow(cur.Time.Sub(prev.Time)), originName(prev.Origin), originName(cur.Origin)))
	return st, nil
}

// originName names the scheduler a scrape read, briefly.
func originName(o metricscrape.Origin) string {
	if o.Pod != "" {
		return o.Pod
	}
	return o.Address
}

// spanHolder is a Historian that can say over which span it holds the
// scheduler's series (metricscrape.PrometheusSource).
type spanHolder interface {
	HeldSpan(ctx context.Context, t time.Time, window time.Duration) (from, to time.Time, err error)
}

// measureAt reads the rates from a Historian over the rate window before
// now, or, when it holds less (right after a scheduler restart, a leader
// change or a new Prometheus), over the samples it holds, from the oldest
// to the newest: status answers from the first sample on and says how much
// data the rates cover.
func (o *StatusOptions) measureAt(ctx context.Context, h metricscrape.Historian) (*status.SchedulerStatus, error) {
	window := max(o.Interval, PrometheusRateWindow)
	now := o.clock.Now()
	from, to := now.Add(-window), now
	short := false
	if sh, ok := h.(spanHolder); ok {
		tctx, cancel := context.WithTimeout(ctx, o.timeout)
		first, last, err := sh.HeldSpan(tctx, now, window)
		cancel()
		if err != nil {
			return nil, err
		}
		if first.After(from) {
			from, to, short = first, last, true
		}
	}
	cur, err := o.scrapeAt(ctx, h, to)
	if err != nil {
		return nil, err
	}
	if !from.Before(to) {
		st, err := status.NewSchedulerStatus(nil, cur)
		if err != nil {
			return nil, err
		}
		st.Warnings = append(st.Warnings, fmt.Sprintf("%s holds one sample of the scheduler so far (at %s): no rates yet; run again after its next scrape",
			h, to.UTC().Format(time.RFC3339)))
		return st, nil
	}
	before, err := o.scrapeAt(ctx, h, from)
	if err != nil {
		return nil, err
	}
	st, err := status.NewSchedulerStatus(before, cur)
	if err != nil {
		return nil, err
	}
	if short {
		st.Warnings = append(st.Warnings, fmt.Sprintf("rates over the %s of data %s holds (%s to %s), less than %s: the scheduler, its leader or Prometheus started recently",
			status.FormatWindow(to.Sub(from)), h, from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339), status.FormatWindow(window)))
	}
	return st, nil
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
func (o *StatusOptions) print(st *status.SchedulerStatus, frame int) error {
	if !o.Watch {
		printWarnings(o.ErrOut, st.Warnings)
	}
	if o.printObj != nil {
		return o.printObj(st, o.Out)
	}
	var b strings.Builder
	if o.Watch {
		fmt.Fprintf(&b, "Every %s: kubectl schedq status    %s\n\n", o.Interval, st.Time.Local().Format("15:04:05"))
	}
	if err := printStatusTable(&b, st, tableOptions{wide: o.wide, warnings: o.Watch}); err != nil {
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

// withRemedy adds what the user can do to a scrape error.
func (o *StatusOptions) withRemedy(err error) error {
	var (
		forbidden   *metricscrape.ForbiddenError
		pfForbidden *metricscrape.PortForwardForbiddenError
		transport   *metricscrape.TransportError
		noLeader    *metricscrape.NoLeaderError
		notFound    *metricscrape.NotFoundError
		apiStep     *metricscrape.APIStepError
	)
	alternatives := "or read the metrics another way: --metrics-url URL, --prometheus-url URL or --metrics-file FILE"
	switch {
	case errors.As(err, &forbidden):
		return fmt.Errorf("%w\n\nA cluster admin can let %s read kube-scheduler's metrics with\n\nkubectl apply -f - <<'EOF'\n%sEOF\n\n%s",
			err, identityName(forbidden.Identity), forbidden.Remedy(), alternatives)
	case errors.As(err, &pfForbidden):
		return fmt.Errorf("%w\n\nFinding the scheduler needs access to %s; a cluster admin can let %s in with\n\nkubectl apply -f - <<'EOF'\n%sEOF\n\n%s",
			err, pfForbidden.Where(), identityName(pfForbidden.Identity), pfForbidden.Remedy(), alternatives)
	case errors.As(err, &notFound):
		// It names what was tried, the platform and the flag already.
		return err
	case errors.Is(err, metricscrape.ErrNoSchedulerPod):
		return fmt.Errorf("%w; use --metrics-url URL (a scheduler /metrics you can reach) or --prometheus-url URL (a Prometheus server that scrapes it)", err)
	case errors.As(err, &noLeader):
		return fmt.Errorf("%w; use --metrics-url with the leader's address", err)
	case errors.As(err, &apiStep) && bound.IsTimeout(err):
		// The API server did not answer on the way to the scheduler:
		// name that call, not the scrape.
		return bound.Call("finding the scheduler: "+apiStep.Step+" (API server)", o.timeout, err)
	case errors.As(err, &transport):
		switch transport.Kind {
		case metricscrape.Timeout:
			return bound.Call("reading the scheduler's metrics from "+transport.Target, o.timeout, err)
		case metricscrape.TLSFailure:
			if o.PrometheusURL != "" {
				if ca := o.PrometheusCertificateAuthority; ca != "" {
					return fmt.Errorf("%w; the Prometheus server's certificate is not signed by the CA in --prometheus-certificate-authority %s: pass the CA that signs it, or skip the check with --insecure-skip-tls-verify", err, ca)
				}
				return fmt.Errorf("%w; if the Prometheus server's certificate is signed by a private CA pass --prometheus-certificate-authority FILE, or skip the check with --insecure-skip-tls-verify", err)
			}
			if ca := withTLSFlags(metricscrape.Options{}, o.getter).CertificateAuthority; ca != "" {
				return fmt.Errorf("%w; the scheduler's serving certificate is not signed by the CA in --certificate-authority %s: pass the CA that signs it, or skip the check with --insecure-skip-tls-verify", err, ca)
			}
			return fmt.Errorf("%w; if the scheduler's serving certificate is signed by another CA pass --certificate-authority FILE, or skip the check with --insecure-skip-tls-verify", err)
		}
	}
	return bound.Scrape(o.source, o.timeout, err)
}

// identityName is who the cluster says the kubeconfig's credentials are,
// for a remedy addressed to a cluster admin.
func identityName(id *metricscrape.Identity) string {
	if id != nil && id.Username != "" {
		return id.String()
	}
	return "the identity"
}
