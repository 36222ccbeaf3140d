package explain

import (
	"strings"
	"testing"
	"time"
)

func TestPace(t *testing.T) {
	ms := time.Millisecond
	// Eight pods retried one after the other, 30 ms apart, and two lone
	// failures far from them.
	events := map[string][]eventSummary{}
	for i := range 8 {
		at := t0.Add(time.Duration(i) * 30 * ms)
		events[string(rune('a'+i))] = []eventSummary{{first: at, last: at, count: 1}}
	}
	events["x"] = []eventSummary{{first: t0.Add(-time.Minute), last: t0.Add(-time.Minute), count: 1}}
	events["y"] = []eventSummary{{first: t0.Add(time.Minute), last: t0.Add(time.Minute), count: 1}}
	if typical, fastest := pace(events); typical != 30*ms || fastest != 30*ms {
		t.Errorf("pace %v (fastest %v), want 30ms", typical, fastest)
	}
	if typical, fastest := pace(map[string][]eventSummary{"x": events["x"]}); typical != defaultPerPod || fastest != defaultPerPod {
		t.Errorf("pace without evidence %v, %v, want the default %v", typical, fastest, defaultPerPod)
	}
	// Clusters of 4 failures written in the same instant, 100 ms apart: the
	// 15 gaps span 300 ms, 20 ms a pod, where the median gap reads nothing.
	clusters := map[string][]eventSummary{}
	for c := range 4 {
		for i := range 4 {
			at := t0.Add(time.Duration(c) * 100 * ms)
			clusters[string(rune('a'+4*c+i))] = []eventSummary{{first: at, last: at, count: 1}}
		}
	}
	if typical, fastest := pace(clusters); typical != 20*ms || fastest != ms {
		t.Errorf("clustered failures: pace %v (fastest %v), want 20ms (15 gaps over 300ms) and the 1ms floor", typical, fastest)
	}

	pl := placement{perPod: 30 * ms}
	nr := activeRetry(t0, 10, pl, false)
	// 10 pods ahead at twice 30 ms, and the slack of a pop.
	if !nr.Earliest.Equal(t0) || !nr.Latest.Equal(t0.Add(600*ms+popSlack(pl))) {
		t.Errorf("next retry [%v, %v]", nr.Earliest.Sub(t0), nr.Latest.Sub(t0))
	}
	if nr := activeRetry(t0, 10, pl, true); !nr.Latest.Equal(t0) {
		t.Errorf("in flight: tried now, got until %v", nr.Latest.Sub(t0))
	}
	// A long wait timed from the events points to --attempt-rate; one
	// timed by it, or a short one, does not.
	for _, c := range []struct {
		ahead    int
		measured bool
		want     bool
	}{{10, false, false}, {longWait, false, true}, {longWait, true, false}} {
		pl := placement{perPod: 30 * ms, rateMeasured: c.measured}
		if got := strings.Contains(activeRetry(t0, c.ahead, pl, false).Note, "--attempt-rate"); got != c.want {
			t.Errorf("%d ahead, rate measured %t: note names --attempt-rate: %t, want %t", c.ahead, c.measured, got, c.want)
		}
	}
}
