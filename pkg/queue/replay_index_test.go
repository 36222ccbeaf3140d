package queue

import (
	"reflect"
	"testing"
	"time"
)

func TestReplayIndex(t *testing.T) {
	q := NewPriorityQueue(WithClock(&fakeClock{now: time.Unix(0, 0)}))
	x := NewReplayIndex(q)
	x.Reserve(8)
	a, b := &Pod{}, &Pod{}
	x.NamePod(a, "ns/a", 2, 5)
	x.NamePod(b, "ns/b", 2, 2)
	if a.Namespace != "ns" || a.Name != "a" || a.Key() != "ns/a" {
		t.Errorf("NamePod(ns/a) named the pod %q, %q (key %q)", a.Namespace, a.Name, a.Key())
	}
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
	if id := q.intern(&Pod{Namespace: "ns", Name: "c"}); id != 6 {
		t.Errorf("ID of a new key = %d, want 6", id)
	}
	if id := q.intern(&Pod{Namespace: "ns", Name: "b"}); id != 2 {
		t.Errorf("ID of ns/b = %d, want 2", id)
	}
	if pi := q.Pop(); pi == nil || pi.Pod != a || x.RecordID(pi) != 5 {
		t.Errorf("Pop() = %v, want ns/a's record, whose ID is 5", pi)
	}
	for name, f := range map[string]func(){
		"ID of another key":      func() { x.NamePod(&Pod{}, "ns/d", 2, 5) },
		"namespace past the key": func() { x.NamePod(&Pod{}, "ns/d", 4, 3) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: NamePod did not panic", name)
				}
			}()
			f()
		}()
	}
}

// TestReplayIndex_Release: a released record is the next new pod's, and
// nothing of the pod it held carries over.
func TestReplayIndex_Release(t *testing.T) {
	clk := &fakeClock{now: time.Unix(100, 0)}
	q := NewPriorityQueue(WithClock(clk))
	x := NewReplayIndex(q)
	a, b := &Pod{Namespace: "ns", Name: "a", UID: "a"}, &Pod{Namespace: "ns", Name: "b", UID: "b"}
	q.Add(a)
	pa := q.Pop()
	pa.UnschedulablePlugins, pa.PendingPlugins = NewPluginSet("X"), NewPluginSet("Y")
	pa.GatingPlugin, pa.WasFlushedFromUnschedulable = "G", true
	pa.BackoffExpiration = clk.now.Add(time.Hour)
	q.Done(a)
	x.Release(pa)

	clk.now = clk.now.Add(time.Minute)
	q.Add(b)
	pb := q.Pop()
	if pb != pa {
		t.Fatalf("the new pod's record is %p, want the released %p", pb, pa)
	}
	want := QueuedPodInfo{Pod: b, id: pb.id, Timestamp: clk.now, Attempts: 1, InitialAttemptTimestamp: pb.InitialAttemptTimestamp, initialAttemptTimestamp: clk.now}
	if pb.InitialAttemptTimestamp == nil || !pb.InitialAttemptTimestamp.Equal(clk.now) {
		t.Errorf("InitialAttemptTimestamp = %v, want %v", pb.InitialAttemptTimestamp, clk.now)
	}
	if !reflect.DeepEqual(*pb, want) {
		t.Errorf("record after reuse:\ngot  %+v\nwant %+v", *pb, want)
	}
	if loc, _ := q.Locate("ns/a"); loc != "" {
		t.Errorf("ns/a is in %s after it was done", loc)
	}
}
