package metricscrape

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestContinuity_Observe(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	snap := func(sec int, pod, holder string, attempts float64) *Snapshot {
		return &Snapshot{
			Time:     t0.Add(time.Duration(sec) * time.Second),
			Origin:   Origin{Kind: OriginPortForward, Address: pod + ":10259", Pod: pod, LeaseHolder: holder},
			Attempts: map[string]float64{"scheduled": attempts},
		}
	}
	refused := errors.New("connection refused\nmore")
	for _, tc := range []struct {
		name  string
		steps []any // *Snapshot or error
		want  []string
	}{
		{"scrapes that work say nothing", []any{snap(0, "ks/a", "a_1", 5), snap(2, "ks/a", "a_1", 7)}, nil},
		{"failures, then the same scheduler", []any{snap(0, "ks/a", "a_1", 5), refused, refused, snap(6, "ks/a", "a_1", 9)},
			[]string{"ks/a:10259 found again and port-forwarded after 6s blind (last read at ", "; 2 scrape(s) failed, the first with: connection refused)"}},
		{"a restart between two scrapes", []any{snap(0, "ks/a", "a_1", 5), snap(2, "ks/a", "a_2", 1)},
			[]string{"it changed within the 2s since the last read; the scheduler restarted (its counters started over)"}},
		{"a new leader on another node", []any{snap(0, "ks/a", "a_1", 5), refused, snap(4, "ks/b", "b_1", 9)},
			[]string{"after 4s blind", "new leader ks/b (Lease holder b_1), was ks/a"}},
		// The new leader's counters are below the old one's: it is
		// another scheduler, not a restart.
		{"a new leader between two scrapes", []any{snap(0, "ks/a", "a_1", 5), snap(2, "ks/b", "b_1", 1)},
			[]string{"it changed within the 2s since the last read; new leader ks/b (Lease holder b_1), was ks/a"}},
		{"another scheduler pod, no lease", []any{snap(0, "ks/a", "", 5), snap(2, "ks/b", "", 1)},
			[]string{"it changed within the 2s since the last read; scheduler pod ks/b, was ks/a; the scheduler restarted"}},
		{"the lease held by another host, same pod read", []any{snap(0, "ks/a", "a_1", 5), snap(2, "ks/a", "b_1", 9)},
			[]string{"new leader b_1, was a_1"}},
		{"a new lease holder uuid alone is no news", []any{snap(0, "ks/a", "a_1", 5), snap(2, "ks/a", "a_2", 6)}, nil},
		{"failures before the first scrape say nothing", []any{refused, snap(2, "ks/a", "a_1", 5)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Continuity
			var notices []string
			for _, s := range tc.steps {
				var n string
				if err, ok := s.(error); ok {
					n = c.Observe(nil, err)
				} else {
					n = c.Observe(s.(*Snapshot), nil)
				}
				if n != "" {
					notices = append(notices, n)
				}
			}
			if len(tc.want) == 0 {
				if len(notices) > 0 {
					t.Errorf("notices %q, want none", notices)
				}
				return
			}
			if len(notices) != 1 {
				t.Fatalf("notices %q, want one", notices)
			}
			for _, w := range tc.want {
				if !strings.Contains(notices[0], w) {
					t.Errorf("notice %q lacks %q", notices[0], w)
				}
			}
			// Only a notice expected to say so says the scheduler restarted.
			if strings.Contains(notices[0], "restarted") && !strings.Contains(strings.Join(tc.want, ""), "restarted") {
				t.Errorf("notice %q says the scheduler restarted", notices[0])
			}
		})
	}
}
