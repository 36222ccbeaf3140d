package queue

import (
	"testing"
	"time"
)

func TestReplayIndex(t *testing.T) {
	q := NewPriorityQueue(WithClock(&fakeClock{now: time.Unix(0, 0)}))
	x := NewReplayIndex(q)
	x.Reserve(8)
	a, b := &Pod{Namespace: "ns", Name: "a"}, &Pod{Namespace: "ns", Name: "b"}
	x.SetPodID(a, "ns/a", 5)
	x.SetPodID(b, "ns/b", 2)
	q.Add(a)
	if loc, pi := x.Locate(5); loc != LocationActive || pi.Pod != a {
		t.Errorf("Locate(5) = %s, %v; want active, ns/a", loc, pi)
	}
	if loc, _ := x.Locate(2); loc != "" {
		t.Errorf("Locate(2) = %s for a pod never added, want nothing", loc)
	}
	if loc, _ := x.Locate(7); loc != "" {
		t.Errorf("Locate(7) = %s for an ID never given, want nothing", loc)
	}
	// The queue finds the pods by name too, and numbers a new key after them.
	if loc, _ := q.Locate("ns/a"); loc != LocationActive {
		t.Errorf("Locate(ns/a) = %s, want active", loc)
	}
	if id := x.PodID(&Pod{Namespace: "ns", Name: "c"}); id != 6 {
		t.Errorf("PodID of a new key = %d, want 6", id)
	}
	if id := x.PodID(&Pod{Namespace: "ns", Name: "b"}); id != 2 {
		t.Errorf("PodID(ns/b) = %d, want 2", id)
	}
	for name, f := range map[string]func(){
		"key not the pod's": func() { x.SetPodID(&Pod{Namespace: "ns", Name: "d"}, "ns/e", 3) },
		"ID of another key": func() { x.SetPodID(&Pod{Namespace: "ns", Name: "d"}, "ns/d", 5) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: SetPodID did not panic", name)
				}
			}()
			f()
		}()
	}
}
