package gather

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

// TestModelVersion: the version given (--scheduler-version) wins, then the
// scheduler's own version, then the current release with a note.
func TestModelVersion(t *testing.T) {
	withVersion := func(v string) *metricscrape.Snapshot {
		return &metricscrape.Snapshot{Build: metricscrape.BuildInfo{GitVersion: v}}
	}
	for _, tc := range []struct {
		name       string
		flag       string
		snap       *metricscrape.Snapshot
		want       queue.Version
		wantSource string
		wantNote   string
	}{
		{"flag", "v1.34", withVersion("v1.37.2"), queue.V1_34, "--scheduler-version", ""},
		{"build info", "", withVersion("v1.35.4"), queue.V1_35, "the scheduler's kubernetes_build_info", ""},
		{"vendor build", "", withVersion("v1.36.3-gke.1200"), queue.V1_36, "the scheduler's kubernetes_build_info", ""},
		{"no version", "", withVersion(""), queue.V1_37, "default", "reports no version"},
		{"no model", "", withVersion("v1.33.1"), queue.V1_37, "default", "v1.33 has no queue model"},
		{"no metrics", "", nil, queue.V1_37, "default", "no scheduler metrics"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var given queue.Version
			if tc.flag != "" {
				var err error
				if given, err = queue.ParseVersion(tc.flag); err != nil {
					t.Fatal(err)
				}
			}
			v, source, note := modelVersion(given, tc.snap)
			if v != tc.want || source != tc.wantSource || (tc.wantNote == "") != (note == "") || !strings.Contains(note, tc.wantNote) {
				t.Errorf("modelVersion = %s, %q, %q; want %s, %q, note containing %q", v, source, note, tc.want, tc.wantSource, tc.wantNote)
			}
		})
	}
}

// countingSource answers scrapes with attempts that grow by step each
// time, stamped with the time of the scrape.
type countingSource struct {
	calls int
	step  float64
}

func (s *countingSource) Scrape(context.Context) (*metricscrape.Snapshot, error) {
	s.calls++
	return &metricscrape.Snapshot{Time: time.Now(), Pending: map[string]float64{"active": 3},
		Attempts: map[string]float64{"scheduled": s.step * float64(s.calls), "unschedulable": 7}}, nil
}

func (s *countingSource) String() string { return "counting" }

// TestGather_secondScrape: one scrape by default; with SecondScrape, a
// second one that long after the first, whose difference is the attempt
// rate.
func TestGather_secondScrape(t *testing.T) {
	for _, c := range []struct {
		name      string
		second    time.Duration
		wantCalls int
		wantRate  bool
	}{
		{"one scrape", 0, 1, false},
		{"two scrapes", 100 * time.Millisecond, 2, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := &countingSource{step: 10}
			began := time.Now()
			res, err := Gather(context.Background(), Request{Client: fake.NewSimpleClientset(), Source: src, AllNamespaces: true,
				Config: explain.DefaultConfig(), Now: began, Timeout: time.Minute, SecondScrape: c.second, Version: queue.V1_37})
			if err != nil {
				t.Fatal(err)
			}
			m := res.Input.Metrics
			if src.calls != c.wantCalls || (m.AttemptRate != nil) != c.wantRate {
				t.Fatalf("%d scrapes, attempt rate %v; want %d, a rate %v", src.calls, m.AttemptRate, c.wantCalls, c.wantRate)
			}
			if !c.wantRate {
				return
			}
			// 10 attempts over at least the 100 ms between the scrapes.
			if want := 10 / m.RateWindow.Seconds(); m.RateWindow < c.second || *m.AttemptRate != want {
				t.Errorf("rate %v over %v, want %v over at least %v", *m.AttemptRate, m.RateWindow, want, c.second)
			}
			if m.Pending["active"] != 3 {
				t.Errorf("the counts come from the first scrape: %v", m.Pending)
			}
		})
	}
}
