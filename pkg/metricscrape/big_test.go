package metricscrape

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
)

// writeBigExposition writes a recorded kube-scheduler exposition followed
// by other families (counters, gauges and histograms with many label
// values, as a large component's /metrics has) until about size bytes, and
// returns how many series it wrote. The same size gives the same bytes.
func writeBigExposition(t testing.TB, w io.Writer, size int64) (series int) {
	t.Helper()
	bw := bufio.NewWriterSize(w, 1<<16)
	base := readRecorded(t, "v1.36-settled.prom")
	n, _ := bw.Write(base)
	written := int64(n)
	series = strings.Count(string(base), "\n") - strings.Count(string(base), "\n#")
	// put writes a line unless it would go beyond size.
	full := false
	put := func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		if written+int64(len(line)) > size {
			full = true
			return
		}
		k, _ := bw.WriteString(line)
		written += int64(k)
	}
	buckets := []string{"0.005", "0.025", "0.1", "0.5", "1", "5", "+Inf"}
	verbs := []string{"GET", "LIST", "WATCH", "PATCH", "POST", "DELETE"}
	for fam := 0; !full; fam++ {
		const perFamily = 2000
		switch fam % 3 {
		case 0:
			name := fmt.Sprintf("filler_requests_total_%d", fam)
			put("# HELP %s Requests by code, verb and host.\n# TYPE %s counter\n", name, name)
			for i := 0; i < perFamily && !full; i++ {
				put("%s{code=\"200\",host=\"10.0.%d.%d:6443\",verb=%q} %d\n", name, i/256, i%256, verbs[i%len(verbs)], i*7)
				if !full {
					series++
				}
			}
		case 1:
			name := fmt.Sprintf("filler_inflight_%d", fam)
			put("# HELP %s In-flight requests.\n# TYPE %s gauge\n", name, name)
			for i := 0; i < perFamily && !full; i++ {
				put("%s{resource=\"r%d\",scope=\"cluster\"} %d\n", name, i, i%17)
				if !full {
					series++
				}
			}
		default:
			name := fmt.Sprintf("filler_request_duration_seconds_%d", fam)
			put("# HELP %s Request latency.\n# TYPE %s histogram\n", name, name)
			for i := 0; i < perFamily/len(buckets) && !full; i++ {
				for j, le := range buckets {
					put("%s_bucket{resource=\"r%d\",le=%q} %d\n", name, i, le, (j+1)*10)
				}
				put("%s_sum{resource=\"r%d\"} %d.5\n%s_count{resource=\"r%d\"} %d\n", name, i, i, name, i, len(buckets)*10)
				if !full {
					series += len(buckets) + 2
				}
			}
		}
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	return series
}

// TestWriteBigExposition writes a large exposition for measuring a command
// by hand; it runs only when SCHEDQ_BIG_EXPOSITION names the file and its
// size in bytes, e.g.
//
//	SCHEDQ_BIG_EXPOSITION=/tmp/big.prom:22020096 go test ./pkg/metricscrape -run TestWriteBigExposition -v
func TestWriteBigExposition(t *testing.T) {
	spec := os.Getenv("SCHEDQ_BIG_EXPOSITION")
	if spec == "" {
		t.Skip("SCHEDQ_BIG_EXPOSITION=FILE:BYTES is not set")
	}
	path, sizeText, ok := strings.Cut(spec, ":")
	size, err := strconv.ParseInt(sizeText, 10, 64)
	if !ok || err != nil {
		t.Fatalf("SCHEDQ_BIG_EXPOSITION=%q: want FILE:BYTES", spec)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	series := writeBigExposition(t, f, size)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	t.Logf("%s: %d bytes, %d series", path, st.Size(), series)
}
