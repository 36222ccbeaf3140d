package cmd

import (
	"fmt"
	"strconv"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// DefaultRequestTimeout bounds every network call when --request-timeout is
// not set or is 0.
const DefaultRequestTimeout = bound.DefaultRequestTimeout

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
