// Package report writes what workload runs measured: perf-dash DataItems
// files, the queue time series as JSON and CSV, a self-contained HTML report
// with charts, and the text tables the command prints (one run, or a
// feature gate on and off side by side).
package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/outfile"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/collect"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
)

// DateFormat is upstream's timestamp in DataItems file names.
const DateFormat = "2006-01-02T15:04:05Z"

// DataItemsFileName is upstream's name for a benchmark run's file,
// BenchmarkPerfScheduling[_<variant>]_benchmark_<topic>_<date>.json, which
// perf-dash finds by its BenchmarkPerfScheduling prefix. variant ("" for
// none) names the side of a comparison, as a sub-benchmark would.
func DataItemsFileName(variant, topic string, at time.Time) string {
	prefix := runner.DefaultNamePrefix
	if variant != "" {
		prefix += "_" + fileSafe(variant)
	}
	return fmt.Sprintf("%s_benchmark_%s_%s.json", prefix, fileSafe(topic), at.UTC().Format(DateFormat))
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// fileSafe turns s into something a file name can hold.
func fileSafe(s string) string {
	return strings.Trim(unsafeChars.ReplaceAllString(strings.ReplaceAll(s, "=", "_"), "_"), "_")
}

// DataItemsOf collects the items of results, in order, with every label
// key on every item (collect.FillLabels), as upstream's
// dataItems2JSONFile writes them.
func DataItemsOf(results []*runner.Result) collect.DataItems {
	out := collect.DataItems{Version: collect.DataItemsVersion, DataItems: []collect.DataItem{}}
	for _, r := range results {
		for _, it := range r.DataItems {
			out.DataItems = append(out.DataItems, copyItem(it))
		}
	}
	collect.FillLabels(out.DataItems)
	return out
}

func copyItem(it collect.DataItem) collect.DataItem {
	c := collect.DataItem{Unit: it.Unit}
	if it.Data != nil {
		c.Data = make(map[string]float64, len(it.Data))
		for k, v := range it.Data {
			c.Data[k] = v
		}
	}
	if it.Labels != nil {
		c.Labels = make(map[string]string, len(it.Labels))
		for k, v := range it.Labels {
			c.Labels[k] = v
		}
	}
	return c
}

// MaxReadBytes caps each file of a run that is read back (results.json, a
// DataItems file): a long run's queue series at one sample a second are
// some megabytes per workload, and a device or a wrong file must end in an
// error, not in memory exhausted.
const MaxReadBytes = 256 << 20

// WriteDataItems writes results' items to dir as one perf-dash file (see
// DataItemsFileName) and returns its name.
func WriteDataItems(dir *outfile.Dir, variant, topic string, at time.Time, results []*runner.Result) (string, error) {
	data, err := json.Marshal(DataItemsOf(results))
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, data, "", "  "); err != nil {
		return "", err
	}
	buf.WriteByte('\n')
	name := DataItemsFileName(variant, topic, at)
	return name, dir.WriteFile(name, buf.Bytes(), 0o644)
}

// ReadDataItems reads a DataItems file the way perf-dash does: JSON with
// version v1, items with data, unit and labels.
func ReadDataItems(path string) (*collect.DataItems, error) {
	data, err := bound.ReadFile(context.Background(), path, MaxReadBytes)
	if err != nil {
		return nil, err
	}
	var items collect.DataItems
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&items); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if items.Version != collect.DataItemsVersion {
		return nil, fmt.Errorf("%s: version %q, want %q", path, items.Version, collect.DataItemsVersion)
	}
	return &items, nil
}
