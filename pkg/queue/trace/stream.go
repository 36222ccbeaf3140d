package trace

import (
	"io"
	"sync/atomic"
)

// StreamDriver is a Driver that takes the trace's plugins as the reader
// first meets them rather than all before the first operation, so that a
// trace can be replayed while it is read (ReadAndReplay).
//
// The replay is the same as with every plugin registered from the start: a
// plugin's hints are asked only about pods it rejected, which a line naming
// it comes before; and while no plugin is registered, the events a
// registration would make of interest find nothing to do. Such an event
// moves no pod (unschedulablePods then holds only gated pods, which wait for
// their gate's event alone), and a pod in flight that later fails with
// plugins would ask it of plugins its queue list did not name, which answer
// QueueSkip.
type StreamDriver interface {
	Driver
	// RegisterPlugins registers each plugin for every event of Events.
	RegisterPlugins(plugins []string)
}

// batch is a block of operations read, with what the replay needs to run
// them: view holds the header and the pods and argument lists read so far
// (the reader only appends to those, past what view sees).
type batch struct {
	view    Trace
	ops     []op
	plugins []string // named for the first time since the last batch
	err     error    // the read failed; the last batch
}

// ReadAndReplay reads a trace from r and replays it through the driver
// newDriver returns for the trace's header, as Read and ReplayAll would, but
// one goroutine reads while another replays what is read: on two cores or
// more the replay costs little more than the reading. It returns the number
// of operations. As with Read and ReplayAll, w gets nothing unless the whole
// trace was read and replayed, and a line the reader rejects is reported
// wherever it is, before any error of the replay.
func ReadAndReplay(r io.Reader, newDriver func(Config) (StreamDriver, error), w io.Writer) (int, error) {
	batches := make(chan batch, 4)
	// The replay hands the reader back the blocks it has replayed.
	spare := make(chan []op, cap(batches)+2)
	// stop ends the replay once the reader failed: what it would print is
	// not printed, and a gap of years between two operations can take long.
	var stop atomic.Bool
	go func() {
		defer close(batches)
		send := func(b batch) { batches <- b }
		if _, err := readTo(r, true, send, spare); err != nil {
			stop.Store(true)
			send(batch{err: err})
		}
	}()
	var (
		out     blockBuffer
		rp      *replayer
		d       StreamDriver
		failed  error
		n       int
		readErr error
	)
	for b := range batches {
		if b.err != nil {
			readErr = b.err
			continue
		}
		n += len(b.ops)
		if failed != nil {
			// Read on: a line the reader rejects is reported first.
			continue
		}
		if d == nil {
			if d, failed = newDriver(b.view.Config); failed != nil {
				// The driver is the header's: so is the problem.
				failed = b.view.headerError(failed)
				continue
			}
			rp = newReplayer(d, &out)
			rp.stop = &stop
			if failed = rp.useGroups(&b.view); failed != nil {
				continue
			}
		}
		if len(b.plugins) > 0 {
			d.RegisterPlugins(b.plugins)
		}
		rp.ix.setPodNames(b.view.names)
		failed = rp.run(&b.view, b.ops)
		select {
		case spare <- b.ops:
		default:
		}
	}
	if readErr != nil {
		return 0, readErr
	}
	if failed == nil {
		failed = rp.finish()
	}
	if failed != nil {
		return 0, failed
	}
	return n, out.writeTo(w)
}
