package run

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// resultSeed is one result as perf run writes it, with a window, its
// throughput samples and latencies, data items, the queue series and ops.
const resultSeed = `{"path":"/w/backoff-drain.yaml","testCase":"BackoffDrain","workload":"4Nodes_40Blocked","cluster":"embedded","variant":"%s",
"featureGates":{"SchedulerPopFromBackoffQ":true},"start":"2026-01-02T03:04:05Z","duration":12000000000,
"dataItems":[{"data":{"Average":120.5,"Perc50":118,"Perc90":130,"Perc95":131,"Perc99":140},"unit":"pods/s","labels":{"Metric":"SchedulingThroughput","Name":"BenchmarkPerfScheduling/BackoffDrain/4Nodes_40Blocked/drain"}},
{"data":{"Average":3.2,"Perc50":2,"Perc90":6,"Perc99":9},"unit":"ms","labels":{"Metric":"scheduler_scheduling_attempt_duration_seconds","result":"scheduled"}}],
"windows":[{"name":"drain","namespaces":["namespace-2"],"start":1.5,"end":9.25,"throughput":[{"seconds":1,"rate":100,"total":100},{"seconds":3,"rate":50,"total":200}],"throughputStart":1.5,"latencies":[{"namespace":"namespace-2","millis":[1,2,3,40],"unmatched":1}],"bound":40}],
"queue":{"start":"2026-01-02T03:04:05Z","samples":[{"t":0,"pending":{"active":0,"backoff":40},"incoming":{"backoff/PodAdd":40},"attempts":{"scheduled":3},"inFlight":1},{"t":1,"pending":{"active":2,"backoff":10}}],"windows":[{"name":"drain","start":1.5,"end":9.25}]},
"ops":[{"index":0,"opcode":"createNodes","start":0,"end":0.5},{"index":1,"opcode":"createPods","start":0.5,"end":9,"namespace":"namespace-2"}],
"warnings":["a window without throughput samples"],"thresholdErrors":["x"],"error":""}`

// FuzzDecodeResults feeds arbitrary bytes to the results.json reader and,
// when they decode, renders everything perf report renders from them (the
// table, side by side for a comparison, and the HTML report): nothing may
// panic, however odd the numbers, names and lengths.
func FuzzDecodeResults(f *testing.F) {
	for _, s := range []string{
		"[" + fmt.Sprintf(resultSeed, "") + "]",
		"[" + fmt.Sprintf(resultSeed, "SchedulerPopFromBackoffQ=true") + "," + fmt.Sprintf(resultSeed, "SchedulerPopFromBackoffQ=false") + "]",
		"[" + fmt.Sprintf(resultSeed, "G=true") + "]",
		`[{"workload":"w","windows":[{"name":"x","throughput":[],"latencies":[{"millis":[]}]}],"queue":{"samples":[{"t":-1}]}}]`,
		`[{"workload":"w","error":"it failed"}]`,
		`[{"workload":"w","duration":-9223372036854775808,"ops":[{"index":-1,"start":1e308,"end":-1e308}]}]`,
		`[]`, `null`, `[null]`, `{}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		all, err := DecodeResults(data)
		if err != nil {
			return
		}
		h := ReportOf(all, "perf report DIR")
		if _, err := Table(h); err != nil {
			return
		}
		if err := h.Write(io.Discard); err != nil {
			t.Fatalf("decoded results that the report cannot render: %v", err)
		}
		_ = failedRuns(all)
	})
}

// TestDecodeResults_seed: the fuzz target's seed is a results.json that
// decodes and renders, so that fuzzing starts from the real shape.
func TestDecodeResults_seed(t *testing.T) {
	all, err := DecodeResults([]byte("[" + fmt.Sprintf(resultSeed, "G=true") + "," + fmt.Sprintf(resultSeed, "G=false") + "]"))
	if err != nil {
		t.Fatal(err)
	}
	table, err := Table(ReportOf(all, "perf report DIR"))
	if err != nil || !strings.Contains(table, "G=true") || !strings.Contains(table, "120.5") {
		t.Errorf("table = %q, %v", table, err)
	}
}
