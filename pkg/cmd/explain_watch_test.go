package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestExplain_watchPipe: in a pipe, --watch writes every pod once, then
// one JSON object per pod that appears, moves or goes.
func TestExplain_watchPipe(t *testing.T) {
	o, client, out, _ := newTestExplain(t, parkedCluster(0), "-A")
	o.Watch = true
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
	var lines []watchLine
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var w watchLine
		if err := json.Unmarshal([]byte(l), &w); err != nil {
			t.Fatalf("not one JSON object per line: %v\n%s", err, out)
		}
		lines = append(lines, w)
	}
	if len(lines) < 18 || len(lines) > 16+3+2 {
		t.Fatalf("%d lines, want the 16 pods, then the new one and the one gone (and few others):\n%s", len(lines), out)
	}
	var fresh, gone bool
	for _, l := range lines[16:] {
		fresh = fresh || l.Type == "Changed" && l.Pod.Name == "fresh" && l.Pod.Queue != ""
		gone = gone || l.Type == "Gone" && l.Pod.Name == "gated-0"
	}
	if !fresh || !gone {
		t.Errorf("after the first round, want fresh Changed and gated-0 Gone:\n%s", out)
	}
}

func TestExplain_watchValidate(t *testing.T) {
	o, _, _, _ := newTestExplain(t, parkedCluster(0), "-A", "-o", "json")
	o.Watch = true
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--watch") {
		t.Errorf("Validate() = %v, want --watch with -o json refused", err)
	}
	o, _, _, _ = newTestExplain(t, parkedCluster(0), "-A")
	o.Watch, o.Interval = true, time.Nanosecond
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--interval=1ns") {
		t.Errorf("Validate() = %v, want 1ns refused", err)
	}
}
