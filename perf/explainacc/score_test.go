package explainacc

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-schedq/kubectl-schedq/perf/groundtruth"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func snapshot(pods ...groundtruth.Pod) groundtruth.Queue { return groundtruth.Queue{Pods: pods} }

func gtPod(name string, q groundtruth.QueueName, attempts int) groundtruth.Pod {
	return groundtruth.Pod{Namespace: "ns", Name: name, UID: "uid-" + name, Queue: q, Attempts: attempts}
}

// TestScore checks placement, calibration, next-retry and attempts scoring
// on a recording of one sample with canned answers.
func TestScore(t *testing.T) {
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1"}}
	}
	rec := NewRecording("unit", true, explain.DefaultConfig())
	rec.Start, rec.End = at(0), at(time.Minute)
	in := explain.Input{Now: at(time.Second), Pods: []*corev1.Pod{pod("err"), pod("unsched"), pod("fly")}}
	before := snapshot(gtPod("err", groundtruth.ErrorBackoff, 2), gtPod("unsched", groundtruth.Unschedulable, 1), gtPod("fly", groundtruth.InFlight, 1))
	// fly finished its attempt and went to backoff while explain read.
	mid := snapshot(gtPod("err", groundtruth.ErrorBackoff, 2), gtPod("unsched", groundtruth.Unschedulable, 1), gtPod("fly", groundtruth.Backoff, 1))
	rec.AddSample(at(time.Second), at(time.Second+50*time.Millisecond), in, before, mid, mid)
	rec.Pops = groundtruth.Pops{
		"uid-err":  {at(0), at(500 * time.Millisecond), at(3200 * time.Millisecond)},
		"uid-fly":  {at(900 * time.Millisecond)},
		"uid-none": nil,
	}
	d := func(s string) *time.Time { t := at(mustDuration(s)); return &t }
	answers := []explain.Explanation{
		// Right, window [3 s, 3.1 s]: the pop at 3.2 s is 100 ms late, and
		// 300 ms from the estimate; its two attempts counted.
		{Namespace: "ns", Name: "err", State: explain.StatePending, Queue: queue.LocationErrorBackoff, Confidence: 0.9, Attempts: 2,
			NextRetry: &explain.NextRetry{Earliest: d("3s"), Latest: d("3.1s"), Estimate: d("2.9s")}},
		// Wrong, but the truth is an alternative; never popped again, its
		// window ends after the run: censored. Its attempt is a lower
		// bound, and right.
		{Namespace: "ns", Name: "unsched", State: explain.StatePending, Queue: queue.LocationBackoff, Confidence: 0.6, Attempts: 1,
			AttemptsCount: &explain.AttemptsCount{Kind: explain.AttemptsAtLeast, Min: 1},
			Alternatives:  []explain.Alternative{{Queue: queue.LocationUnschedulable, Probability: 0.4}},
			NextRetry:     &explain.NextRetry{Earliest: d("1s"), Latest: d("2m")}},
		// Moving: right either way; in flight, its pop is the one at 0.9 s.
		// Its first attempt is under way: it has none that ended, not ~5.
		{Namespace: "ns", Name: "fly", State: explain.StatePending, Queue: queue.LocationBackoff, Confidence: 0.97, Attempts: 5,
			AttemptsCount: &explain.AttemptsCount{Kind: explain.AttemptsEstimated, Min: 0},
			NextRetry:     &explain.NextRetry{Earliest: d("1s"), Latest: d("1s")}},
	}
	res := Score(rec, func(explain.Input) []explain.Explanation { return answers })

	tot := res.Total()
	if tot.N != 3 || tot.Correct != 2 || tot.Moving != 1 || tot.Covered != 3 {
		t.Errorf("total %+v, want 3 scored, 2 right, 1 moving, 3 covered", tot)
	}
	if res.Confusion["unschedulable→backoff"] != 1 {
		t.Errorf("confusion %v", res.Confusion)
	}
	all := res.Calibration["all"]
	if all == nil || all.Bins[6] != (Bin{N: 1, SumConfidence: 0.6}) || all.Bins[9].N != 2 || all.Bins[9].Correct != 2 {
		t.Fatalf("calibration %+v, want 0.6 wrong in bin 6, 0.9 and 0.97 right in bin 9", all)
	}
	// ECE: 2/3·|0.935−1| + 1/3·|0.6−0|.
	if got, want := all.ECE(), 2.0/3*0.065+1.0/3*0.6; math.Abs(got-want) > 1e-9 {
		t.Errorf("ECE %v, want %v", got, want)
	}
	if n, c := res.Calibration["backoffQ"].High(); n != 1 || c != 1 {
		t.Errorf("backoffQ answers at ≥ 90%%: %d, %d right; want 1, 1", n, c)
	}
	if a := res.Attempts; a.N != 3 || a.Within != 1 || a.Bound != 1 || a.Off != 1 || a.Under != 0 || a.Estimated != 1 {
		t.Errorf("attempts %+v, want 3: 1 within, 1 bound, 1 off (over), 1 estimated", a)
	}
	if es := res.Estimate[groundtruth.ErrorBackoff]; es == nil || es.N != 1 || es.P50 != 300*time.Millisecond {
		t.Errorf("errorBackoff estimate %+v, want one error of 300ms", es)
	}
	eb := res.NextRetry[groundtruth.ErrorBackoff]
	if eb == nil || eb.N != 1 || eb.P90 != 100*time.Millisecond {
		t.Errorf("errorBackoff next retry %+v, want one error of 100ms", eb)
	}
	if u := res.NextRetry[groundtruth.Unschedulable]; u == nil || u.N != 0 || u.Censored != 1 {
		t.Errorf("unschedulable next retry %+v, want one censored", u)
	}
	if f := res.NextRetry[groundtruth.InFlight]; f == nil || f.N != 1 || f.P50 != 100*time.Millisecond {
		t.Errorf("inFlight next retry %+v, want 100ms (popped at 0.9 s, window at 1 s)", f)
	}

	var text strings.Builder
	res.WriteText(&text)
	for _, want := range []string{"| errorBackoff | 1 | 1 | 100.0% |", "| **all** | 3 | 2 | **66.7%** |", "Misplaced (truth→explain): unschedulable→backoff 1."} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, text.String())
		}
	}

	// The one line rescore -summary prints for it.
	rec.KubeVersion, rec.Seed = "v1.37.2", 7
	line := SummaryLine(rec, res)
	for _, want := range []string{"v1.37.2 unit gate=true seed=7 ", " pod-samples=3 placed=66.7% ", " errorBackoff=100.0%/1 ", " unschedulable=0.0%/1 ",
		" attempts=66.7% (under 0, over 1) ", " est-errorBackoff-p90=300ms ", " ≥90%=100.0%/2"} {
		if !strings.Contains(line, want) {
			t.Errorf("summary line lacks %q:\n%s", want, line)
		}
	}

	// A recording survives Save and Load.
	back := saveAndLoad(t, rec)
	if diff := cmp.Diff(rec.Input(0).Pods, back.Input(0).Pods); diff != "" || len(back.Samples) != 1 || !back.Samples[0].Now.Equal(in.Now) {
		t.Errorf("after Save and Load: %d samples, pods (-want, +got):\n%s", len(back.Samples), diff)
	}
}

// saveAndLoad saves rec to a file and loads it back.
func saveAndLoad(t *testing.T, rec *Recording) *Recording {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rec.json.gz")
	if err := rec.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

func mustDuration(s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return d
}

// Score compares explain's queue.Location with the ground truth's
// QueueName as strings: every place the ground truth reports must be
// spelled as explain spells it, or its pods could never be scored right.
func TestQueueNames_spelledAsExplainLocations(t *testing.T) {
	locations := map[queue.Location]bool{}
	for _, l := range []queue.Location{queue.LocationActive, queue.LocationBackoff, queue.LocationErrorBackoff, queue.LocationUnschedulable,
		queue.LocationGated, queue.LocationInFlight, queue.LocationIncomplete, queue.LocationPending} {
		locations[l] = true
	}
	for _, q := range groundtruth.QueueNames {
		if !locations[queue.Location(q)] {
			t.Errorf("ground-truth queue %q is no explain location", q)
		}
	}
	inReport := map[groundtruth.QueueName]bool{}
	for _, q := range queueOrder {
		inReport[q] = true
	}
	for _, q := range groundtruth.QueueNames {
		if !inReport[q] {
			t.Errorf("ground-truth queue %q has no row in the report (queueOrder)", q)
		}
	}
}

// A sample's PodGroups survive Save and Load as explain read them: none
// read (nil), an empty list (the members' groups do not exist yet: their
// members are incomplete), or some.
func TestRecording_podGroupsSurviveSaveAndLoad(t *testing.T) {
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g", UID: "u1", ResourceVersion: "7"}}
	cases := []struct {
		name string
		in   []*schedulingv1beta1.PodGroup
	}{
		{"not read", nil},
		{"read, none exist", []*schedulingv1beta1.PodGroup{}},
		{"read, one", []*schedulingv1beta1.PodGroup{pg}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := NewRecording("r", true, explain.DefaultConfig())
			rec.AddSample(t0, t0, explain.Input{Now: t0, PodGroups: c.in}, snapshot(), snapshot(), snapshot())
			got := saveAndLoad(t, rec).Input(0).PodGroups
			if (got == nil) != (c.in == nil) || len(got) != len(c.in) {
				t.Fatalf("PodGroups %v after Save and Load, want %v", got, c.in)
			}
			for i := range got {
				if got[i].Name != c.in[i].Name || got[i].Namespace != c.in[i].Namespace {
					t.Errorf("PodGroup %d: %s/%s, want %s/%s", i, got[i].Namespace, got[i].Name, c.in[i].Namespace, c.in[i].Name)
				}
			}
		})
	}
}
