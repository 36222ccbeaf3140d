// Package gather reads what explain needs from a cluster: the pods to
// explain, every pending pod, the FailedScheduling events, the nodes and one
// scrape of the scheduler, all at once and each bounded, trimmed page by page
// to what explain reads (list.go) and shared where many objects hold alike
// (share.go). pkg/explain then infers from the Input it returns, with no I/O.
package gather

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

// Request says what to gather, and from where.
type Request struct {
	// Client reads the API (a client made with ListConfig lists faster).
	Client kubernetes.Interface
	// Source is the scheduler's metrics; MetricsOff, when not empty, says
	// why they are not read (e.g. "--no-metrics") and Source is not used.
	Source     metricscrape.Source
	MetricsOff string

	// Namespace holds the pods to explain, unless AllNamespaces.
	Namespace     string
	AllNamespaces bool
	// PodNames are the pods to explain; none: every pending pod of the
	// namespace, or those Selector and FieldSelector match (kubectl's label
	// and field selectors).
	PodNames      []string
	Selector      string
	FieldSelector string
	// SchedulerName is the profile whose pods are explained.
	SchedulerName string
	// Config is the scheduler's backoff and flush settings as the flags
	// give them (defaults included); ConfigGiven says which the user gave:
	// the others are read from the scheduler's /configz and /flagz when the
	// source reaches its endpoint.
	Config      explain.Config
	ConfigGiven ConfigGiven
	// Version is the queue model to explain with; zero: the scheduler's own
	// version, read from its metrics.
	Version queue.Version

	// Now is when the calls are made; Timeout bounds them all, the scrape
	// included.
	Now     time.Time
	Timeout time.Duration
	// SecondScrape, when not 0, scrapes the scheduler again that long after
	// the first scrape (or once the lists are done, if later), for its
	// attempt rate (QueueMetrics.AttemptRate).
	SecondScrape time.Duration
}

// Result is what was gathered: explain's Input, and what could not be read.
type Result struct {
	Input explain.Input
	// Warnings say what could not be read, and what that costs.
	Warnings []string
	// NotFound are the named pods that do not exist.
	NotFound []string
	// ConfigSource says where Input.Config came from.
	ConfigSource string
	// Snapshot is the scrape (nil without one), MetricsErr why it failed:
	// a watch follows the scheduler it reads with them.
	Snapshot   *metricscrape.Snapshot
	MetricsErr error
}

// Gather lists the pods, the events and the nodes and scrapes the scheduler
// once, all at the same time, answered as nearly at one instant as they can
// be; lists come in pages (listPods), so the number of calls grows by one
// per 500 objects. Input.Now is when
// the calls were made: the API server answers a list, and the scheduler a
// scrape, as of when it receives the call, however long the answer then
// takes to arrive and be decoded.
func Gather(ctx context.Context, req Request) (*Result, error) {
	ns := req.Namespace
	if req.AllNamespaces {
		ns = metav1.NamespaceAll
	}
	pending := fields.OneTermEqualSelector("spec.nodeName", "").String()
	failed := fields.OneTermEqualSelector("reason", explain.FailedSchedulingReason).String()
	// Every pending pod counts (the queue metrics count all of them): with a
	// name or a selector, they are listed besides the targets.
	selected := req.Selector != "" || req.FieldSelector != ""
	listAll := !req.AllNamespaces || selected
	now := req.Now
	// Every call is bounded, the scrape included.
	limit := req.Timeout
	if limit <= 0 {
		return nil, fmt.Errorf("gather: no bound on the calls (Request.Timeout is %s)", limit)
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()

	var (
		wg                                      sync.WaitGroup
		targetList, allList                     []*corev1.Pod
		events                                  []corev1.Event
		nodes                                   []*corev1.Node
		snap                                    *metricscrape.Snapshot
		targetErr, allErr, evErr, nodeErr, sErr error
	)
	run := func(f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f()
		}()
	}
	run(func() {
		opts := metav1.ListOptions{}
		if len(req.PodNames) == 0 {
			opts.LabelSelector, opts.FieldSelector = req.Selector, req.FieldSelector
			if !selected {
				opts.FieldSelector = pending
			}
		}
		targetList, targetErr = listPods(ctx, req.Client, ns, opts)
	})
	if listAll {
		run(func() {
			allList, allErr = listPods(ctx, req.Client, metav1.NamespaceAll, metav1.ListOptions{FieldSelector: pending})
		})
	}
	eventsNamespaced := false
	run(func() {
		events, evErr = listEvents(ctx, req.Client, metav1.NamespaceAll, metav1.ListOptions{FieldSelector: failed})
		if apierrors.IsForbidden(evErr) && ns != metav1.NamespaceAll {
			events, evErr = listEvents(ctx, req.Client, ns, metav1.ListOptions{FieldSelector: failed})
			eventsNamespaced = true
		}
	})
	run(func() {
		nodes, nodeErr = listNodes(ctx, req.Client)
	})
	if req.MetricsOff == "" {
		run(func() {
			snap, sErr = req.Source.Scrape(ctx)
			sErr = bound.Scrape(req.Source, limit, sErr)
		})
	}
	wg.Wait()
	var rate *metricscrape.Rates
	if req.SecondScrape > 0 && sErr == nil && snap != nil {
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(snap.Time.Add(req.SecondScrape))):
		}
		if again, err := req.Source.Scrape(ctx); err == nil {
			rate, _ = metricscrape.NewRates(snap, again)
		}
	}

	// 1. The pods to explain.
	var targets []*corev1.Pod
	var notFound []string
	if targetErr != nil {
		call := fmt.Sprintf("listing pods in namespace %q", ns)
		if ns == metav1.NamespaceAll {
			call = "listing pods in all namespaces"
			if apierrors.IsForbidden(targetErr) {
				return nil, fmt.Errorf("%s: %w; you may not list pods in every namespace: name one with -n NAMESPACE instead of -A", call, targetErr)
			}
		}
		return nil, bound.Call(call, limit, targetErr)
	}
	if len(req.PodNames) > 0 {
		byName := map[string]*corev1.Pod{}
		for _, p := range targetList {
			byName[p.Name] = p
		}
		for _, n := range req.PodNames {
			if p, ok := byName[n]; ok {
				targets = append(targets, p)
			} else {
				notFound = append(notFound, n)
			}
		}
	} else {
		targets = targetList
	}

	// 2. Every pending pod.
	var warnings []string
	all := targets
	if listAll {
		switch {
		case allErr == nil:
			all = allList
		case apierrors.IsForbidden(allErr):
			warnings = append(warnings, "cannot list pods in all namespaces: placement is reasoned over this namespace's pending pods only")
		default:
			return nil, bound.Call("listing pending pods in all namespaces", limit, allErr)
		}
	}

	// 3. FailedScheduling events.
	if evErr != nil {
		events = nil
		warnings = append(warnings, fmt.Sprintf("cannot list events (%v): failures are read from the pods' conditions only", shortError(bound.Call("listing FailedScheduling events", limit, evErr))))
	}

	// 4. Nodes: the ones added since a pod failed may have moved it on.
	if nodeErr != nil {
		nodes = nil
		warnings = append(warnings, fmt.Sprintf("cannot list nodes (%v): nodes added since a pod failed are not seen", shortError(bound.Call("listing nodes", limit, nodeErr))))
	}

	// 5. The scrape.
	var notServed *metricscrape.NotServedError
	in := explain.Input{
		Pods: targets, PendingPods: all, Events: events, EventsNamespaced: eventsNamespaced, Nodes: nodes, SchedulerName: req.SchedulerName,
		Config: req.Config,
	}
	switch {
	case req.MetricsOff != "":
		in.MetricsMissing = req.MetricsOff
	case errors.As(sErr, &notServed):
		// The pods of that name are in no kube-scheduler's queue: none is
		// placed (explain.Input.NotServed), which the warning says why.
		in.MetricsMissing = shortError(sErr)
		in.NotServed = sErr.Error()
		warnings = append(warnings, sErr.Error())
	case sErr == nil && snap.Leader != nil && !*snap.Leader:
		// A standby replica's queue holds the pods its informers saw and
		// never tries them: its counts say nothing of the live queue.
		in.MetricsMissing = fmt.Sprintf("the scheduler read (%s) is not the leader: its queue is not live", orDefault(snap.Origin.Pod, snap.Origin.Address))
		in.Profiles = snap.Origin.Profiles
		warnings = append(warnings, in.MetricsMissing+"; placing without its queue counts (the leader may have changed: run again)")
	case sErr != nil:
		in.MetricsMissing = shortError(sErr)
		warnings = append(warnings, fmt.Sprintf("no scheduler metrics (%s): queue counts unknown, confidence is lower; see 'kubectl schedq status' for the remedy", in.MetricsMissing))
	default:
		in.Metrics = queueMetrics(snap)
		in.Profiles = snap.Origin.Profiles
		SetRates(in.Metrics, rate)
		warnings = append(warnings, snap.Warnings...)
	}
	in.Now = now
	var configNotes []string
	var configSource string
	in.Config, configSource, configNotes = schedulerConfig(req, snap)
	warnings = append(warnings, configNotes...)
	var note string
	in.Version, in.VersionSource, note = modelVersion(req.Version, snap)
	if note != "" {
		warnings = append(warnings, note)
	}
	if explain.GroupsQueued(in) {
		if pgs, note := listPodGroups(ctx, req.Client, all, limit); note != "" {
			warnings = append(warnings, note)
		} else {
			in.PodGroups = pgs
		}
	}
	return &Result{Input: in, Warnings: warnings, NotFound: notFound, ConfigSource: configSource, Snapshot: snap, MetricsErr: sErr}, nil
}

func queueMetrics(s *metricscrape.Snapshot) *explain.QueueMetrics {
	m := &explain.QueueMetrics{Pending: map[string]float64{}, Version: s.Build.GitVersion}
	for k, v := range s.Pending {
		m.Pending[k] = v
	}
	if on, known := s.GateEnabled(metricscrape.GateSchedulerPopFromBackoffQ); known {
		m.PopFromBackoffQ = &on
	}
	if on, known := s.GateEnabled(metricscrape.GateGenericWorkload); known {
		m.GenericWorkload = &on
	}
	if n, ok := s.InFlightEvents[metricscrape.InFlightPodPoppedEvent]; ok {
		m.InFlight = &n
	}
	if len(s.Attempts) > 0 {
		m.Attempts = make(map[string]float64, len(s.Attempts))
		for k, v := range s.Attempts {
			m.Attempts[k] = v
		}
	}
	if len(s.Incoming) > 0 {
		m.Incoming = map[string]map[string]float64{}
		for k, v := range s.Incoming {
			if m.Incoming[k.Queue] == nil {
				m.Incoming[k.Queue] = map[string]float64{}
			}
			m.Incoming[k.Queue][k.Event] += v
		}
	}
	return m
}

// SetRates gives m the attempt rate of r, when r is a rate of one
// scheduler (not a restart between the scrapes).
func SetRates(m *explain.QueueMetrics, r *metricscrape.Rates) {
	if m == nil || r == nil || r.Reset {
		return
	}
	total := r.AttemptsTotal()
	m.AttemptRate, m.RateWindow = &total, r.Window
}

// modelVersion picks the queue model: the version given (--scheduler-version), else the
// scheduler's version from its metrics (kubernetes_build_info), else the
// current release, with a note saying why.
func modelVersion(given queue.Version, snap *metricscrape.Snapshot) (queue.Version, string, string) {
	if given != 0 {
		return given, "--scheduler-version", ""
	}
	why := "no scheduler metrics"
	if snap != nil {
		v, err := snap.SchedulerVersion()
		if err == nil {
			return v, "the scheduler's kubernetes_build_info", ""
		}
		why = err.Error()
	}
	return queue.DefaultVersion, "default", fmt.Sprintf("%s: explaining with the %s queue model (name the version with --scheduler-version)", why, queue.DefaultVersion)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// shortError keeps the first line of an error.
func shortError(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
