package trace

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
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
	// Pod groups: the two pod-group queues and the groups, each alone.
	snapshots = append(snapshots,
		Snapshot{Pending: Pending{Incomplete: 3}, Incoming: map[string]map[string]int{}, Pods: map[string]PodState{"ns/a": {Queue: "incomplete"}}},
		Snapshot{Pending: Pending{PendingPodGroup: -2}, Incoming: map[string]map[string]int{}, Pods: map[string]PodState{}},
		Snapshot{Pending: Pending{Active: 2, Incomplete: 1, PendingPodGroup: 12}, Incoming: map[string]map[string]int{},
			Pods:   map[string]PodState{"ns/a": {Queue: "pending", Attempts: 1}},
			Groups: map[string]GroupState{"ns/g": {Queue: "errorBackoff", Attempts: 2, Size: 2}, "ns/f": {Queue: "active", Size: 1}, "é/<&>": {}}},
		Snapshot{Incoming: map[string]map[string]int{}, Pods: map[string]PodState{}, Groups: map[string]GroupState{}},
	)
	// Enough pods to be sorted by key: names sharing prefixes, names that are
	// prefixes of others, zero bytes, long ties in the first 8 bytes.
	many := map[string]PodState{}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		n := "ns-" + strconv.Itoa(r.IntN(20)) + "/"
		switch i % 4 {
		case 0:
			n += "p" + strconv.Itoa(r.IntN(1000))
		case 1:
			n += "pod-with-a-long-name-" + strconv.Itoa(r.IntN(500))
		case 2:
			n += strings.Repeat("\x00", r.IntN(3)) + strings.Repeat("a", r.IntN(12))
		default:
			n = n[:r.IntN(len(n)+1)]
		}
		many[n] = PodState{Queue: "active", Attempts: i}
	}
	snapshots = append(snapshots, Snapshot{Incoming: map[string]map[string]int{}, Pods: many})
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

// TestAppendPopLine: pop lines, written from a prefix kept per instant, are
// what encoding/json writes, for pods that need escaping and attempts of one
// digit and more.
func TestAppendPopLine(t *testing.T) {
	for _, at := range []int64{0, 7, 1_700_000_000_123, -5} {
		for _, pod := range []string{"ns/a", "é/<&>", "ns/\"q\"\n", ""} {
			for _, attempts := range []int{0, 1, 9, 10, 11, 99, 100, 12345} {
				for _, ok := range []bool{true, false} {
					l := popLine{At: at}
					if ok {
						p, a := pod, attempts
						l.Pop, l.Attempts = &p, &a
					}
					var want bytes.Buffer
					enc := json.NewEncoder(&want)
					enc.SetEscapeHTML(false)
					if err := enc.Encode(&l); err != nil {
						t.Fatal(err)
					}
					got := appendPopRest(strconv.AppendInt([]byte(`{"at":`), at, 10), pod, attempts, ok)
					if !bytes.Equal(got, want.Bytes()) {
						t.Errorf("at %d, pod %q, attempts %d, ok %v:\ngot  %s\nwant %s", at, pod, attempts, ok, got, want.Bytes())
					}
				}
			}
		}
	}
}

// TestAppendPopGroupLine: pops of pod groups are what encoding/json writes.
func TestAppendPopGroupLine(t *testing.T) {
	for _, group := range []string{"ns/g", "é/<&>"} {
		for _, members := range [][]string{nil, {"ns/a"}, {"ns/b", "ns/a", "ns/\"q\""}} {
			for _, attempts := range []int{0, 1, 10, 12345} {
				g, a := group, attempts
				l := popLine{At: 1200, Pop: &g, PodGroup: true, Pods: members, Attempts: &a}
				var want bytes.Buffer
				enc := json.NewEncoder(&want)
				enc.SetEscapeHTML(false)
				if err := enc.Encode(&l); err != nil {
					t.Fatal(err)
				}
				got := appendPopGroupRest([]byte(`{"at":1200`), group, members, attempts)
				if !bytes.Equal(got, want.Bytes()) {
					t.Errorf("group %q, members %q, attempts %d:\ngot  %s\nwant %s", group, members, attempts, got, want.Bytes())
				}
			}
		}
	}
}

// TestSortedOrder: the chunked sort orders names as strings.Compare does,
// where names share long prefixes, end on and off chunk boundaries, are
// prefixes of others, and differ only in trailing zero bytes.
func TestSortedOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"\x00", "a", "b", "/", "\xff"}
	seen := map[string]bool{}
	var pods []NamedPodState
	for len(pods) < 5000 {
		var n strings.Builder
		n.WriteString([]string{"", "default/", "team-a/p", "a-namespace-of-24-bytes/"}[r.IntN(4)])
		for range r.IntN(20) {
			n.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		if s := n.String(); !seen[s] {
			seen[s] = true
			pods = append(pods, NamedPodState{Name: s})
		}
	}
	order := sortedOrder(pods)
	got := make([]string, len(order))
	for i, o := range order {
		got[i] = pods[o.i].Name
	}
	if !slices.IsSorted(got) {
		for i := 1; i < len(got); i++ {
			if got[i-1] > got[i] {
				t.Fatalf("%q before %q", got[i-1], got[i])
			}
		}
	}
	if len(got) != len(pods) {
		t.Fatalf("%d names in order, want %d", len(got), len(pods))
	}
}
