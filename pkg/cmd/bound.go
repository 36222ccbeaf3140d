package cmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// DefaultRequestTimeout bounds every network call when --request-timeout is
// not set or is 0.
const DefaultRequestTimeout = 30 * time.Second

// requestTimeout is the bound of every network call a command makes:
// --request-timeout when it is set and not 0, else DefaultRequestTimeout.
// The flag is read the way kubectl reads it (a bare integer is seconds), and
// a value that does not parse is an error whatever the source of the
// metrics. cmd may be nil (tests); then the getter's REST config decides.
func requestTimeout(cmd *cobra.Command, getter genericclioptions.RESTClientGetter) (time.Duration, error) {
	if cmd != nil {
		if f := cmd.Flags().Lookup("request-timeout"); f != nil && f.Changed {
			d, err := parseRequestTimeout(f.Value.String())
			if err != nil {
				return 0, err
			}
			if d > 0 {
				return d, nil
			}
			return DefaultRequestTimeout, nil
		}
	}
	if getter != nil {
		if cfg, err := getter.ToRESTConfig(); err == nil && cfg.Timeout > 0 {
			return cfg.Timeout, nil
		}
	}
	return DefaultRequestTimeout, nil
}

func parseRequestTimeout(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("--request-timeout=%s: want a non-negative duration such as 30s (0 means the default, %s)", s, DefaultRequestTimeout)
		}
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("--request-timeout=%s: want a non-negative duration such as 30s (0 means the default, %s)", s, DefaultRequestTimeout)
	}
	return d, nil
}

// isTimeout reports whether err means a call ran out of time: the context's
// deadline, a network timeout, or the API server's own timeout.
func isTimeout(err error) bool {
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

// bounded names the call and its bound in a timeout, and wraps any other
// error with the call's name.
func bounded(call string, bound time.Duration, err error) error {
	if err == nil {
		return nil
	}
	var te *TimeoutError
	if errors.As(err, &te) {
		return err
	}
	if isTimeout(err) {
		return &TimeoutError{Call: call, Bound: bound, Err: err}
	}
	return fmt.Errorf("%s: %w", call, err)
}

// boundedScrape names the scrape of src in a timeout.
func boundedScrape(src fmt.Stringer, bound time.Duration, err error) error {
	if err == nil || !isTimeout(err) {
		return err
	}
	call := "reading the scheduler's metrics"
	if src != nil {
		call += " from " + src.String()
	}
	return bounded(call, bound, err)
}
