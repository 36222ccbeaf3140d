package metricscrape

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// recordedDir holds expositions recorded from a real kube-scheduler v1.36.3
// (see its README).
const recordedDir = "../../testdata/metrics"

func readRecorded(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(recordedDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParseText_recorded(t *testing.T) {
	tests := []struct {
		file         string
		wantPending  map[string]float64
		wantAttempts map[string]float64
		wantPFB      bool
		wantIncoming map[QueueEvent]float64 // a few series, checked one by one
	}{
		{
			file:         "v1.36-idle.prom",
			wantPending:  map[string]float64{QueueActive: 0, QueueBackoff: 0, QueueUnschedulable: 0, QueueGated: 0},
			wantAttempts: map[string]float64{},
			wantPFB:      true,
		},
		{
			file:         "v1.36-parked.prom",
			wantPending:  map[string]float64{QueueActive: 0, QueueBackoff: 5, QueueUnschedulable: 8, QueueGated: 3},
			wantAttempts: map[string]float64{ResultScheduled: 20, ResultUnschedulable: 56, ResultError: 10},
			wantPFB:      true,
			wantIncoming: map[QueueEvent]float64{
				{QueueActive, EventPopFromBackoffQ}:               48,
				{QueueUnschedulable, "UnschedulablePodAdd"}:       3,
				{QueueUnschedulable, EventScheduleAttemptFailure}: 56,
			},
		},
		{
			file:         "v1.36-settled.prom",
			wantPending:  map[string]float64{QueueActive: 0, QueueBackoff: 5, QueueUnschedulable: 6, QueueGated: 3},
			wantAttempts: map[string]float64{ResultScheduled: 22, ResultUnschedulable: 74, ResultError: 15},
			wantPFB:      true,
			wantIncoming: map[QueueEvent]float64{{QueueBackoff, "NodeAdd"}: 8, {QueueActive, EventPopFromBackoffQ}: 68},
		},
		{
			file:         "v1.36-pfb-off-settled.prom",
			wantPending:  map[string]float64{QueueActive: 0, QueueBackoff: 11, QueueUnschedulable: 0, QueueGated: 3},
			wantAttempts: map[string]float64{ResultScheduled: 22, ResultUnschedulable: 22, ResultError: 15},
			wantPFB:      false,
			wantIncoming: map[QueueEvent]float64{{QueueActive, EventBackoffComplete}: 26, {QueueActive, EventPopFromBackoffQ}: 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			s, err := ParseText(tc.file, readRecorded(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantPending, s.Pending); diff != "" {
				t.Errorf("Pending (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAttempts, s.Attempts); diff != "" {
				t.Errorf("Attempts (-want, +got):\n%s", diff)
			}
			for k, want := range tc.wantIncoming {
				if got := s.Incoming[k]; got != want {
					t.Errorf("Incoming[%v] = %v, want %v", k, got, want)
				}
			}
			if on, known := s.GateEnabled(GateSchedulerPopFromBackoffQ); !known || on != tc.wantPFB {
				t.Errorf("SchedulerPopFromBackoffQ = %v (known %v), want %v", on, known, tc.wantPFB)
			}
			if g := s.FeatureGates[GateSchedulerPopFromBackoffQ]; g.Stage != "BETA" {
				t.Errorf("SchedulerPopFromBackoffQ stage = %q, want BETA", g.Stage)
			}
			if g, ok := s.FeatureGates[GateSchedulerQueueingHints]; !ok || !g.Enabled || g.Stage != "" {
				t.Errorf("SchedulerQueueingHints = %+v, want GA and on", g)
			}
			if s.Build.GitVersion != "v1.36.3" {
				t.Errorf("Build = %+v", s.Build)
			}
			if s.Leader != nil {
				t.Errorf("Leader = %v; the embedded scheduler runs without leader election", *s.Leader)
			}
			if len(s.Attempts) > 0 {
				if diff := cmp.Diff([]string{"default-scheduler"}, s.Profiles); diff != "" {
					t.Errorf("Profiles (-want, +got):\n%s", diff)
				}
				// Every bound pod is in the SLI and attempts histograms.
				var sli float64
				for _, h := range s.SLI {
					sli += h.Count
				}
				if sli != s.Attempts[ResultScheduled] || s.PodSchedulingAttempts.Count != sli {
					t.Errorf("SLI count %v, attempts histogram count %v, scheduled %v: want them equal", sli, s.PodSchedulingAttempts.Count, s.Attempts[ResultScheduled])
				}
			}
		})
	}
}

func TestNewRates_recorded(t *testing.T) {
	parked, err := ParseText("parked", readRecorded(t, "v1.36-parked.prom"))
	if err != nil {
		t.Fatal(err)
	}
	settled, err := ParseText("settled", readRecorded(t, "v1.36-settled.prom"))
	if err != nil {
		t.Fatal(err)
	}
	parked.Time = time.Unix(0, 0)
	settled.Time = parked.Time.Add(4 * time.Second)
	r, err := NewRates(parked, settled)
	if err != nil {
		t.Fatal(err)
	}
	if r.Reset {
		t.Error("Reset set between two snapshots of one run")
	}
	// 8 NodeAdd moves, 20 more PopFromBackoffQ, 2 more pods bound in 4 s.
	if got := r.Incoming[QueueEvent{QueueBackoff, "NodeAdd"}]; got != 2 {
		t.Errorf("NodeAdd rate = %v, want 2/s", got)
	}
	if got := r.Incoming[QueueEvent{QueueActive, EventPopFromBackoffQ}]; got != 5 {
		t.Errorf("PopFromBackoffQ rate = %v, want 5/s", got)
	}
	if got := r.Attempts[ResultScheduled]; got != 0.5 {
		t.Errorf("scheduled rate = %v, want 0.5/s", got)
	}
}

func TestFileSource_recorded(t *testing.T) {
	snap, err := (&FileSource{Path: filepath.Join(recordedDir, "v1.36-settled.prom")}).Scrape(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if snap.PendingTotal() != 14 {
		t.Errorf("PendingTotal() = %v, want 14", snap.PendingTotal())
	}
}
