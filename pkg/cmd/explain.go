package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain/gather"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

// ExplainOptions explains pending pods.
type ExplainOptions struct {
	genericiooptions.IOStreams

	getter     genericclioptions.RESTClientGetter
	printFlags *genericclioptions.PrintFlags

	AllNamespaces bool
	Selector      string
	FieldSelector string
	NoHeaders     bool
	SortBy        string
	Watch         bool
	Interval      time.Duration
	SchedulerName string
	// SchedulerVersion overrides the version whose queue model explains
	// (--scheduler-version); empty: the scheduler's own, from its metrics.
	SchedulerVersion string
	schedulerVersion queue.Version
	// configGiven says which of the scheduler's settings were given as
	// flags (they override what the scheduler's /configz and /flagz say).
	configGiven func() gather.ConfigGiven
	NoMetrics   bool
	// AttemptRate scrapes the scheduler a second time, a second after the
	// first, for its attempt rate (--attempt-rate).
	AttemptRate bool
	metricsFlags

	PodInitialBackoff         time.Duration
	PodMaxBackoff             time.Duration
	PodMaxInUnschedulablePods time.Duration

	// namespaceGiven says -n was given: with no names nor selector, explain
	// lists the namespace's pending pods, as kubectl get pods -n does.
	namespaceGiven bool

	// Set by Complete.
	namespace string
	podNames  []string
	client    kubernetes.Interface
	source    metricscrape.Source
	timeout   time.Duration
	printObj  printers.ResourcePrinterFunc // nil: our table (wide or not), names or columns
	wide      bool
	names     bool     // -o name
	columns   []column // -o custom-columns
	terminal  bool     // Out is a terminal: --watch redraws in place
	after     func(time.Duration) <-chan time.Time
	clock     clock.PassiveClock
}

// NewExplainOptions returns the defaults.
func NewExplainOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *ExplainOptions {
	pf := genericclioptions.NewPrintFlags("")
	pf.NamePrintFlags = nil
	return &ExplainOptions{
		IOStreams:                 streams,
		getter:                    getter,
		printFlags:                pf,
		SchedulerName:             corev1.DefaultSchedulerName,
		PodInitialBackoff:         queue.DefaultPodInitialBackoffDuration,
		PodMaxBackoff:             queue.DefaultPodMaxBackoffDuration,
		PodMaxInUnschedulablePods: queue.DefaultPodMaxInUnschedulablePodsDuration,
		Interval:                  DefaultStatusInterval,
		clock:                     clock.RealClock{},
		after:                     time.After,
	}
}

// NewCmdExplain returns `kubectl schedq explain`.
func NewCmdExplain(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewExplainOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "explain (POD... | -n NAMESPACE | -l SELECTOR | --field-selector SELECTOR | -A)",
		Short: "Tell which scheduling queue each pending pod is in, why, and when it will be tried next",
		Long: `Tell, for each pending pod, where it is in kube-scheduler's scheduling queue —
activeQ, backoffQ, errorBackoffQ, unschedulablePods, gated, or in flight — why,
and when the scheduler will next try it.

The scheduler keeps its queue to itself, so explain infers the place from what
is visible: the pod (scheduling gates, PodScheduled condition, priority), its
FailedScheduling events, the scheduler's queue metrics, and the backoff
configuration (defaults 1s / 10s / 5m, or the flags below). It interprets them
with the queue's own rules (backoff formula, one-second windows,
PopFromBackoffQ, the 5-minute leftover flush) and says how sure it is: where
the evidence cannot tell two queues apart, it says so.

It only reads: pods, events, nodes, and the scheduler's metrics (found like
'kubectl schedq status' finds them). Without the metrics it still answers,
with lower confidence, and says what is missing. It lists pods, events and
nodes all at once, pods and nodes in pages of 500 as kubectl does, events in
pages of 5,000, and keeps of each object only what it reads.

With --watch it explains again at every --interval: on a terminal it redraws
the table; in a pipe, or with -o json, it writes one kubectl watch event per
line, as 'kubectl get -w -o json --output-watch-events' does:
{"type":"ADDED","object":{…}} for each pod at first and for a new one,
MODIFIED when a pod's state, queue or attempts change, DELETED when it is gone
(earlier releases wrote Changed and Gone, with the object under "pod").`,
		Example: `  # One pod
  kubectl schedq explain web-7d9f -n shop

  # Every pending pod in the cluster, one line each, with a count per queue
  kubectl schedq explain -A

  # Every pending pod of one namespace
  kubectl schedq explain -n shop

  # The pods on no node, chosen as kubectl chooses them
  kubectl schedq explain -A --field-selector spec.nodeName=,status.phase=Pending

  # Pods by label, with the next try's time and the next-retry window
  kubectl schedq explain -l app=web -o wide

  # Next tries timed by the scheduler's attempt rate (a second longer)
  kubectl schedq explain -A --attempt-rate

  # For scripts
  kubectl schedq explain -A -o json

  # A scheduler configured with podMaxBackoffSeconds: 30
  kubectl schedq explain -A --pod-max-backoff 30s

  # The pods of a second kube-scheduler, against its own queue
  kubectl schedq explain -A --scheduler-name my-scheduler`,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Which pods, first: a command line that names none is a usage
			// error, whatever the kubeconfig.
			o.podNames = args
			if f := cmd.Flags().Lookup("namespace"); f != nil && f.Changed {
				o.namespaceGiven = true
			}
			if err := o.validateTargets(); err != nil {
				return usageError(cmd, err)
			}
			if err := o.Complete(cmd, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return usageError(cmd, err)
			}
			return o.Run(cmd.Context())
		},
	}
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", o.AllNamespaces, "Explain every pending pod in every namespace")
	cmd.Flags().StringVarP(&o.Selector, "selector", "l", o.Selector, "Explain the pods matching this label selector")
	cmd.Flags().StringVar(&o.FieldSelector, "field-selector", o.FieldSelector, "Explain the pods matching this field selector, as kubectl get pods takes it (e.g. --field-selector status.phase=Pending,spec.nodeName=); the server supports a few fields per type")
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", o.Watch, `Explain again at every --interval: redraw the table on a terminal; in a pipe or with -o json, one kubectl watch event per pod that appears, moves or goes: {"type":"ADDED|MODIFIED|DELETED","object":{…}}`)
	cmd.Flags().DurationVar(&o.Interval, "interval", o.Interval, "Time between rounds with --watch (500ms to 1h)")
	cmd.Flags().BoolVar(&o.NoHeaders, "no-headers", o.NoHeaders, "Print the table (and custom columns) without the header line")
	cmd.Flags().StringVar(&o.SortBy, "sort-by", o.SortBy, "Sort the pods by this JSONPath into each item, e.g. .attempts, .confidence or .queue")
	cmd.Flags().StringVar(&o.SchedulerName, "scheduler-name", o.SchedulerName, "The scheduler name (a profile's schedulerName) whose pods to explain, against the kube-scheduler that serves it: the cluster's own, or a second kube-scheduler whose profiles have the name (its own metrics and configuration)")
	cmd.Flags().StringVar(&o.SchedulerVersion, "scheduler-version", o.SchedulerVersion, "The kube-scheduler version whose queue model explains (v1.34 to v1.37); default: the version the scheduler's metrics report, else the current release")
	cmd.Flags().BoolVar(&o.NoMetrics, "no-metrics", o.NoMetrics, "Do not read the scheduler's metrics (lower confidence)")
	cmd.Flags().BoolVar(&o.AttemptRate, "attempt-rate", o.AttemptRate, "Scrape the scheduler twice, a second apart, and time the next tries of pods waiting in activeQ by its attempt rate rather than by the gaps between the failures the events show; takes up to a second longer (less when listing the pods takes that long anyway)")
	cmd.Flags().DurationVar(&o.PodInitialBackoff, "pod-initial-backoff", o.PodInitialBackoff, "The scheduler's podInitialBackoffSeconds")
	cmd.Flags().DurationVar(&o.PodMaxBackoff, "pod-max-backoff", o.PodMaxBackoff, "The scheduler's podMaxBackoffSeconds")
	cmd.Flags().DurationVar(&o.PodMaxInUnschedulablePods, "pod-max-in-unschedulable-pods", o.PodMaxInUnschedulablePods, "How long a pod may wait in unschedulablePods before the leftover flush retries it")
	o.metricsFlags.addFlags(cmd)
	o.configGiven = func() gather.ConfigGiven {
		return gather.ConfigGiven{
			PodInitialBackoff:         cmd.Flags().Changed("pod-initial-backoff"),
			PodMaxBackoff:             cmd.Flags().Changed("pod-max-backoff"),
			PodMaxInUnschedulablePods: cmd.Flags().Changed("pod-max-in-unschedulable-pods"),
		}
	}
	o.printFlags.AddFlags(cmd)
	// wide, name and custom-columns are ours, not the printers'.
	if f := cmd.Flags().Lookup("output"); f != nil {
		f.Usage = "Output format. One of: (" + strings.Join(o.allowedFormats(), ", ") + ")"
	}
	_ = cmd.RegisterFlagCompletionFunc("output", completeOutput(o.allowedFormats()))
	cmd.ValidArgsFunction = completePodNames(getter)
	return cmd
}

// Complete resolves the namespace, the pods named, the client, the metrics
// source and the printer.
func (o *ExplainOptions) Complete(cmd *cobra.Command, args []string) error {
	var err error
	if o.podNames, err = podNames(args); err != nil {
		return err
	}
	if o.namespace, _, err = o.getter.ToRawKubeConfigLoader().Namespace(); err != nil {
		return kubeconfigError(err, "")
	}
	if err := o.completePrinter(); err != nil {
		return err
	}
	if f, ok := o.Out.(*os.File); ok {
		o.terminal = isTerminal(f)
	}
	if o.timeout, err = requestTimeout(cmd, o.getter); err != nil {
		return err
	}
	if o.client == nil { // set by tests
		cfg, err := restConfig(o.getter, "")
		if err != nil {
			return err
		}
		if o.client, err = kubernetes.NewForConfig(gather.ListConfig(cfg)); err != nil {
			return err
		}
	}
	if !o.NoMetrics && o.source == nil {
		opts := withTLSFlags(o.metricsFlags.options(), o.getter)
		opts.KubeConfig = o.getter.ToRawKubeConfigLoader()
		opts.Stdin = o.In
		opts.ExtraPaths = gather.ConfigPaths
		opts.SchedulerName = o.SchedulerName
		if o.source, err = metricscrape.Resolve(opts); err != nil {
			// Not fatal: explain still answers without the metrics.
			o.source = failedSource{err}
		}
	}
	return nil
}

// completePrinter chooses the output: our table (wide or not), names,
// custom columns, or one of the printers of PrintFlags.
func (o *ExplainOptions) completePrinter() error {
	out := o.output()
	switch {
	case out == "":
	case out == "wide":
		o.wide = true
	case out == "name":
		o.names = true
	case out == "custom-columns" || strings.HasPrefix(out, "custom-columns="):
		cols, err := parseCustomColumns(strings.TrimPrefix(strings.TrimPrefix(out, "custom-columns"), "="))
		if err != nil {
			return err
		}
		o.columns = cols
	default:
		p, err := o.printFlags.ToPrinter()
		if genericclioptions.IsNoCompatiblePrinterError(err) {
			return fmt.Errorf("-o %s: unknown output format; explain takes %s", out, strings.Join(o.allowedFormats(), ", "))
		}
		if err != nil {
			return err
		}
		o.printObj = p.PrintObj
	}
	return nil
}

// allowedFormats are every -o value explain takes.
func (o *ExplainOptions) allowedFormats() []string {
	return append(append([]string(nil), explainFormats...), o.printFlags.AllowedFormats()...)
}

func (o *ExplainOptions) output() string {
	if o.printFlags.OutputFormat == nil {
		return ""
	}
	return *o.printFlags.OutputFormat
}

// validateTargets checks how the pods are chosen: names, -n, -l,
// --field-selector or -A.
func (o *ExplainOptions) validateTargets() error {
	switch {
	case len(o.podNames) > 0 && o.Selector != "":
		return errors.New("pod names and -l/--selector do not go together: name pods, or select them")
	case len(o.podNames) > 0 && o.FieldSelector != "":
		return errors.New("pod names and --field-selector do not go together: name pods, or select them")
	case len(o.podNames) > 0 && o.AllNamespaces:
		return errors.New("pod names and -A/--all-namespaces do not go together: a name needs a namespace (-n)")
	case len(o.podNames) == 0 && o.Selector == "" && o.FieldSelector == "" && !o.AllNamespaces && !o.namespaceGiven:
		return errors.New("name pods, select them with -l or --field-selector, or take every pending pod of a namespace (-n NAMESPACE) or of all (-A)")
	}
	return nil
}

// Validate checks flag combinations.
func (o *ExplainOptions) Validate() error {
	if err := o.validateTargets(); err != nil {
		return err
	}
	if o.SchedulerVersion != "" {
		v, err := queue.ParseVersion(o.SchedulerVersion)
		if err != nil {
			return fmt.Errorf("--scheduler-version: %w", err)
		}
		o.schedulerVersion = v
	}
	switch {
	case o.NoMetrics && o.metricsFlags.named():
		return errors.New("--no-metrics and --metrics-url/--prometheus-url/--metrics-file do not go together")
	case o.NoMetrics && o.AttemptRate:
		return errors.New("--attempt-rate reads the scheduler's metrics: it does not go with --no-metrics")
	case o.Watch && o.AttemptRate:
		return errors.New("--watch measures the attempt rate between its rounds: --attempt-rate is for a single run")
	case o.PodInitialBackoff <= 0:
		return fmt.Errorf("--pod-initial-backoff=%s: want a positive duration", o.PodInitialBackoff)
	case o.PodMaxBackoff < o.PodInitialBackoff:
		return fmt.Errorf("--pod-max-backoff=%s is below --pod-initial-backoff=%s", o.PodMaxBackoff, o.PodInitialBackoff)
	case o.PodMaxInUnschedulablePods <= 0:
		return fmt.Errorf("--pod-max-in-unschedulable-pods=%s: want a positive duration", o.PodMaxInUnschedulablePods)
	}
	if o.Watch && (o.printObj != nil && o.output() != "json" || o.names || o.columns != nil) {
		return errors.New("--watch prints the table on a terminal and kubectl watch events in a pipe: it takes -o wide (the table) or -o json (the events), no other -o")
	}
	if err := validateInterval(o.Interval); err != nil {
		return err
	}
	if o.SortBy != "" {
		if _, err := compilePath(o.SortBy); err != nil {
			return fmt.Errorf("--sort-by=%s: %v (a JSONPath such as .attempts or {.confidence})", o.SortBy, err)
		}
	}
	if o.Selector != "" {
		if _, err := labels.Parse(o.Selector); err != nil {
			return fmt.Errorf("-l %q: %v", o.Selector, err)
		}
	}
	if o.FieldSelector != "" {
		if _, err := fields.ParseSelector(o.FieldSelector); err != nil {
			return fmt.Errorf("--field-selector %q: %v", o.FieldSelector, err)
		}
	}
	return o.metricsFlags.validate()
}

// failedSource remembers why no source could be resolved.
type failedSource struct{ err error }

func (f failedSource) Scrape(context.Context) (*metricscrape.Snapshot, error) { return nil, f.err }
func (f failedSource) String() string                                         { return "no source" }

// Run gathers, infers and prints.
func (o *ExplainOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.Watch {
		return o.watch(ctx)
	}
	ctx, interrupted, stop := interruptible(ctx)
	defer stop()
	defer gather.LowerGCPercent()()
	g, err := o.Gather(ctx)
	if interrupted() {
		return errInterrupted
	}
	if err != nil {
		return err
	}
	in, warnings, notFound := g.Input, g.Warnings, g.NotFound
	// Nothing listed is used after Infer, so that printing can reuse its memory.
	explained := len(in.Pods)

	list := explain.NewExplanationList(explain.Infer(in), warnings, notFound, in.Now)
	list.Model, list.ModelSource = in.Version.String(), in.VersionSource
	list.Config = explain.NewConfigStatus(in.Config, g.ConfigSource)
	if g.Snapshot != nil {
		list.Metrics = originText(g.Snapshot.Origin, false)
	}
	if o.SortBy != "" {
		if err := sortExplanations(list.Items, o.SortBy); err != nil {
			return err
		}
	}
	printWarnings(o.ErrOut, warnings)
	if err := o.print(list); err != nil {
		return err
	}
	if len(notFound) > 0 {
		return fmt.Errorf("pod(s) %s not found in namespace %q: name the pod's namespace with -n NAMESPACE ('kubectl get pods -A --field-selector metadata.name=%s' finds it)",
			strings.Join(quoteAll(notFound), ", "), o.namespace, notFound[0])
	}
	if explained == 0 && len(o.podNames) == 0 {
		switch {
		case o.Selector != "" || o.FieldSelector != "":
			fmt.Fprintln(o.ErrOut, "no pods match the selector")
		case o.AllNamespaces:
			fmt.Fprintln(o.ErrOut, "no pending pods")
		default:
			fmt.Fprintf(o.ErrOut, "no pending pods in namespace %q\n", o.namespace)
		}
	}
	return nil
}

// print writes the list to Out; the count per queue, which is not part of
// the table, goes to ErrOut so that a script reads the table alone.
func (o *ExplainOptions) print(list *explain.ExplanationList) error {
	// One write per 64 KB rather than one per line: a table of 5,000 pods
	// took 25 ms in write calls alone.
	out := bufio.NewWriterSize(o.Out, 64<<10)
	err := o.printTo(out, list)
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	return err
}

func (o *ExplainOptions) printTo(out io.Writer, list *explain.ExplanationList) error {
	switch {
	case o.printObj != nil:
		return o.printObj(list, out)
	case o.names:
		printNames(out, list.Items)
		return nil
	case o.columns != nil:
		return printCustomColumns(out, list.Items, o.columns, o.NoHeaders)
	}
	// Named pods get a paragraph each, unless -o wide asks for the table.
	detailed := len(o.podNames) > 0 && !o.wide
	if err := PrintExplanations(out, list, TableOptions{Wide: o.wide, Detailed: detailed, NoHeaders: o.NoHeaders}); err != nil {
		return err
	}
	if !detailed && len(list.Items) > 0 {
		PrintCounts(o.ErrOut, list)
		o.printMetricsOrigin(o.ErrOut, list)
	}
	return nil
}

// Gather lists the pods, the events and the nodes and scrapes the scheduler
// once (gather.Gather), as the flags say.
func (o *ExplainOptions) Gather(ctx context.Context) (*gather.Result, error) {
	req := gather.Request{
		Client: o.client, Source: o.source,
		Namespace: o.namespace, AllNamespaces: o.AllNamespaces, PodNames: o.podNames, Selector: o.Selector, FieldSelector: o.FieldSelector,
		SchedulerName: o.SchedulerName,
		Config:        explain.Config{PodInitialBackoff: o.PodInitialBackoff, PodMaxBackoff: o.PodMaxBackoff, PodMaxInUnschedulablePods: o.PodMaxInUnschedulablePods},
		Version:       o.schedulerVersion,
		ConfigGiven:   gather.ConfigGiven{PodInitialBackoff: true, PodMaxBackoff: true, PodMaxInUnschedulablePods: true},
		Now:           o.clock.Now(),
		Timeout:       o.timeout,
	}
	if o.configGiven != nil {
		req.ConfigGiven = o.configGiven()
	}
	if o.NoMetrics {
		req.MetricsOff = "--no-metrics"
	}
	if o.AttemptRate {
		req.SecondScrape = attemptRateWindow
	}
	if req.Timeout <= 0 {
		req.Timeout = DefaultRequestTimeout
	}
	return gather.Gather(ctx, req)
}

// printMetricsOrigin says where discovery found the scheduler's metrics;
// a source the flags named needs no saying.
func (o *ExplainOptions) printMetricsOrigin(w io.Writer, list *explain.ExplanationList) {
	if list.Metrics != "" && !o.metricsFlags.named() {
		fmt.Fprintf(w, "metrics: %s\n", list.Metrics)
	}
}

// attemptRateWindow is how far apart --attempt-rate's two scrapes are.
const attemptRateWindow = time.Second

// podNames takes the pods named on the command line as NAME or, the way
// kubectl prints them, pod/NAME.
func podNames(args []string) ([]string, error) {
	names := make([]string, 0, len(args))
	for _, a := range args {
		name := a
		if kind, n, ok := strings.Cut(a, "/"); ok {
			switch strings.ToLower(kind) {
			case "pod", "pods", "po":
				name = n
			default:
				return nil, fmt.Errorf("%q: explain takes pods, as NAME or pod/NAME", a)
			}
		}
		if name == "" || strings.Contains(name, "/") {
			return nil, fmt.Errorf("%q: explain takes pods, as NAME or pod/NAME", a)
		}
		names = append(names, name)
	}
	if len(names) == 0 {
		return nil, nil
	}
	return names, nil
}

func quoteAll(l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
