package queue

import (
	"fmt"
	"testing"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/internal/heap"
)

func TestBackoffQueue_calculateBackoffDuration(t *testing.T) {
	tests := []struct {
		name         string
		initial, max time.Duration
		count        int
		want         time.Duration
	}{
		{"no failure", time.Second, 10 * time.Second, 0, 0},
		{"first", time.Second, 10 * time.Second, 1, time.Second},
		{"second", time.Second, 10 * time.Second, 2, 2 * time.Second},
		{"fourth", time.Second, 10 * time.Second, 4, 8 * time.Second},
		{"capped", time.Second, 10 * time.Second, 5, 10 * time.Second},
		{"huge count does not overflow", time.Second, 10 * time.Second, 1000, 10 * time.Second},
		{"initial equals max", 5 * time.Second, 5 * time.Second, 3, 5 * time.Second},
		{"zero initial stays zero", 0, 10 * time.Second, 70, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CalculateBackoffDuration(tt.initial, tt.max, tt.count); got != tt.want {
				t.Errorf("CalculateBackoffDuration(%v, %v, %d) = %v, want %v", tt.initial, tt.max, tt.count, got, tt.want)
			}
		})
	}
}

// TestBackoffQueue_isPodBackingoff checks the completion instants of
// queue-spec §2: with PopFromBackoffQ a pod completes at floor(T+d)+1s, without
// strictly after T+d.
func TestBackoffQueue_isPodBackingoff(t *testing.T) {
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return epoch.Add(time.Duration(n) * time.Millisecond) }
	tests := []struct {
		failedAt, now int
		count         int
		pfb           bool
		want          bool
	}{
		{300, 1999, 1, true, true},
		{300, 2000, 1, true, false},
		{10000, 11999, 1, true, true}, // on a boundary: 2 s
		{10000, 12000, 1, true, false},
		{300, 1300, 1, false, true},
		{300, 1301, 1, false, false},
		{0, 2999, 2, true, true},
		{0, 3000, 2, true, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("failedAt=%d,now=%d,count=%d,popFromBackoffQ=%v", tt.failedAt, tt.now, tt.count, tt.pfb), func(t *testing.T) {
			c := &fakeClock{now: ms(tt.now)}
			bq := newBackoffQueue(c, time.Second, 10*time.Second, tt.pfb, noopMetrics{}, &heap.Positions{})
			p := &QueuedPodInfo{Pod: &Pod{Name: "p"}, Timestamp: ms(tt.failedAt), UnschedulableCount: tt.count}
			if got := bq.isPodBackingoff(p); got != tt.want {
				t.Errorf("isPodBackingoff = %v, want %v (expiry %v)", got, tt.want, p.BackoffExpiration.Sub(epoch))
			}
		})
	}
}

func TestBackoffQueue_errorCountWins(t *testing.T) {
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	got := BackoffExpiry(epoch, 4, 1, time.Second, 10*time.Second, false)
	if want := epoch.Add(time.Second); !got.Equal(want) {
		t.Errorf("with ConsecutiveErrorsCount 1 the expiry is %v, want %v (error count used)", got.Sub(epoch), want.Sub(epoch))
	}
	if got := BackoffExpiry(epoch, 3, 0, time.Second, 0, true); !got.IsZero() {
		t.Errorf("max 0 disables backoff, got expiry %v", got)
	}
}

type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

// TestBackoffCompletionWindow agrees with isPodBackingoff: the pod is backing
// off just before the window's start and done at it.
func TestBackoffCompletionWindow(t *testing.T) {
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, failedAt := range []time.Duration{0, 300 * time.Millisecond, 999 * time.Millisecond, 10 * time.Second} {
		for _, pfb := range []bool{true, false} {
			c := &fakeClock{}
			bq := newBackoffQueue(c, time.Second, 10*time.Second, pfb, noopMetrics{}, &heap.Positions{})
			p := &QueuedPodInfo{Pod: &Pod{Name: "p"}, Timestamp: epoch.Add(failedAt), UnschedulableCount: 1}
			earliest, _ := BackoffCompletionWindow(bq.getBackoffTime(p), pfb)
			c.now = earliest.Add(-time.Millisecond)
			before := bq.isPodBackingoff(p)
			c.now = earliest
			at := bq.isPodBackingoff(p)
			if pfb && (!before || at) || !pfb && !before {
				t.Errorf("failedAt=%v popFromBackoffQ=%v: backing off just before %v = %v, at it = %v", failedAt, pfb, earliest.Sub(epoch), before, at)
			}
		}
	}
}
