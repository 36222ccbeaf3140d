package metricscrape

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
)

// Snapshot is what kube-scheduler's metrics say about its queue at one instant.
// Series that carry labels beyond the ones a field is keyed by (profile, or a
// Prometheus server's job and instance) are summed, as `sum by (queue)` would.
type Snapshot struct {
	// Time is when the metrics were read (for a Prometheus source, the
	// evaluation time of the query).
	Time time.Time
	// Origin says where the metrics came from.
	Origin Origin

	// Pending is scheduler_pending_pods by queue (active, backoff,
	// unschedulable, gated). A queue the scheduler did not report is absent.
	Pending map[string]float64
	// Incoming is scheduler_queue_incoming_pods_total by (queue, event).
	Incoming map[QueueEvent]float64
	// Attempts is scheduler_schedule_attempts_total by result, over all profiles.
	Attempts map[string]float64
	// Profiles are the scheduler profiles seen in the attempts counter.
	Profiles []string
	// UnschedulableByPlugin is scheduler_unschedulable_pods by plugin: pods
	// whose last failure involved the plugin, wherever they sit now.
	UnschedulableByPlugin map[string]float64
	// InFlightEvents is scheduler_inflight_events by event; "PodPopped"
	// counts the in-flight pods.
	InFlightEvents map[string]float64
	// QueuedEntities is v1.37's scheduler_queued_entities by (queue, type);
	// empty before v1.37.
	QueuedEntities map[QueueType]float64
	// ScheduledAfterFlush is scheduler_pod_scheduled_after_flush_total, or
	// nil when the scheduler does not have it (before 1.36).
	ScheduledAfterFlush *float64

	// SLI is scheduler_pod_scheduling_sli_duration_seconds by its attempts
	// label ("1" … "14", "15+").
	SLI map[string]Histogram
	// PodSchedulingAttempts is scheduler_pod_scheduling_attempts.
	PodSchedulingAttempts Histogram

	// FeatureGates is kubernetes_feature_enabled by gate name.
	FeatureGates map[string]FeatureGate
	// Build is kubernetes_build_info.
	Build BuildInfo
	// Leader is leader_election_master_status{name="kube-scheduler"}: nil
	// when the scheduler does not report it (leader election off).
	Leader *bool

	// Extra are the answers of the paths read beside /metrics
	// (Options.ExtraPaths), by path; nil when none was asked or the source
	// reaches no scheduler endpoint.
	Extra map[string]*Extra `json:"-"`
	// NoConfig, when set, says why the source that was asked for the
	// extra paths does not serve them (EKS's metrics API).
	NoConfig string `json:"-"`

	// Warnings name the series whose values were kept although they look
	// wrong (a negative gauge, a queue label the scheduler does not use),
	// with the source they came from.
	Warnings []string
}

// QueueEvent keys scheduler_queue_incoming_pods_total.
type QueueEvent struct {
	Queue string `json:"queue"`
	Event string `json:"event"`
}

// QueueType keys scheduler_queued_entities.
type QueueType struct {
	Queue string `json:"queue"`
	Type  string `json:"type"`
}

// SchedulerVersion is the queue model of the scheduler's version, from
// kubernetes_build_info's git_version; an error when the scheduler did not
// report it or it is none of the modelled versions (the error says which).
func (s *Snapshot) SchedulerVersion() (v queue.Version, err error) {
	if s.Build.GitVersion == "" {
		return 0, fmt.Errorf("the scheduler reports no version (no %s series)", BuildInfoMetric)
	}
	return queue.ParseVersion(s.Build.GitVersion)
}

// FeatureGate is one gate's state as the scheduler reports it.
type FeatureGate struct {
	Enabled bool `json:"enabled"`
	// Stage is ALPHA, BETA, DEPRECATED, or empty for GA.
	Stage string `json:"stage,omitempty"`
}

// BuildInfo is the scheduler's version, from kubernetes_build_info.
type BuildInfo struct {
	GitVersion string `json:"gitVersion,omitempty"`
	GitCommit  string `json:"gitCommit,omitempty"`
	GoVersion  string `json:"goVersion,omitempty"`
	Platform   string `json:"platform,omitempty"`
}

// Histogram is a classic Prometheus histogram.
type Histogram struct {
	// Buckets are sorted by UpperBound; the last one is +Inf when present.
	Buckets []Bucket `json:"buckets,omitempty"`
	Count   float64  `json:"count"`
	Sum     float64  `json:"sum"`
}

// Bucket is one cumulative histogram bucket.
type Bucket struct {
	UpperBound      float64 `json:"upperBound"`
	CumulativeCount float64 `json:"cumulativeCount"`
}

// Mean is Sum/Count, or 0 for an empty histogram.
func (h Histogram) Mean() float64 {
	if h.Count == 0 {
		return 0
	}
	return h.Sum / h.Count
}

// Quantile estimates the q-quantile by linear interpolation inside the
// bucket that holds it, the way PromQL's histogram_quantile does. It returns
// NaN for an empty histogram; a quantile in the +Inf bucket is the largest
// finite bound.
func (h Histogram) Quantile(q float64) float64 {
	if len(h.Buckets) == 0 || q < 0 || q > 1 || math.IsNaN(q) {
		return math.NaN()
	}
	total := h.Buckets[len(h.Buckets)-1].CumulativeCount
	if total == 0 {
		return math.NaN()
	}
	rank := q * total
	prevBound, prevCount := 0.0, 0.0
	for i, b := range h.Buckets {
		if b.CumulativeCount >= rank {
			if math.IsInf(b.UpperBound, 1) {
				if i == 0 {
					return math.NaN()
				}
				return h.Buckets[i-1].UpperBound
			}
			if b.CumulativeCount == prevCount {
				return b.UpperBound
			}
			return prevBound + (b.UpperBound-prevBound)*(rank-prevCount)/(b.CumulativeCount-prevCount)
		}
		prevBound, prevCount = b.UpperBound, b.CumulativeCount
	}
	return prevBound
}

// PendingTotal is the number of pods in activeQ, backoffQ,
// unschedulablePods (gated ones included) and, on v1.37, the pod-group
// queues. In-flight pods are in none.
func (s *Snapshot) PendingTotal() float64 {
	var n float64
	for _, q := range KnownQueues {
		n += s.Pending[q]
	}
	return n
}

// GateEnabled reports a gate's state and whether the scheduler reported it.
func (s *Snapshot) GateEnabled(name string) (enabled, known bool) {
	g, ok := s.FeatureGates[name]
	return g.Enabled, ok
}

// IncomingKeys returns the (queue, event) pairs in a stable order: by queue
// in Queues order, then by event name.
func (s *Snapshot) IncomingKeys() []QueueEvent {
	keys := make([]QueueEvent, 0, len(s.Incoming))
	for k := range s.Incoming {
		keys = append(keys, k)
	}
	sortQueueEvents(keys)
	return keys
}

func sortQueueEvents(keys []QueueEvent) {
	rank := func(q string) int {
		for i, name := range Queues {
			if q == name {
				return i
			}
		}
		return len(Queues)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, rj := rank(keys[i].Queue), rank(keys[j].Queue)
		if ri != rj {
			return ri < rj
		}
		if keys[i].Queue != keys[j].Queue {
			return keys[i].Queue < keys[j].Queue
		}
		return keys[i].Event < keys[j].Event
	})
}

// ParseError is a malformed text exposition, with the line that broke it.
type ParseError struct {
	// Source names the input (a URL or a file).
	Source string
	// Line is 1-based; 0 when the parser did not say.
	Line int
	// Text is the offending line, shortened, when it could be recovered.
	Text string
	Msg  string
}

func (e *ParseError) Error() string {
	var b strings.Builder
	if e.Source != "" {
		b.WriteString(e.Source)
		b.WriteString(":")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:", e.Line)
	}
	if b.Len() > 0 {
		b.WriteString(" ")
	}
	fmt.Fprintf(&b, "malformed metrics exposition: %s", e.Msg)
	if e.Text != "" {
		fmt.Fprintf(&b, " (line: %q)", e.Text)
	}
	return b.String()
}

// NotSchedulerError says the metrics parsed but do not come from a
// kube-scheduler.
type NotSchedulerError struct {
	Source string
	// Families is how many metric families the exposition had.
	Families int
	// Looks names what the metrics look like, when recognisable.
	Looks string
	// Examples are a few of the family names that were there.
	Examples []string
}

func (e *NotSchedulerError) Error() string {
	var b strings.Builder
	if e.Source != "" {
		fmt.Fprintf(&b, "%s: ", e.Source)
	}
	if e.Families == 0 {
		b.WriteString("no metrics at all: this is not a kube-scheduler's /metrics")
		return b.String()
	}
	fmt.Fprintf(&b, "not a kube-scheduler: no %s among %d metric families", PendingPodsMetric, e.Families)
	if e.Looks != "" {
		fmt.Fprintf(&b, "; it looks like %s", e.Looks)
	}
	if len(e.Examples) > 0 {
		fmt.Fprintf(&b, " (%s, …)", strings.Join(e.Examples, ", "))
	}
	return b.String()
}

// ParseText reads a Prometheus text exposition of kube-scheduler's metrics
// with prometheus/common's parser. source names the input in errors.
func ParseText(source string, data []byte) (*Snapshot, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(data))
	if err != nil {
		return nil, parseError(source, data, err)
	}
	if err := checkTypes(source, data, families); err != nil {
		return nil, err
	}
	return FromFamilies(source, families)
}

func parseError(source string, data []byte, err error) error {
	var pe expfmt.ParseError
	if !errors.As(err, &pe) {
		return &ParseError{Source: source, Msg: err.Error()}
	}
	out := &ParseError{Source: source, Line: pe.Line, Msg: pe.Msg}
	if pe.Line > 0 {
		out.Text = lineOf(data, pe.Line)
	}
	if bytes.Contains(data, []byte("\r\n")) {
		out.Msg += "; the exposition has CRLF (Windows) line endings, which the text format does not allow: convert them to LF (dos2unix FILE, or tr -d '\\r')"
	}
	return out
}

// familyTypes are the types kube-scheduler gives the families a Snapshot
// reads. A # TYPE that says otherwise would read as other series (a
// histogram's _bucket, _sum and _count) or as none, so it is an error;
// untyped (what federation and some exporters write) is accepted.
var familyTypes = map[string]dto.MetricType{
	PendingPodsMetric:                dto.MetricType_GAUGE,
	QueueIncomingPodsMetric:          dto.MetricType_COUNTER,
	ScheduleAttemptsMetric:           dto.MetricType_COUNTER,
	PodSchedulingSLIDurationMetric:   dto.MetricType_HISTOGRAM,
	PodSchedulingAttemptsMetric:      dto.MetricType_HISTOGRAM,
	UnschedulablePodsMetric:          dto.MetricType_GAUGE,
	PodScheduledAfterFlushMetric:     dto.MetricType_COUNTER,
	InFlightEventsMetric:             dto.MetricType_GAUGE,
	FeatureEnabledMetric:             dto.MetricType_GAUGE,
	BuildInfoMetric:                  dto.MetricType_GAUGE,
	LeaderElectionMasterStatusMetric: dto.MetricType_GAUGE,
}

// checkTypes refuses a family whose # TYPE contradicts the type
// kube-scheduler gives it, naming the series and the line.
func checkTypes(source string, data []byte, families map[string]*dto.MetricFamily) error {
	for name, want := range familyTypes {
		f, ok := families[name]
		if !ok || f.GetType() == want || f.GetType() == dto.MetricType_UNTYPED {
			continue
		}
		line := typeLine(data, name)
		e := &ParseError{Source: source, Line: line, Msg: fmt.Sprintf("# TYPE %s %s: kube-scheduler's %s is a %s",
			name, strings.ToLower(f.GetType().String()), name, strings.ToLower(want.String()))}
		if line > 0 {
			e.Text = lineOf(data, line)
		}
		return e
	}
	return nil
}

// typeLine is the 1-based line of name's # TYPE comment, 0 if none.
func typeLine(data []byte, name string) int {
	prefix := []byte("# TYPE " + name + " ")
	for n := 1; len(data) > 0; n++ {
		line := data
		if nl := bytes.IndexByte(data, '\n'); nl >= 0 {
			line, data = data[:nl], data[nl+1:]
		} else {
			data = nil
		}
		if bytes.HasPrefix(line, prefix) {
			return n
		}
	}
	return 0
}

// lineOf returns the n-th line (1-based) of data, shortened to 120 bytes.
func lineOf(data []byte, n int) string {
	for i := 1; i < n; i++ {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return ""
		}
		data = data[nl+1:]
	}
	if nl := bytes.IndexByte(data, '\n'); nl >= 0 {
		data = data[:nl]
	}
	const max = 120
	if len(data) > max {
		return string(data[:max]) + "…"
	}
	return string(data)
}

// FromFamilies builds a Snapshot from parsed metric families. It refuses
// metrics that are not a kube-scheduler's.
func FromFamilies(source string, families map[string]*dto.MetricFamily) (*Snapshot, error) {
	if _, ok := families[PendingPodsMetric]; !ok {
		return nil, notScheduler(source, families)
	}
	wanted := make([]*dto.MetricFamily, 0, len(wantedFamilies))
	for name := range wantedFamilies {
		if f, ok := families[name]; ok {
			wanted = append(wanted, f)
		}
	}
	samples, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{}, wanted...)
	if err != nil {
		return nil, &ParseError{Source: source, Msg: err.Error()}
	}
	snap, err := FromSamples(samples)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	for i, w := range snap.Warnings {
		snap.Warnings[i] = source + ": " + w
	}
	return snap, nil
}

func notScheduler(source string, families map[string]*dto.MetricFamily) error {
	names := make([]string, 0, len(families))
	for name := range families {
		names = append(names, name)
	}
	sort.Strings(names)
	e := &NotSchedulerError{Source: source, Families: len(names)}
	has := func(prefix string) bool {
		for _, n := range names {
			if strings.HasPrefix(n, prefix) {
				return true
			}
		}
		return false
	}
	switch {
	case has("apiserver_request"):
		e.Looks = "kube-apiserver"
	case has("kubelet_"):
		e.Looks = "a kubelet"
	case has("node_collector_") || has("replicaset_controller_") || has("job_controller_"):
		e.Looks = "kube-controller-manager"
	case has("kubeproxy_"):
		e.Looks = "kube-proxy"
	case has("etcd_server_"):
		e.Looks = "etcd"
	case has("prometheus_tsdb_"):
		e.Looks = "a Prometheus server (use --prometheus-url for that)"
	case has("node_cpu_"):
		e.Looks = "node-exporter"
	case has("scheduler_"):
		e.Looks = "a scheduler other than kube-scheduler"
	}
	for _, n := range names {
		if len(e.Examples) == 3 {
			break
		}
		e.Examples = append(e.Examples, n)
	}
	return e
}

// FromSamples builds a Snapshot from flat samples, the form both a text
// exposition (through expfmt.ExtractSamples) and a Prometheus query give.
// Histograms arrive as their _bucket, _sum and _count series. Samples of
// other series are ignored. In a series the Snapshot keeps, an infinite or
// NaN value, a value beyond any count (above 2^53), a negative counter and a
// series given twice are errors; a negative gauge and a queue label the
// scheduler does not use are kept, with a warning.
func FromSamples(samples model.Vector) (*Snapshot, error) {
	s := &Snapshot{
		Pending:               map[string]float64{},
		Incoming:              map[QueueEvent]float64{},
		Attempts:              map[string]float64{},
		UnschedulableByPlugin: map[string]float64{},
		InFlightEvents:        map[string]float64{},
		QueuedEntities:        map[QueueType]float64{},
		SLI:                   map[string]Histogram{},
		FeatureGates:          map[string]FeatureGate{},
	}
	profiles := map[string]bool{}
	sli := map[string]*histogramBuilder{}
	var attemptsHist histogramBuilder
	seen := map[model.Fingerprint]bool{}
	for _, smp := range samples {
		if smp == nil {
			continue
		}
		name := string(smp.Metric[model.MetricNameLabel])
		v := float64(smp.Value)
		label := func(l string) string { return string(smp.Metric[model.LabelName(l)]) }

		base, suffix := name, ""
		for _, suf := range []string{histogramBucketSuffix, histogramSumSuffix, histogramCountSuffix} {
			if strings.HasSuffix(name, suf) {
				if b := strings.TrimSuffix(name, suf); b == PodSchedulingSLIDurationMetric || b == PodSchedulingAttemptsMetric {
					base, suffix = b, suf
				}
			}
		}
		if !wantedFamilies[base] {
			continue
		}
		// Every value must be finite; counters and histogram counts must not
		// be negative. Gauges may be: an upstream accounting bug is worth
		// showing, not hiding.
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0) || (v < 0 && isCount(base, suffix)):
			return nil, fmt.Errorf("%s has value %v", describeSample(smp), v)
		case math.Abs(v) > maxCount && base != PodSchedulingSLIDurationMetric:
			return nil, fmt.Errorf("%s has value %v, beyond any count", describeSample(smp), v)
		case v < 0:
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s has value %v: a count below zero (an accounting bug in the scheduler?)", describeSample(smp), v))
		}
		if fp := smp.Metric.Fingerprint(); seen[fp] {
			return nil, fmt.Errorf("%s is given twice", describeSample(smp))
		} else {
			seen[fp] = true
		}

		switch base {
		case PendingPodsMetric:
			q := label(QueueLabel)
			if !knownQueue(q) {
				s.Warnings = append(s.Warnings, fmt.Sprintf("%s: queue %q is not one the scheduler reports (%s); it is counted in no queue", describeSample(smp), q, strings.Join(KnownQueues, ", ")))
			}
			s.Pending[q] += v
		case QueueIncomingPodsMetric:
			s.Incoming[QueueEvent{Queue: label(QueueLabel), Event: label(EventLabel)}] += v
		case ScheduleAttemptsMetric:
			s.Attempts[label(ResultLabel)] += v
			if p := label(ProfileLabel); p != "" {
				profiles[p] = true
			}
		case UnschedulablePodsMetric:
			s.UnschedulableByPlugin[label(PluginLabel)] += v
		case InFlightEventsMetric:
			s.InFlightEvents[label(EventLabel)] += v
		case QueuedEntitiesMetric:
			s.QueuedEntities[QueueType{Queue: label(QueueLabel), Type: label(TypeLabel)}] += v
		case PodScheduledAfterFlushMetric:
			total := v
			if s.ScheduledAfterFlush != nil {
				total += *s.ScheduledAfterFlush
			}
			s.ScheduledAfterFlush = &total
		case FeatureEnabledMetric:
			s.FeatureGates[label(NameLabel)] = FeatureGate{Enabled: v > 0, Stage: label(StageLabel)}
		case BuildInfoMetric:
			s.Build = BuildInfo{
				GitVersion: label(GitVersionLabel),
				GitCommit:  label(GitCommitLabel),
				GoVersion:  label(GoVersionLabel),
				Platform:   label(PlatformLabel),
			}
		case LeaderElectionMasterStatusMetric:
			if label(leaseNameLabel) == SchedulerLeaseName {
				leader := v > 0
				s.Leader = &leader
			}
		case PodSchedulingSLIDurationMetric:
			a := label(AttemptsLabel)
			if sli[a] == nil {
				sli[a] = &histogramBuilder{}
			}
			if err := sli[a].add(suffix, smp); err != nil {
				return nil, err
			}
		case PodSchedulingAttemptsMetric:
			if err := attemptsHist.add(suffix, smp); err != nil {
				return nil, err
			}
		}
	}
	for p := range profiles {
		s.Profiles = append(s.Profiles, p)
	}
	sort.Strings(s.Profiles)
	for a, b := range sli {
		s.SLI[a] = b.histogram()
	}
	s.PodSchedulingAttempts = attemptsHist.histogram()
	return s, nil
}

// maxCount is the largest count a float64 holds exactly; a count beyond it
// is not a count.
const maxCount = 1 << 53

func knownQueue(q string) bool {
	for _, name := range KnownQueues {
		if q == name {
			return true
		}
	}
	return false
}

// histogramBuilder sums the series of one histogram, bucket by bucket.
type histogramBuilder struct {
	buckets map[float64]float64
	count   float64
	sum     float64
}

func (h *histogramBuilder) add(suffix string, smp *model.Sample) error {
	v := float64(smp.Value)
	switch suffix {
	case histogramBucketSuffix:
		le := string(smp.Metric[model.BucketLabel])
		bound, err := strconv.ParseFloat(le, 64)
		if err != nil || math.IsNaN(bound) {
			return fmt.Errorf("%s has a bad %s label %q", describeSample(smp), model.BucketLabel, le)
		}
		if h.buckets == nil {
			h.buckets = map[float64]float64{}
		}
		h.buckets[bound] += v
	case histogramSumSuffix:
		h.sum += v
	case histogramCountSuffix:
		h.count += v
	}
	return nil
}

func (h *histogramBuilder) histogram() Histogram {
	out := Histogram{Count: h.count, Sum: h.sum}
	for bound, n := range h.buckets {
		out.Buckets = append(out.Buckets, Bucket{UpperBound: bound, CumulativeCount: n})
	}
	sort.Slice(out.Buckets, func(i, j int) bool { return out.Buckets[i].UpperBound < out.Buckets[j].UpperBound })
	return out
}

// isCount reports whether a series counts things and so cannot go below zero.
func isCount(base, suffix string) bool {
	switch base {
	case QueueIncomingPodsMetric, ScheduleAttemptsMetric, PodScheduledAfterFlushMetric:
		return true
	case PodSchedulingSLIDurationMetric, PodSchedulingAttemptsMetric:
		return suffix != histogramSumSuffix
	}
	return false
}

// describeSample prints a sample as name{labels}.
func describeSample(smp *model.Sample) string {
	return smp.Metric.String()
}

// readAllLimited reads at most limit bytes of metrics from r, named what,
// and fails beyond that.
func readAllLimited(r io.Reader, limit int64, what string) ([]byte, error) {
	data, err := bound.ReadAll(r, limit, what)
	if bound.IsTooLarge(err) {
		return nil, fmt.Errorf("%w: this is not a kube-scheduler's /metrics", err)
	}
	return data, err
}
