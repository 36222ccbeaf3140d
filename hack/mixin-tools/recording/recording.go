// Package recording turns the queue series a `schedq-perf run` records (one
// sample of the scheduler's queue metrics a second, queue_<run>.json) back
// into the series a Prometheus scraping that scheduler every second would
// hold: promtool's input_series for the alert tests.
package recording

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Interval is the recordings' sampling interval (the runner's
// collect.QueueInterval), and the interval of the input series.
const Interval = time.Second

// QueueSeries and QueueSample read the runner's queue_<run>.json
// (pkg/perf/QueueSeries), as far as the alerts need it. This
// module cannot import the plugin's packages: Prometheus v0.316 needs a
// newer client_golang than pkg/metricscrape builds with.
type QueueSeries struct {
	Samples []QueueSample `json:"samples"`
}

// QueueSample is the queue at one instant: Seconds since the workload's
// start, pending pods by queue label, cumulative incoming counters by
// "<queue>/<event>" and attempts by result.
type QueueSample struct {
	Seconds  float64            `json:"t"`
	Pending  map[string]float64 `json:"pending"`
	Incoming map[string]float64 `json:"incoming,omitempty"`
	Attempts map[string]float64 `json:"attempts,omitempty"`
}

// Recording is one run's queue series. The file name says the gate:
// <name>.gate-on.json or <name>.gate-off.json.
type Recording struct {
	// Name is the file name without .json.
	Name string
	// PopFromBackoffQ is the SchedulerPopFromBackoffQ gate of the run; the
	// series do not carry it.
	PopFromBackoffQ bool
	Series          QueueSeries
}

// Load reads a recording.
func Load(path string) (*Recording, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &Recording{Name: strings.TrimSuffix(filepath.Base(path), ".json")}
	switch {
	case strings.HasSuffix(r.Name, ".gate-on"):
		r.PopFromBackoffQ = true
	case strings.HasSuffix(r.Name, ".gate-off"):
	default:
		return nil, fmt.Errorf("%s: the name must end in .gate-on.json or .gate-off.json", path)
	}
	if err := json.Unmarshal(data, &r.Series); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(r.Series.Samples) == 0 {
		return nil, fmt.Errorf("%s: no samples", path)
	}
	return r, nil
}

// Steps places each sample on the Interval grid (rounded to the nearest
// step), the way a 1 s scrape would see it: step → sample index, -1 for a
// step no sample fell on. A later sample on the same step wins.
func (r *Recording) Steps() []int {
	last := r.Series.Samples[len(r.Series.Samples)-1].Seconds
	steps := make([]int, int(math.Round(last/Interval.Seconds()))+1)
	for i := range steps {
		steps[i] = -1
	}
	for i, s := range r.Series.Samples {
		if st := int(math.Round(s.Seconds / Interval.Seconds())); st >= 0 {
			steps[st] = i
		}
	}
	return steps
}

// Series is one input series: its Prometheus series description and its
// values, one per step ("_" where it has none), as promtool's input_series
// and promqltest's load take them.
type Series struct {
	Desc   string
	Values string
}

// InputSeries returns the recording as the series kube-scheduler serves,
// labelled as a scrape by job (e.g. "kube-scheduler") of instance would
// label them, sorted by description.
func (r *Recording) InputSeries(job, instance string) []Series {
	steps := r.Steps()
	type key struct{ metric, labels string }
	values := map[key][]string{}
	put := func(k key, step int, v float64) {
		if values[k] == nil {
			values[k] = make([]string, len(steps))
			for i := range values[k] {
				values[k][i] = "_"
			}
		}
		values[k][step] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	gate := 0.0
	if r.PopFromBackoffQ {
		gate = 1
	}
	for step, i := range steps {
		if i < 0 {
			continue
		}
		s := r.Series.Samples[i]
		for q, v := range s.Pending {
			put(key{"scheduler_pending_pods", label("queue", q)}, step, v)
		}
		for qe, v := range s.Incoming {
			q, ev, _ := strings.Cut(qe, "/")
			put(key{"scheduler_queue_incoming_pods_total", label("event", ev) + "," + label("queue", q)}, step, v)
		}
		for res, v := range s.Attempts {
			put(key{"scheduler_schedule_attempts_total", label("result", res)}, step, v)
		}
		put(key{"kubernetes_feature_enabled", label("name", "SchedulerPopFromBackoffQ") + "," + label("stage", "BETA")}, step, gate)
	}
	target := label("instance", instance) + "," + label("job", job)
	out := make([]Series, 0, len(values))
	for k, v := range values {
		out = append(out, Series{Desc: k.metric + "{" + k.labels + "," + target + "}", Values: strings.Join(v, " ")})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Desc < out[j].Desc })
	return out
}

func label(name, value string) string { return name + "=" + strconv.Quote(value) }

// StepTime is the time of step on the input series' clock, which starts at
// the Unix epoch as promtool's and promqltest's do.
func (r *Recording) StepTime(step int) time.Time {
	return time.Unix(0, 0).UTC().Add(time.Duration(step) * Interval)
}
