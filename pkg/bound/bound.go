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

// TLSHandshakeTimeout is the bound Go's and client-go's HTTP transports put
// on a TLS handshake, whatever --request-timeout says.
const TLSHandshakeTimeout = 10 * time.Second

// IsTLSHandshakeTimeout reports whether err is a server that took the
// connection and did not complete the TLS handshake within
// TLSHandshakeTimeout (net/http's error type for it is not exported).
func IsTLSHandshakeTimeout(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if strings.Contains(err.Error(), "TLS handshake timeout") {
			return true
		}
	}
	return false
}

// HandshakeTimeoutError is a call whose server accepted the connection and
// did not complete the TLS handshake within TLSHandshakeTimeout.
type HandshakeTimeoutError struct {
	Call string
	Err  error
}

func (e *HandshakeTimeoutError) Error() string {
	return fmt.Sprintf("%s: the TLS handshake did not complete within %s: the server accepted the connection but did not answer TLS "+
		"(no TLS server on that port, or one that hangs); this is the HTTP client's bound on a handshake, which --request-timeout does not change",
		e.Call, TLSHandshakeTimeout)
}

func (e *HandshakeTimeoutError) Unwrap() error { return e.Err }

// Call names the call and its bound in a timeout, and wraps any other
// error with the call's name.
func Call(call string, bound time.Duration, err error) error {
	if err == nil {
		return nil
	}
	var te *TimeoutError
	var he *HandshakeTimeoutError
	if errors.As(err, &te) || errors.As(err, &he) {
		return err
	}
	if IsTLSHandshakeTimeout(err) {
		return &HandshakeTimeoutError{Call: call, Err: err}
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
