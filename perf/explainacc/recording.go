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
	"sort"
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
	// Name names the scenario; PopFromBackoffQ is the gate's setting.
	Name            string `json:"name"`
	PopFromBackoffQ bool   `json:"popFromBackoffQ"`
	// Config is the scheduler's backoff configuration, as given to explain.
	Config explain.Config `json:"config"`
	// Start and End bound the run; pops are known until End.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// PollInterval is how often the ground truth was meant to be read to
	// find pops; PollGaps are how far apart the reads really were (p50,
	// p99, max): a busy machine stalls them.
	PollInterval time.Duration    `json:"pollInterval"`
	PollGaps     [3]time.Duration `json:"pollGaps"`

	Samples []Sample `json:"samples"`
	// Pops lists, by "namespace/name", when the pod was popped.
	Pops map[string][]time.Time `json:"pops"`

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
}

// Places indexes a ground-truth snapshot.
func Places(q groundtruth.Queue) map[string]Place {
	out := make(map[string]Place, len(q.Pods))
	for _, p := range q.Pods {
		out[p.Key()] = Place{Queue: p.Queue, Attempts: p.Attempts}
	}
	return out
}

// NewRecording returns an empty recording.
func NewRecording(name string, pfb bool, cfg explain.Config) *Recording {
	return &Recording{
		Name: name, PopFromBackoffQ: pfb, Config: cfg,
		Pops: map[string][]time.Time{}, Pods: map[string]*corev1.Pod{}, Events: map[string]*corev1.Event{}, Nodes: map[string]*corev1.Node{},
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

// Input rebuilds sample i's input of explain.Infer.
func (r *Recording) Input(i int) explain.Input {
	s := r.Samples[i]
	in := explain.Input{Now: s.Now, Metrics: s.Metrics, MetricsMissing: s.MetricsMissing, Config: r.Config}
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

// PopTracker turns a stream of ground-truth snapshots into pop times: a pod
// was popped when its attempts grew, or when it left the queue for good
// (bound, or deleted) without being seen in flight.
//
// A snapshot reads the sub-queues one after the other, so a pod moving
// between two of them can be missing from one snapshot: a pod that is
// missing and comes back with the same attempts was not popped.
type PopTracker struct {
	attempts map[string]int
	// gone are the pods missing from the last snapshot, with when they
	// were first missed and whether they were last seen in flight.
	gone map[string]goneAt
	last map[string]Place
	pops map[string][]time.Time
}

type goneAt struct {
	t        time.Time
	inFlight bool
}

// NewPopTracker returns an empty tracker.
func NewPopTracker() *PopTracker {
	return &PopTracker{attempts: map[string]int{}, gone: map[string]goneAt{}, last: map[string]Place{}, pops: map[string][]time.Time{}}
}

// Observe takes the snapshot read at t.
//
// A pop is seen at the first read after it, which is late when the reads
// are (a busy machine stalls them). A pod back in a queue after its
// attempt carries the attempt's failure time (QueuedPodInfo.Timestamp), a
// few milliseconds after the pop: whichever is earlier bounds the pop.
func (pt *PopTracker) Observe(t time.Time, q groundtruth.Queue) {
	cur := Places(q)
	for _, p := range q.Pods {
		k := p.Key()
		// A pod new to the tracker has been popped Attempts times since it
		// was created (the tracker must be observing before the pods it
		// follows are created).
		for range p.Attempts - pt.attempts[k] {
			pt.pops[k] = append(pt.pops[k], t)
		}
		pt.attempts[k] = max(pt.attempts[k], p.Attempts)
		delete(pt.gone, k)
		if n := len(pt.pops[k]); p.Queue != groundtruth.InFlight && n > 0 && n == p.Attempts && !p.Timestamp.IsZero() && p.Timestamp.Before(pt.pops[k][n-1]) {
			if n < 2 || p.Timestamp.After(pt.pops[k][n-2]) {
				pt.pops[k][n-1] = p.Timestamp
			}
		}
	}
	for k, prev := range pt.last {
		if _, ok := cur[k]; !ok {
			pt.gone[k] = goneAt{t: t, inFlight: prev.Queue == groundtruth.InFlight}
		}
	}
	pt.last = cur
}

// Pops returns the pop times by pod. Pods that left the queue without being
// seen in flight were popped when they were first missed.
func (pt *PopTracker) Pops() map[string][]time.Time {
	out := make(map[string][]time.Time, len(pt.pops))
	for k, v := range pt.pops {
		out[k] = append([]time.Time(nil), v...)
	}
	for k, g := range pt.gone {
		if !g.inFlight {
			out[k] = append(out[k], g.t)
		}
	}
	for k := range out {
		sort.Slice(out[k], func(i, j int) bool { return out[k][i].Before(out[k][j]) })
	}
	return out
}
