package bound

import (
	"context"
	"io"
	"net/http"
	"strings"
	"time"
)

// Transport bounds each request through a round tripper by limit (for
// rest.Config.Wrap), so that a server that accepts a call and never answers
// ends that call within limit — but not watches and connection upgrades
// (port-forward, exec), which last as long as they are used and which
// client-go ends itself. The bound covers the answer's body too: the call
// is over when its body is closed.
func Transport(limit time.Duration) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper { return &boundedTransport{rt: rt, limit: limit} }
}

type boundedTransport struct {
	rt    http.RoundTripper
	limit time.Duration
}

func (b *boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if b.limit <= 0 || longLived(req) {
		return b.rt.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), b.limit)
	resp, err := b.rt.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// longLived reports a watch or a connection upgrade.
func longLived(req *http.Request) bool {
	if w := req.URL.Query().Get("watch"); w == "true" || w == "1" {
		return true
	}
	return req.Header.Get("Upgrade") != "" || strings.Contains(strings.ToLower(req.Header.Get("Connection")), "upgrade")
}

// WrappedRoundTripper lets client-go see through the wrapper.
func (b *boundedTransport) WrappedRoundTripper() http.RoundTripper { return b.rt }

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
