package runner

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestNewProgress_lines(t *testing.T) {
	var buf bytes.Buffer
	p := NewProgress(&buf, false)
	op := &OpProgress{Workload: "T/w", Index: 2, Total: 4, Opcode: "createPods", Detail: "10 pods in ns", Want: 10, Started: time.Now()}
	p.OpStart(op)
	op.Created.Store(10)
	op.Bound.Store(10)
	p.OpDone(op, "10 pods bound", nil)
	p.OpStart(op)
	p.OpDone(op, "", errors.New("boom"))
	got := buf.String()
	for _, want := range []string{
		"T/w: op 2 (3rd of 4) createPods 10 pods in ns\n",
		"T/w: op 2 (3rd of 4) createPods done in ",
		": 10 pods bound\n",
		"T/w: op 2 (3rd of 4) createPods failed after ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\r") {
		t.Errorf("line progress redraws in place:\n%q", got)
	}
}

func TestNewProgress_bar(t *testing.T) {
	var buf bytes.Buffer
	p := NewProgress(&buf, true)
	op := &OpProgress{Workload: "T/w", Index: 0, Total: 1, Opcode: "createPods", Want: 8, Started: time.Now()}
	op.Created.Store(6)
	op.Bound.Store(2)
	p.OpStart(op)
	time.Sleep(150 * time.Millisecond)
	p.OpDone(op, "done here", nil)
	got := buf.String()
	// 24 cells: 2/8 bound is 6 full cells, 6/8 created 12 more half cells.
	if !strings.Contains(got, "\r\033[KT/w op 0 (1st of 1) createPods "+strings.Repeat("█", 6)+strings.Repeat("▒", 12)+strings.Repeat("░", 6)+" 2/8 bound, 6 created") {
		t.Errorf("no bar in:\n%q", got)
	}
	if !strings.HasSuffix(got, ": done here\n") {
		t.Errorf("the bar does not end with the summary line:\n%q", got)
	}
}
