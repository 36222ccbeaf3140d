package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
)

// TestExplain_watchPipe: in a pipe, or on a terminal with -o json, --watch
// writes kubectl's watch events: every pod ADDED once, then one event per
// pod that appears (ADDED), moves (MODIFIED) or goes (DELETED, with the last
// explanation written of it).
func TestExplain_watchPipe(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		terminal bool
	}{
		{name: "pipe", args: []string{"-A"}},
		{name: "terminal, -o json", args: []string{"-A", "-o", "json"}, terminal: true},
	} {
		t.Run(tc.name, func(t *testing.T) { testWatchEvents(t, tc.args, tc.terminal) })
	}
}

func testWatchEvents(t *testing.T, args []string, terminal bool) {
	o, client, out, _ := newTestExplain(t, parkedCluster(0), args...)
	o.Watch, o.terminal = true, terminal
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	round := 0
	o.after = func(time.Duration) <-chan time.Time {
		round++
		switch round {
		case 1: // a new pod
			fresh := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "fresh", UID: "fresh", CreationTimestamp: metav1.NewTime(explainNow)}}
			if _, err := client.CoreV1().Pods("default").Create(ctx, fresh, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		case 2: // a pod goes
			if err := client.CoreV1().Pods("default").Delete(ctx, "gated-0", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		case 3: // nothing changes
		default:
			cancel()
			return make(chan time.Time)
		}
		ch := make(chan time.Time, 1)
		ch <- explainNow
		return ch
	}
	if err := o.Run(ctx); err != nil {
		t.Fatal(err)
	}
	// Decoded as kubectl's own watch events, strictly.
	var lines []metav1.WatchEvent
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var w metav1.WatchEvent
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&w); err != nil {
			t.Fatalf("not one watch event per line: %v\n%s", err, out)
		}
		lines = append(lines, w)
	}
	if len(lines) < 18 || len(lines) > 16+3+2 {
		t.Fatalf("%d lines, want the 16 pods, then the new one and the one gone (and few others):\n%s", len(lines), out)
	}
	object := func(w metav1.WatchEvent) explain.Explanation {
		var e explain.Explanation
		if err := json.Unmarshal(w.Object.Raw, &e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, l := range lines[:16] {
		if l.Type != "ADDED" {
			t.Errorf("first round: %s %s, want every pod ADDED", l.Type, object(l).Name)
		}
	}
	var fresh, gone bool
	for _, l := range lines[16:] {
		e := object(l)
		fresh = fresh || l.Type == "ADDED" && e.Name == "fresh" && e.Queue != ""
		gone = gone || l.Type == "DELETED" && e.Name == "gated-0" && e.Queue != ""
	}
	if !fresh || !gone {
		t.Errorf("after the first round, want fresh ADDED and gated-0 DELETED with its last place:\n%s", out)
	}
}

func TestExplain_watchValidate(t *testing.T) {
	o, _, _, _ := newTestExplain(t, parkedCluster(0), "-A", "-o", "yaml")
	o.Watch = true
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "-o wide (the table) or -o json (the events)") {
		t.Errorf("Validate() = %v, want --watch with -o yaml refused, naming what it takes", err)
	}
	o, _, _, _ = newTestExplain(t, parkedCluster(0), "-A")
	o.Watch, o.Interval = true, time.Nanosecond
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--interval=1ns") {
		t.Errorf("Validate() = %v, want 1ns refused", err)
	}
}
