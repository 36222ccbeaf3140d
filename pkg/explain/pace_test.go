package explain

import (
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
	if got := pace(events); got != 30*ms {
		t.Errorf("pace %v, want 30ms", got)
	}
	if got := pace(map[string][]eventSummary{"x": events["x"]}); got != defaultPerPod {
		t.Errorf("pace without evidence %v, want the default %v", got, defaultPerPod)
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
}
