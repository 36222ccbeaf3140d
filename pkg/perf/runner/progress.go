package runner

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Progress is told about each op as it runs.
type Progress interface {
	// OpStart is called when op starts; Counter is live until OpDone.
	OpStart(op *OpProgress)
	// OpDone is called when op ends, with a one-line summary or its error.
	OpDone(op *OpProgress, summary string, err error)
}

// OpProgress is one op's live state.
type OpProgress struct {
	// Workload is "<test case>/<workload>" (and the variant, if any).
	Workload string
	// Index is the op's position, from 0 (workload.OpPos.Index, which
	// errors name as upstream's harness does: "op 3"), Total the number of
	// ops.
	Index, Total int
	Opcode       string
	// Detail says what the op works on ("1000 pods in namespace-2").
	Detail string
	// Want is how many objects the op waits for (0: no bar, only a clock).
	Want int64
	// Created and Bound count as the op goes.
	Created atomic.Int64
	Bound   atomic.Int64
	Started time.Time
}

type nopProgress struct{}

func (nopProgress) OpStart(*OpProgress)               {}
func (nopProgress) OpDone(*OpProgress, string, error) {}

// NewProgress reports to w: with terminal, one bar per op redrawn in place
// ten times a second; otherwise a line when an op starts and one when it
// ends.
func NewProgress(w io.Writer, terminal bool) Progress {
	if terminal {
		return &barProgress{w: w}
	}
	return &lineProgress{w: w}
}

type lineProgress struct{ w io.Writer }

// name is how progress names the op: by its index, as errors do, and how
// far the workload is ("op 3 (4th of 6) createPods").
func (op *OpProgress) name() string {
	return fmt.Sprintf("op %d (%s of %d) %s", op.Index, ordinal(op.Index+1), op.Total, op.Opcode)
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

func (p *lineProgress) OpStart(op *OpProgress) {
	fmt.Fprintf(p.w, "%s: %s %s\n", op.Workload, op.name(), op.Detail)
}

func (p *lineProgress) OpDone(op *OpProgress, summary string, err error) {
	took := time.Since(op.Started).Round(time.Millisecond)
	if err != nil {
		fmt.Fprintf(p.w, "%s: %s failed after %v\n", op.Workload, op.name(), took)
		return
	}
	fmt.Fprintf(p.w, "%s: %s done in %v%s\n", op.Workload, op.name(), took, prefixed(summary))
}

func prefixed(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

type barProgress struct {
	w    io.Writer
	mu   sync.Mutex
	stop chan struct{}
	done chan struct{}
}

const barWidth = 24

func (p *barProgress) OpStart(op *OpProgress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go func(stop, done chan struct{}) {
		defer close(done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			p.draw(op)
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}(p.stop, p.done)
}

func (p *barProgress) draw(op *OpProgress) {
	var b strings.Builder
	fmt.Fprintf(&b, "\r\033[K%s %s", op.Workload, op.name())
	if op.Want > 0 {
		created, bound := op.Created.Load(), op.Bound.Load()
		fill := int(float64(barWidth) * float64(min(bound, op.Want)) / float64(op.Want))
		// Created ahead of bound shows as a lighter part of the bar.
		ahead := int(float64(barWidth)*float64(min(created, op.Want))/float64(op.Want)) - fill
		ahead = max(0, ahead)
		fmt.Fprintf(&b, " %s%s%s %d/%d bound, %d created",
			strings.Repeat("█", fill), strings.Repeat("▒", ahead), strings.Repeat("░", barWidth-fill-ahead),
			bound, op.Want, created)
	} else if op.Detail != "" {
		fmt.Fprintf(&b, " %s", op.Detail)
	}
	fmt.Fprintf(&b, " %.1fs", time.Since(op.Started).Seconds())
	fmt.Fprint(p.w, b.String())
}

func (p *barProgress) OpDone(op *OpProgress, summary string, err error) {
	p.mu.Lock()
	stop, done := p.stop, p.done
	p.stop = nil
	p.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
	took := time.Since(op.Started).Round(time.Millisecond)
	status := "done"
	if err != nil {
		status, summary = "failed", ""
	}
	fmt.Fprintf(p.w, "\r\033[K%s %s %s in %v%s\n", op.Workload, op.name(), status, took, prefixed(summary))
}
