package trace_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace"
)

const groupHeader = `{"schedqTrace":1,"config":{"genericWorkload":true}}` + "\n"

// TestRead_PodGroups: the pod-group fields and ops are read, with the
// group, the status and the priority of podGroupAdd.
func TestRead_PodGroups(t *testing.T) {
	tr := readBoth(t, []byte(groupHeader+
		`{"at":0,"op":"podGroupAdd","group":"ns/g","priority":7}`+"\n"+
		`{"at":1,"op":"add","pod":"ns/a","group":"ns/g","gates":["x"]}`+"\n"+
		`{"at":2,"op":"add","pod":"ns/b"}`+"\n"+
		`{"at":3,"op":"pop"}`+"\n"+
		`{"at":4,"op":"attempted","group":"ns/g","status":"unschedulable"}`+"\n"+
		`{"at":5,"op":"podGroupDelete","group":"ns/g"}`+"\n"))
	if !tr.Config.GenericWorkload {
		t.Error("genericWorkload is off")
	}
	want := []trace.Op{
		{Line: 2, At: 0, Kind: trace.OpPodGroupAdd, Group: "ns/g", Priority: 7},
		{Line: 3, At: 1, Kind: trace.OpAdd, Pod: "ns/a", Group: "ns/g", Gates: []string{"x"}},
		{Line: 4, At: 2, Kind: trace.OpAdd, Pod: "ns/b"},
		{Line: 5, At: 3, Kind: trace.OpPop},
		{Line: 6, At: 4, Kind: trace.OpAttempted, Group: "ns/g", Status: "unschedulable"},
		{Line: 7, At: 5, Kind: trace.OpPodGroupDelete, Group: "ns/g"},
	}
	if got := fmt.Sprintf("%+v", tr.Ops()); got != fmt.Sprintf("%+v", want) {
		t.Errorf("ops:\ngot  %s\nwant %+v", got, want)
	}
}

// TestRead_PodGroupsRejected: each rejection the format lists for pod
// groups, on its line.
func TestRead_PodGroupsRejected(t *testing.T) {
	for _, tc := range []struct {
		name, trace string
		line        int
		want        string
	}{
		{"group without genericWorkload", `{"schedqTrace":1}` + "\n" + `{"at":0,"op":"add","pod":"ns/a","group":"ns/g"}`, 2, `a group field needs pod groups: set "genericWorkload": true`},
		{"group op without header", `{"at":0,"op":"podGroupAdd","group":"ns/g"}`, 1, `op podGroupAdd needs pod groups`},
		{"attempted with genericWorkload off", `{"schedqTrace":1,"config":{"genericWorkload":false}}` + "\n" + `{"at":0,"op":"attempted","group":"ns/g","status":"success"}`, 2, `op attempted needs pod groups`},
		{"genericWorkload not a bool", `{"schedqTrace":1,"config":{"genericWorkload":1}}`, 1, `config.genericWorkload must be true or false`},
		{"group not namespace/name", groupHeader + `{"at":0,"op":"podGroupAdd","group":"g"}`, 2, `group "g" is not namespace/name`},
		{"group with a bad name", groupHeader + `{"at":0,"op":"podGroupDelete","group":"ns/G"}`, 2, `group "ns/G": name "G"`},
		{"group in another namespace", groupHeader + `{"at":0,"op":"add","pod":"ns/a","group":"other/g"}`, 2, `a pod's group is in its namespace`},
		{"unknown status", groupHeader + `{"at":0,"op":"attempted","group":"ns/g","status":"failed"}`, 2, `unknown status "failed" (want success|unschedulable|error)`},
		{"attempted without status", groupHeader + `{"at":0,"op":"attempted","group":"ns/g"}`, 2, `op attempted needs "status"`},
		{"podGroupAdd without group", groupHeader + `{"at":0,"op":"podGroupAdd"}`, 2, `op podGroupAdd needs "group"`},
		{"group on fail", groupHeader + `{"at":0,"op":"fail","pod":"ns/a","plugins":[],"group":"ns/g"}`, 2, `unknown field "group" for op fail`},
		{"status on podGroupAdd", groupHeader + `{"at":0,"op":"podGroupAdd","group":"ns/g","status":"success"}`, 2, `unknown field "status" for op podGroupAdd`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, read := range []func([]byte) error{
				func(b []byte) error { _, err := trace.Read(bytes.NewReader(b)); return err },
				func(b []byte) error { _, err := trace.ReadJSON(bytes.NewReader(b)); return err },
			} {
				err := read([]byte(tc.trace + "\n"))
				var le *trace.LineError
				if !errors.As(err, &le) {
					t.Fatalf("got %v, want an error on line %d", err, tc.line)
				}
				if le.Line != tc.line || !strings.Contains(le.Err.Error(), tc.want) {
					t.Errorf("got line %d: %v; want line %d: …%s…", le.Line, le.Err, tc.line, tc.want)
				}
			}
		})
	}
}

// groupQueue is a GroupDriver that queues one pod group of the pods added
// to it, popped whole, and logs the calls it gets.
type groupQueue struct {
	calls   []string
	members []string
	singles []string
	where   map[string]string
}

func newGroupQueue() *groupQueue { return &groupQueue{where: map[string]string{}} }

func (g *groupQueue) log(f string, a ...any) { g.calls = append(g.calls, fmt.Sprintf(f, a...)) }
func (g *groupQueue) SetTime(int64)          {}
func (g *groupQueue) Add(pod string, _ int32, _ []string) {
	g.log("Add %s", pod)
	g.singles = append(g.singles, pod)
	g.where[pod] = "active"
}
func (g *groupQueue) Pop() (string, int, bool) { g.log("Pop"); return "", 0, false }
func (g *groupQueue) Fail(pod string, _, _ []string) {
	g.log("Fail %s", pod)
	g.where[pod] = "pending"
}
func (g *groupQueue) Done(pod string)                 { g.log("Done %s", pod); delete(g.where, pod) }
func (g *groupQueue) Event(string, []string)          {}
func (g *groupQueue) Activate([]string)               {}
func (g *groupQueue) Ungate(string)                   {}
func (g *groupQueue) Delete(string)                   {}
func (g *groupQueue) FlushBackoffQCompleted()         {}
func (g *groupQueue) FlushUnschedulablePodsLeftover() {}
func (g *groupQueue) Where(pod string) string         { return g.where[pod] }
func (g *groupQueue) Snapshot() trace.Snapshot {
	s := trace.Snapshot{Pods: map[string]trace.PodState{}, Incoming: map[string]map[string]int{}}
	for p, w := range g.where {
		s.Pods[p] = trace.PodState{Queue: w}
		if w == "pending" {
			s.Pending.PendingPodGroup++
		}
	}
	if len(g.members) > 0 {
		s.Groups = map[string]trace.GroupState{"ns/g": {Queue: "active", Size: len(g.members)}}
	}
	return s
}
func (g *groupQueue) AddPodGroup(group string, priority int32) {
	g.log("AddPodGroup %s %d", group, priority)
}
func (g *groupQueue) DeletePodGroup(group string) { g.log("DeletePodGroup %s", group) }
func (g *groupQueue) AddGroupMember(pod string, priority int32, gates []string, group string) {
	g.log("AddGroupMember %s %d %v %s", pod, priority, gates, group)
	g.members = append(g.members, pod)
	g.where[pod] = "active"
}
func (g *groupQueue) PopEntity() (string, bool, []string, int, bool) {
	g.log("PopEntity")
	if len(g.members) == 0 {
		if len(g.singles) == 0 {
			return "", false, nil, 0, false
		}
		p := g.singles[0]
		g.singles = g.singles[1:]
		g.where[p] = "inFlight"
		return p, false, nil, 1, true
	}
	m := g.members
	g.members = nil
	for _, p := range m {
		g.where[p] = "inFlight"
	}
	return "ns/g", true, m, 1, true
}
func (g *groupQueue) Attempted(group, status string) { g.log("Attempted %s %s", group, status) }

var _ trace.GroupDriver = (*groupQueue)(nil)

// TestReplay_PodGroups: replay drives a GroupDriver with the pod-group ops,
// pops whole groups and prints them as the format says.
func TestReplay_PodGroups(t *testing.T) {
	tr := readBoth(t, []byte(groupHeader+
		`{"at":0,"op":"podGroupAdd","group":"ns/g","priority":7}`+"\n"+
		`{"at":1,"op":"add","pod":"ns/a","group":"ns/g","gates":["x"]}`+"\n"+
		`{"at":2,"op":"add","pod":"ns/b","group":"ns/g"}`+"\n"+
		`{"at":3,"op":"add","pod":"ns/c"}`+"\n"+
		`{"at":4,"op":"pop"}`+"\n"+
		`{"at":5,"op":"fail","pod":"ns/a","plugins":[]}`+"\n"+
		`{"at":5,"op":"snapshot"}`+"\n"+
		`{"at":6,"op":"attempted","group":"ns/g","status":"error"}`+"\n"+
		`{"at":7,"op":"pop"}`+"\n"+
		`{"at":7,"op":"pop"}`+"\n"+
		`{"at":8,"op":"podGroupDelete","group":"ns/g"}`+"\n"))
	g := newGroupQueue()
	var out bytes.Buffer
	if err := trace.Replay(tr, g, &out); err != nil {
		t.Fatal(err)
	}
	wantCalls := "AddPodGroup ns/g 7|AddGroupMember ns/a 0 [x] ns/g|AddGroupMember ns/b 0 [] ns/g|Add ns/c|PopEntity|Fail ns/a|Attempted ns/g error|PopEntity|PopEntity|DeletePodGroup ns/g"
	if got := strings.Join(g.calls, "|"); got != wantCalls {
		t.Errorf("calls:\ngot  %s\nwant %s", got, wantCalls)
	}
	want := `{"at":4,"pop":"ns/g","podGroup":true,"pods":["ns/a","ns/b"],"attempts":1}
{"at":5,"snapshot":{"pending":{"active":0,"backoff":0,"unschedulable":0,"gated":0,"pending":1},"incoming":{},"pods":{"ns/a":{"queue":"pending","attempts":0},"ns/b":{"queue":"inFlight","attempts":0},"ns/c":{"queue":"active","attempts":0}}}}
{"at":7,"pop":"ns/c","attempts":1}
{"at":7,"pop":null}
{"final":{"pending":{"active":0,"backoff":0,"unschedulable":0,"gated":0,"pending":1},"incoming":{},"pods":{"ns/a":{"queue":"pending","attempts":0},"ns/b":{"queue":"inFlight","attempts":0},"ns/c":{"queue":"inFlight","attempts":0}}}}
`
	if out.String() != want {
		t.Errorf("output:\ngot  %s\nwant %s", out.String(), want)
	}
}

// TestReplay_PodGroupsRejected: the checks that need the replay's state,
// and the drivers and versions that cannot replay pod groups.
func TestReplay_PodGroupsRejected(t *testing.T) {
	const popped = `{"at":0,"op":"podGroupAdd","group":"ns/g"}` + "\n" + `{"at":1,"op":"add","pod":"ns/a","group":"ns/g"}` + "\n" + `{"at":2,"op":"pop"}` + "\n"
	for _, tc := range []struct {
		name, trace string
		line        int
		want        string
	}{
		{"attempted with nothing popped", `{"at":0,"op":"attempted","group":"ns/g","status":"success"}`, 2, `not the one last popped (nothing was popped)`},
		{"attempted of another group", popped + `{"at":3,"op":"attempted","group":"ns/h","status":"success"}`, 5, `attempted of group "ns/h", which is not the one last popped (the last pop was group "ns/g")`},
		{"attempted twice", popped + `{"at":3,"op":"attempted","group":"ns/g","status":"success"}` + "\n" + `{"at":4,"op":"attempted","group":"ns/g","status":"success"}`, 6, `it was attempted already since`},
		{"attempted after a pod's pop", `{"at":0,"op":"add","pod":"ns/g"}` + "\n" + `{"at":1,"op":"pop"}` + "\n" + `{"at":3,"op":"attempted","group":"ns/g","status":"success"}`, 4, `the last pop was pod "ns/g"`},
		{"fail of a pending member", popped + `{"at":3,"op":"fail","pod":"ns/a","plugins":[]}` + "\n" + `{"at":4,"op":"fail","pod":"ns/a","plugins":[]}`, 6, `fail of pod "ns/a", which is not in flight`},
		{"add of a pending member", popped + `{"at":3,"op":"fail","pod":"ns/a","plugins":[]}` + "\n" + `{"at":4,"op":"add","pod":"ns/a","group":"ns/g"}`, 6, `already holds (in pending)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := readBoth(t, []byte(groupHeader+tc.trace+"\n"))
			err := trace.Replay(tr, newGroupQueue(), &bytes.Buffer{})
			var le *trace.LineError
			if !errors.As(err, &le) {
				t.Fatalf("got %v, want an error on line %d", err, tc.line)
			}
			if le.Line != tc.line || !strings.Contains(le.Err.Error(), tc.want) {
				t.Errorf("got line %d: %v; want line %d: …%s…", le.Line, le.Err, tc.line, tc.want)
			}
		})
	}

	tr := readBoth(t, []byte("\n"+groupHeader+popped))
	t.Run("a driver without pod groups", func(t *testing.T) {
		err := trace.Replay(tr, &byNameOnly{newGroupQueue()}, &bytes.Buffer{})
		var le *trace.LineError
		if !errors.As(err, &le) || le.Line != 2 || !strings.Contains(err.Error(), "pod groups need a queue that models them") {
			t.Errorf("got %v, want line 2: pod groups need …", err)
		}
	})
	for _, v := range []queue.Version{queue.V1_34, queue.V1_35, queue.V1_36} {
		t.Run("version "+v.String(), func(t *testing.T) {
			at := *tr
			at.Config.Version = v
			err := trace.Replay(&at, newGroupQueue(), &bytes.Buffer{})
			var le *trace.LineError
			if !errors.Is(err, trace.ErrGroupsNeedV137) || !errors.As(err, &le) || le.Line != 2 {
				t.Errorf("got %v, want line 2: %v", err, trace.ErrGroupsNeedV137)
			}
			if err := at.Config.Check(); err == nil {
				t.Error("Config.Check accepts pod groups before v1.37")
			}
		})
	}
	at := *tr
	at.Config.Version = queue.V1_37
	if err := at.Config.Check(); err != nil {
		t.Errorf("v1.37: %v", err)
	}
	// A trace without pod groups replays on every version and driver.
	plain := readBoth(t, []byte(`{"at":0,"op":"add","pod":"ns/a"}`+"\n"))
	plain.Config.Version = queue.V1_34
	if err := trace.Replay(plain, &byNameOnly{newGroupQueue()}, &bytes.Buffer{}); err != nil {
		t.Errorf("a trace without pod groups: %v", err)
	}
}

// byNameOnly hides a driver's pod-group methods.
type byNameOnly struct{ trace.Driver }

// TestReadAndReplay_PodGroupsNeedAGroupDriver: a streamed replay of a
// pod-group trace through a queue that does not model pod groups is refused
// on the header's line, printing nothing.
func TestReadAndReplay_PodGroupsNeedAGroupDriver(t *testing.T) {
	in := "\n" + groupHeader + `{"at":0,"op":"podGroupAdd","group":"ns/g"}` + "\n"
	var out bytes.Buffer
	_, err := trace.ReadAndReplay(strings.NewReader(in), func(cfg trace.Config) (trace.StreamDriver, error) {
		return struct{ trace.StreamDriver }{trace.NewModel(cfg, nil)}, nil
	}, &out)
	var le *trace.LineError
	if !errors.As(err, &le) || le.Line != 2 || !strings.Contains(err.Error(), "pod groups need a queue that models them") {
		t.Errorf("got %v, want line 2: pod groups need …", err)
	}
	if out.Len() != 0 {
		t.Errorf("printed %q", out.String())
	}
	// The driver's own error about the header is placed on its line too.
	_, err = trace.ReadAndReplay(strings.NewReader(in), func(cfg trace.Config) (trace.StreamDriver, error) {
		cfg.Version = queue.V1_36
		return nil, cfg.Check()
	}, &out)
	if !errors.As(err, &le) || le.Line != 2 || !errors.Is(err, trace.ErrGroupsNeedV137) {
		t.Errorf("got %v, want line 2: %v", err, trace.ErrGroupsNeedV137)
	}
}
