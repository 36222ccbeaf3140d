package metricscrape

import (
	"fmt"
	"strings"
	"time"
)

// Continuity follows the scheduler a watch reads across its scrapes, so
// that the watch can say, in one line, that it lost the scheduler and found
// it again: a port-forward source discovers the scheduler and opens a new
// port-forward at every scrape, so a restarted scheduler pod, a new leader
// or a scheduler that restarted between two scrapes is read again as soon
// as it answers; Continuity says when that happened and how long the watch
// was blind.
type Continuity struct {
	last *Snapshot // the last scrape that worked
	// failed counts the scrapes that failed since last; firstErr is the first.
	failed   int
	firstErr error
}

// Observe records one scrape's result: snap, or err. It returns a notice
// when this scrape reads the scheduler again after failed scrapes, or reads
// another scheduler pod, another lease holder or a scheduler whose counters
// started over; otherwise "".
func (c *Continuity) Observe(snap *Snapshot, err error) string {
	if err != nil {
		if c.failed == 0 {
			c.firstErr = err
		}
		c.failed++
		return ""
	}
	prev, failed, firstErr := c.last, c.failed, c.firstErr
	c.last, c.failed, c.firstErr = snap, 0, nil
	if prev == nil {
		return ""
	}
	var what []string
	a, b := prev.Origin, snap.Origin
	ha, hb := holderHost(a.LeaseHolder), holderHost(b.LeaseHolder)
	newLeader := ha != hb && ha != "" && hb != ""
	switch {
	case a.Pod != b.Pod && newLeader:
		what = append(what, fmt.Sprintf("new leader %s (Lease holder %s), was %s", b.Pod, b.LeaseHolder, a.Pod))
	case a.Pod != b.Pod:
		what = append(what, fmt.Sprintf("scheduler pod %s, was %s", b.Pod, a.Pod))
	case newLeader:
		what = append(what, fmt.Sprintf("new leader %s, was %s", b.LeaseHolder, a.LeaseHolder))
	}
	// A new leader is another scheduler, with counters of its own: only
	// when the same scheduler is read again do lower counters say that it
	// restarted.
	if !newLeader && restarted(prev, snap) {
		what = append(what, "the scheduler restarted (its counters started over)")
	}
	if failed == 0 && len(what) == 0 {
		return ""
	}
	where := snap.Origin.Address
	if where == "" {
		where = "the scheduler"
	}
	how := "read again"
	if snap.Origin.Kind == OriginPortForward {
		how = "found again and port-forwarded"
	}
	gap := snap.Time.Sub(prev.Time).Round(100 * time.Millisecond)
	var msg string
	if failed > 0 {
		msg = fmt.Sprintf("%s %s after %s blind (last read at %s; %d scrape(s) failed, the first with: %s)",
			where, how, gap, prev.Time.Local().Format("15:04:05"), failed, firstLine(firstErr.Error()))
	} else {
		msg = fmt.Sprintf("%s %s: it changed within the %s since the last read", where, how, gap)
	}
	if len(what) > 0 {
		msg += "; " + strings.Join(what, "; ")
	}
	return msg
}

// SameScheduler reports whether two scrapes of one source read the same
// scheduler: the same pod and, where a Lease chose it, the same leader.
// (Discovery may find another scheduler at each scrape; a URL or a file
// named by the user is the same scheduler each time.) Rates between two
// scrapes of different schedulers mean nothing: each counts since its own
// start.
func SameScheduler(a, b Origin) bool {
	if a.Pod != b.Pod {
		return false
	}
	ha, hb := holderHost(a.LeaseHolder), holderHost(b.LeaseHolder)
	return ha == hb || ha == "" || hb == ""
}

// restarted reports whether a counter of cur is below prev's: a scheduler
// process that started again.
func restarted(prev, cur *Snapshot) bool {
	for k, v := range prev.Attempts {
		if cur.Attempts[k] < v {
			return true
		}
	}
	for k, v := range prev.Incoming {
		if cur.Incoming[k] < v {
			return true
		}
	}
	return false
}

// holderHost is the host of a lease holder "<hostname>_<uuid>": the uuid is
// new at every start of the scheduler, which restarted tells otherwise.
func holderHost(holder string) string {
	host, _, _ := strings.Cut(holder, "_")
	return host
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
