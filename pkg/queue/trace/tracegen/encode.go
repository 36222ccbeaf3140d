package tracegen

import (
	"bufio"
	"encoding/json"
	"io"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace"
)

type header struct {
	SchedqTrace int          `json:"schedqTrace"`
	Config      trace.Config `json:"config"`
}

// opLine is one operation in the input format. Fields an op does not take
// are left out; the list fields are pointers so that a required empty list
// (an error failure's "plugins": []) is written.
type opLine struct {
	At       int64     `json:"at"`
	Op       string    `json:"op"`
	Pod      string    `json:"pod,omitempty"`
	Priority int32     `json:"priority,omitempty"`
	Gates    []string  `json:"gates,omitempty"`
	Plugins  *[]string `json:"plugins,omitempty"`
	Pending  []string  `json:"pending,omitempty"`
	Event    string    `json:"event,omitempty"`
	Queue    *[]string `json:"queue,omitempty"`
	Pods     *[]string `json:"pods,omitempty"`
	Group    string    `json:"group,omitempty"`
	Status   string    `json:"status,omitempty"`
}

// Encode writes t as a trace file: a header with the full config, then one
// line per operation. trace.Read of the result gives t back (line numbers
// aside).
func Encode(w io.Writer, t *trace.Trace) error {
	bw := bufio.NewWriterSize(w, 64*1024)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(header{SchedqTrace: trace.Version, Config: t.Config}); err != nil {
		return err
	}
	for i := range t.Len() {
		op := t.Op(i)
		l := opLine{At: op.At, Op: string(op.Kind), Pod: op.Pod, Priority: op.Priority, Gates: op.Gates, Pending: op.Pending, Event: op.Event, Group: op.Group, Status: op.Status}
		switch op.Kind {
		case trace.OpFail:
			l.Plugins = nonNil(op.Plugins)
		case trace.OpEvent:
			l.Queue = nonNil(op.Queue)
		case trace.OpActivate:
			l.Pods = nonNil(op.Pods)
		}
		if err := enc.Encode(&l); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func nonNil(l []string) *[]string {
	if l == nil {
		l = []string{}
	}
	return &l
}
