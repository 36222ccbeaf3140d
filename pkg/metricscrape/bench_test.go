package metricscrape

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The two benchmarks fetch the same recorded exposition from the same local
// server: BenchmarkScrape also parses it into a Snapshot, BenchmarkPlainGET
// only reads the body. Their ratio is the cost of parsing.

func benchServer(b *testing.B) (*httptest.Server, int) {
	b.Helper()
	body := readRecorded(b, "v1.36-settled.prom")
	srv := httptest.NewServer(schedulerHandler(string(body), nil))
	b.Cleanup(srv.Close)
	return srv, len(body)
}

func BenchmarkScrape(b *testing.B) {
	srv, size := benchServer(b)
	client := &http.Client{Transport: http.DefaultTransport}
	url := srv.URL + MetricsPath
	ctx := context.Background()
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		snap, err := scrapeHTTP(ctx, client, url, url)
		if err != nil {
			b.Fatal(err)
		}
		if snap.Pending[QueueBackoff] != 5 {
			b.Fatalf("Pending = %v", snap.Pending)
		}
	}
}

func BenchmarkPlainGET(b *testing.B) {
	srv, size := benchServer(b)
	client := &http.Client{Transport: http.DefaultTransport}
	url := srv.URL + MetricsPath
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		resp, err := client.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || len(data) != size {
			b.Fatalf("read %d bytes: %v", len(data), err)
		}
	}
}

// BenchmarkParseText is the parse alone, without HTTP.
func BenchmarkParseText(b *testing.B) {
	data := readRecorded(b, "v1.36-settled.prom")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseText("bench", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseText_whole is the parse the stream replaced (parseWhole):
// BenchmarkParseText over it is what reading as a stream costs.
func BenchmarkParseText_whole(b *testing.B) {
	data := readRecorded(b, "v1.36-settled.prom")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseWhole("bench", data); err != nil {
			b.Fatal(err)
		}
	}
}
