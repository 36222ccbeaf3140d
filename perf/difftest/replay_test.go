package difftest

// The replays of one trace through the model and through upstream's queue,
// in a file of their own: upstreamgen copies it, with bench_test.go, into
// the modules of the older versions' queues.

import (
	"bytes"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue/trace"
)

// replayModel replays t through the model.
func replayModel(t *trace.Trace) ([]byte, error) {
	var out bytes.Buffer
	err := trace.Replay(t, newModel(t.Config, t.Plugins()), &out)
	return out.Bytes(), err
}

// replayUpstream replays t through upstream's queue. errs are what upstream
// logged at error level.
func replayUpstream(t *trace.Trace) (out []byte, errs []string, err error) {
	u, err := NewUpstream(t.Config, t.Plugins())
	if err != nil {
		return nil, nil, err
	}
	defer u.Close()
	var b bytes.Buffer
	err = trace.Replay(t, u, &b)
	return b.Bytes(), u.Errors(), err
}
