package report

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/outfile"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/perf/runner"
)

// RunBaseName is the stem of a run's files: queue_<test case>_<workload>
// plus the variant.
func RunBaseName(r *runner.Result) string {
	name := r.TestCase + "_" + r.Workload
	if r.Variant != "" {
		name += "_" + r.Variant
	}
	return fileSafe(name)
}

// WriteSeries writes r's queue time series to dir as
// queue_<run>.json (the whole series, with its windows) and
// queue_<run>.csv (one row per sample) and returns both names.
func WriteSeries(dir *outfile.Dir, r *runner.Result) (jsonName, csvName string, err error) {
	base := "queue_" + RunBaseName(r)
	data, err := json.MarshalIndent(r.Queue, "", "  ")
	if err != nil {
		return "", "", err
	}
	if err := dir.WriteFile(base+".json", append(data, '\n'), 0o644); err != nil {
		return "", "", err
	}
	if err := dir.Write(base+".csv", 0o644, func(w io.Writer) error { return WriteSeriesCSV(w, r) }); err != nil {
		return "", "", err
	}
	return base + ".json", base + ".csv", nil
}

// WriteSeriesCSV writes the queue series as CSV: seconds since the
// workload's start, the pending gauge of each queue, the in-flight pods, the
// attempts by result and every incoming counter seen (cumulative), and the
// measurement window the sample falls in.
func WriteSeriesCSV(w io.Writer, r *runner.Result) error {
	cw := csv.NewWriter(w)
	incoming := r.Queue.IncomingKeys()
	header := []string{"seconds"}
	for _, q := range metricscrape.Queues {
		header = append(header, "pending_"+q)
	}
	header = append(header, "in_flight")
	for _, res := range metricscrape.Results {
		header = append(header, "attempts_"+res)
	}
	for _, k := range incoming {
		header = append(header, "incoming_"+k)
	}
	header = append(header, "window")
	if err := cw.Write(header); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, s := range r.Queue.Samples {
		row := []string{strconv.FormatFloat(s.Seconds, 'f', 3, 64)}
		for _, q := range metricscrape.Queues {
			row = append(row, f(s.Pending[q]))
		}
		row = append(row, f(s.InFlight))
		for _, res := range metricscrape.Results {
			row = append(row, f(s.Attempts[res]))
		}
		for _, k := range incoming {
			row = append(row, f(s.Incoming[k]))
		}
		window := ""
		for _, win := range r.Queue.Windows {
			if s.Seconds >= win.Start && (s.Seconds <= win.End || win.End == 0) {
				window = win.Name
			}
		}
		row = append(row, window)
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
