package trace

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// TestAppendSnapshot: snapshot lines are what encoding/json writes.
func TestAppendSnapshot(t *testing.T) {
	type snapshotLine struct {
		At       int64    `json:"at"`
		Snapshot Snapshot `json:"snapshot"`
	}
	type finalLine struct {
		Final Snapshot `json:"final"`
	}
	snapshots := []Snapshot{
		{Incoming: map[string]map[string]int{}, Pods: map[string]PodState{}},
		{
			Pending:  Pending{Active: 3, Backoff: -1, Unschedulable: 7, Gated: 1 << 40},
			Incoming: map[string]map[string]int{"unschedulable": {"b": 1, "a": 2}, "active": {"PodAdd": 9}, "x<&>\"\\\u00e9\n": {}},
			Pods: map[string]PodState{
				"ns/b": {Queue: "active", Attempts: 2}, "ns/a": {Queue: "inFlight"}, "ns/a0": {},
				"é/<&>": {Queue: "\t\"q\""}, "": {Attempts: -3},
			},
		},
	}
	for i, s := range snapshots {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&snapshotLine{At: int64(i) * 1000, Snapshot: s}); err != nil {
			t.Fatal(err)
		}
		if err := enc.Encode(&finalLine{Final: s}); err != nil {
			t.Fatal(err)
		}
		got := appendFinalLine(appendSnapshotLine(nil, int64(i)*1000, s, nil), s, nil)
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("snapshot %d:\ngot  %s\nwant %s", i, got, want.Bytes())
		}
		// The same pods as a list, in any order, as a PodLister hands them.
		listed := s
		listed.Pods = nil
		list := []NamedPodState{}
		for n, st := range s.Pods {
			list = append(list, NamedPodState{n, st})
		}
		got = appendSnapshotLine(nil, int64(i)*1000, listed, slices.Clone(list))
		got = appendFinalLine(got, listed, list)
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("snapshot %d from a list:\ngot  %s\nwant %s", i, got, want.Bytes())
		}
	}
	// Nil maps are written as empty ones.
	got := appendFinalLine(nil, Snapshot{}, nil)
	if want := `{"final":{"pending":{"active":0,"backoff":0,"unschedulable":0,"gated":0},"incoming":{},"pods":{}}}` + "\n"; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
