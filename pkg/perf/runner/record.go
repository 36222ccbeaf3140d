package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/quote"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/workload"
)

func (e *executor) since(t time.Time) float64 { return t.Sub(e.start).Seconds() }

func (e *executor) warnf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	e.warnMu.Lock()
	defer e.warnMu.Unlock()
	e.result.Warnings = append(e.result.Warnings, msg)
	fmt.Fprintf(e.opts.Warnings, "warning: %s\n", quote.Text(msg))
}

// bgError records the failure of something running in the background
// (upstream: tCtx.Errorf, which fails the workload at its end).
func (e *executor) bgError(op workload.Op, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	e.bgMu.Lock()
	defer e.bgMu.Unlock()
	e.bgErrs = append(e.bgErrs, fmt.Errorf("%s (%s): %w", op.Pos(), op.Opcode(), err))
}
