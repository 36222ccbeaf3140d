// Package bound keeps what a command reads within its bounds. In time: one
// error type, TimeoutError, that names the call, its bound and the flag
// that lengthens it, and the test of whether an error is a timeout at all,
// whichever layer (context, net, client-go, API server) reported it. In
// size: one capped reader (Reader, ReadAll, ReadAllContext) that every body
// read from a file or the network goes through, failing at its cap with a
// TooLargeError that names the source.
package bound

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// DefaultRequestTimeout bounds every network call when --request-timeout is
// not set or is 0.
const DefaultRequestTimeout = 30 * time.Second

// IsTimeout reports whether err means a call ran out of time: the context's
// deadline, a network timeout, or the API server's own timeout.
func IsTimeout(err error) bool {
	var netErr net.Error
	return errors.Is(err, context.DeadlineExceeded) ||
		(errors.As(err, &netErr) && netErr.Timeout()) ||
		apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) ||
		strings.Contains(err.Error(), "context deadline exceeded") // client-go's rate limiter and retries flatten it
}

// TimeoutError is a network call that did not finish within its bound.
type TimeoutError struct {
	// Call names what was asked, e.g. `listing pods in namespace "shop"`.
	Call  string
	Bound time.Duration
	Err   error
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s: no answer within %s (wait longer with --request-timeout, e.g. --request-timeout=%s)", e.Call, e.Bound, 2*e.Bound)
}

func (e *TimeoutError) Unwrap() error { return e.Err }

// Call names the call and its bound in a timeout, and wraps any other
// error with the call's name.
func Call(call string, bound time.Duration, err error) error {
	if err == nil {
		return nil
	}
	var te *TimeoutError
	if errors.As(err, &te) {
		return err
	}
	if IsTimeout(err) {
		return &TimeoutError{Call: call, Bound: bound, Err: err}
	}
	return fmt.Errorf("%s: %w", call, err)
}

// Scrape names the scrape of src in a timeout.
func Scrape(src fmt.Stringer, bound time.Duration, err error) error {
	if err == nil || !IsTimeout(err) {
		return err
	}
	call := "reading the scheduler's metrics"
	if src != nil {
		call += " from " + src.String()
	}
	return Call(call, bound, err)
}
