// Package explainacc measures how well `kubectl schedq explain` knows the
// scheduling queue: it records, at many instants, what the command would
// read (pending pods, FailedScheduling events, one scrape of the scheduler's
// metrics) next to the scheduler's own ground truth, and every pod's pops;
// then it scores explain.Infer on the recording — placement accuracy per
// queue, calibration of the stated confidence, and the error of the
// next-retry window against the pod's actual next pop.
//
// Infer is pure, so a recording can be scored again, offline, after explain
// changes (Load, Score). The tests that drive a real control plane are in
// this package's _test files.
package explainacc

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-schedq/kubectl-schedq/perf/groundtruth"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
)

// Recording is one run: samples of explain's input with the ground truth
// around them, and when each pod was popped.
type Recording struct {
	// Name names the run; PopFromBackoffQ is the gate's setting.
	Name            string `json:"name"`
	PopFromBackoffQ bool   `json:"popFromBackoffQ"`
	// Scenario and Seed say which scenario ran (empty for a workload of
	// workloads/), with which seed (a workload ignores it: it only tells a
	// calibration training run from a reported one); KubeVersion is the
	// control plane's Kubernetes version.
	Scenario    string `json:"scenario,omitempty"`
	Seed        uint64 `json:"seed,omitempty"`
	KubeVersion string `json:"kubeVersion,omitempty"`
	// Config is the scheduler's backoff configuration, as given to explain.
	Config explain.Config `json:"config"`
	// Start and End bound the run; pops are known until End.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Load is the machine's load average over one minute when the run
	// began and when it ended: the scheduler's pace, and so the timing the
	// next retries are scored on, depends on it.
	Load [2]float64 `json:"load"`

	Samples []Sample `json:"samples"`
	// Pops lists, by pod UID, when the scheduler popped the pod: recorded
	// where the scheduler takes its next pod (groundtruth.Pops).
	Pops groundtruth.Pops `json:"pops"`

	// rateWindow, when not 0, gives each sample's input the attempt rate
	// between its scrape and the latest one at least that long before
	// (WithAttemptRate).
	rateWindow time.Duration

	// lastSeen is when each pod UID was last in the ground truth, and
	// lastSample the last sample's time (indexLastSeen).
	lastSeen   map[string]time.Time
	lastSample time.Time

	// The objects the samples refer to, each version once, by ObjectKey.
	Pods   map[string]*corev1.Pod   `json:"pods"`
	Events map[string]*corev1.Event `json:"events"`
	Nodes  map[string]*corev1.Node  `json:"nodes"`
	// PodGroups are the pod groups explain read (v1.37 with
	// GenericWorkload); absent from older recordings.
	PodGroups map[string]*schedulingv1beta1.PodGroup `json:"podGroups,omitempty"`
}

// Sample is one instant: what explain would read, and the ground truth read
// just before the command began reading, a little later (when the API
// server and the scheduler have answered the calls, whatever the answers
// then take to arrive), and once it had finished reading.
type Sample struct {
	// Start is when the reading began; Now is explain's Now; Done is when
	// the reading ended.
	Start time.Time `json:"start"`
	Now   time.Time `json:"now"`
	Done  time.Time `json:"done"`
	// Pods are the pending pods (explain -A: every one is explained).
	Pods   []string `json:"pods"`
	Events []string `json:"events"`
	// Nodes is nil when explain had no nodes.
	Nodes []string `json:"nodes"`
	// PodGroups is nil when explain read no PodGroups, empty when it read
	// none (a member's group does not exist yet): kept apart, like Nodes.
	PodGroups []string `json:"podGroups"`

	Metrics        *explain.QueueMetrics `json:"metrics,omitempty"`
	MetricsMissing string                `json:"metricsMissing,omitempty"`

	// Before, Mid and After are the ground truth, by "namespace/name".
	Before map[string]Place `json:"before"`
	Mid    map[string]Place `json:"mid"`
	After  map[string]Place `json:"after"`
}

// Place is a pod's place in the ground truth.
type Place struct {
	Queue    groundtruth.QueueName `json:"queue"`
	Attempts int                   `json:"attempts"`
	UID      string                `json:"uid,omitempty"`
}

// Places indexes a ground-truth snapshot.
func Places(q groundtruth.Queue) map[string]Place {
	out := make(map[string]Place, len(q.Pods))
	for _, p := range q.Pods {
		out[p.Key()] = Place{Queue: p.Queue, Attempts: p.Attempts, UID: p.UID}
	}
	return out
}

// NewRecording returns an empty recording.
func NewRecording(name string, pfb bool, cfg explain.Config) *Recording {
	return &Recording{
		Name: name, PopFromBackoffQ: pfb, Config: cfg,
		Pops: groundtruth.Pops{}, Pods: map[string]*corev1.Pod{}, Events: map[string]*corev1.Event{}, Nodes: map[string]*corev1.Node{},
		PodGroups: map[string]*schedulingv1beta1.PodGroup{},
	}
}

// ObjectKey identifies one version of an object.
func ObjectKey(uid, name, resourceVersion string) string {
	if uid == "" {
		uid = name
	}
	return uid + "@" + resourceVersion
}

// keepObject stores a copy of obj, without its managed fields, under its
// ObjectKey in kept unless that version is there already, and returns the key.
func keepObject[T interface {
	metav1.Object
	DeepCopy() T
}](kept map[string]T, name string, obj T) string {
	k := ObjectKey(string(obj.GetUID()), name, obj.GetResourceVersion())
	if _, ok := kept[k]; !ok {
		c := obj.DeepCopy()
		c.SetManagedFields(nil)
		kept[k] = c
	}
	return k
}

// AddSample records in, an input of explain.Infer, with the ground truth
// around its reading. Objects are kept once per version; their managed
// fields, which explain does not read, are dropped.
func (r *Recording) AddSample(start, done time.Time, in explain.Input, before, mid, after groundtruth.Queue) {
	s := Sample{Start: start, Now: in.Now, Done: done, Metrics: in.Metrics, MetricsMissing: in.MetricsMissing, Before: Places(before), Mid: Places(mid), After: Places(after)}
	for _, p := range in.Pods {
		s.Pods = append(s.Pods, keepObject(r.Pods, p.Namespace+"/"+p.Name, p))
	}
	for i := range in.Events {
		e := &in.Events[i]
		s.Events = append(s.Events, keepObject(r.Events, e.Namespace+"/"+e.Name, e))
	}
	if in.Nodes != nil {
		s.Nodes = []string{}
	}
	for _, n := range in.Nodes {
		s.Nodes = append(s.Nodes, keepObject(r.Nodes, n.Name, n))
	}
	if in.PodGroups != nil {
		s.PodGroups = []string{}
		if r.PodGroups == nil {
			r.PodGroups = map[string]*schedulingv1beta1.PodGroup{}
		}
	}
	for _, pg := range in.PodGroups {
		s.PodGroups = append(s.PodGroups, keepObject(r.PodGroups, pg.Namespace+"/"+pg.Name, pg))
	}
	r.Samples = append(r.Samples, s)
}

// WithAttemptRate returns r as explain --attempt-rate would have read it:
// each sample's metrics with the attempt rate since the latest sample at
// least window before it (explain scrapes again a second after; the rate
// over the second before is as good a reading of the scheduler's pace).
func (r *Recording) WithAttemptRate(window time.Duration) *Recording {
	c := *r
	c.rateWindow = window
	return &c
}

// attemptRate is the attempt rate before sample i, if r.rateWindow asks for
// one and an earlier sample is near enough (within three windows).
func (r *Recording) attemptRate(i int) (*float64, time.Duration) {
	s := r.Samples[i]
	if r.rateWindow == 0 || s.Metrics == nil {
		return nil, 0
	}
	for j := i - 1; j >= 0; j-- {
		p := r.Samples[j]
		d := s.Now.Sub(p.Now)
		if d < r.rateWindow {
			continue
		}
		if d > 3*r.rateWindow || p.Metrics == nil {
			return nil, 0
		}
		total := 0.0
		for k, v := range s.Metrics.Attempts {
			total += v - p.Metrics.Attempts[k]
		}
		rate := total / d.Seconds()
		return &rate, d
	}
	return nil, 0
}

// Input rebuilds sample i's input of explain.Infer.
func (r *Recording) Input(i int) explain.Input {
	s := r.Samples[i]
	in := explain.Input{Now: s.Now, Metrics: s.Metrics, MetricsMissing: s.MetricsMissing, Config: r.Config}
	if rate, window := r.attemptRate(i); rate != nil {
		m := *s.Metrics
		m.AttemptRate, m.RateWindow = rate, window
		in.Metrics = &m
	}
	for _, k := range s.Pods {
		in.Pods = append(in.Pods, r.Pods[k])
	}
	for _, k := range s.Events {
		in.Events = append(in.Events, *r.Events[k])
	}
	if s.Nodes != nil {
		in.Nodes = []*corev1.Node{}
	}
	for _, k := range s.Nodes {
		in.Nodes = append(in.Nodes, r.Nodes[k])
	}
	if s.PodGroups != nil {
		in.PodGroups = []*schedulingv1beta1.PodGroup{}
	}
	for _, k := range s.PodGroups {
		in.PodGroups = append(in.PodGroups, r.PodGroups[k])
	}
	return in
}

// indexLastSeen notes when each pod was last in the ground truth.
func (r *Recording) indexLastSeen() {
	r.lastSeen = map[string]time.Time{}
	for _, s := range r.Samples {
		for _, places := range []map[string]Place{s.Before, s.Mid, s.After} {
			for _, p := range places {
				r.lastSeen[p.UID] = s.Now
			}
		}
		r.lastSample = s.Now
	}
}

// leftUnpopped reports whether the pod left the queue before the run's
// last sample, after its last pop: it was deleted, and has no next try to
// score.
func (r *Recording) leftUnpopped(uid string) bool {
	t, ok := r.lastSeen[uid]
	return ok && t.Before(r.lastSample)
}

// Save writes the recording, gzipped JSON.
func (r *Recording) Save(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(f)
	if err := json.NewEncoder(zw).Encode(r); err != nil {
		f.Close()
		return err
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Load reads what Save wrote.
func Load(path string) (*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var r Recording
	if err := json.NewDecoder(zr).Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// LoadAverage is the machine's load average over the last minute, 0 where
// /proc/loadavg cannot be read.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _, _ := strings.Cut(string(b), " ")
	v, _ := strconv.ParseFloat(f, 64)
	return v
}
