package bound

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
)

// Origin is the scheme, host and port a request is meant for: credentials
// given for one origin are never sent to another. A redirect to another
// scheme (https to http), host or port is another origin.
type Origin struct {
	Scheme string // "http" or "https"
	Host   string // lower case, without brackets
	Port   string // the scheme's default filled in
}

// OriginOf is the origin of u.
func OriginOf(u *url.URL) Origin {
	o := Origin{Scheme: strings.ToLower(u.Scheme), Host: strings.ToLower(u.Hostname()), Port: u.Port()}
	if o.Port == "" {
		switch o.Scheme {
		case "https", "wss":
			o.Port = "443"
		case "http", "ws":
			o.Port = "80"
		}
	}
	// client-go's WebSocket tunnels (port-forward) rewrite https to wss
	// below the guard's place in some chains: the same origin.
	switch o.Scheme {
	case "wss":
		o.Scheme = "https"
	case "ws":
		o.Scheme = "http"
	}
	return o
}

// ParseOrigin is the origin of an http(s) URL.
func ParseOrigin(raw string) (Origin, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Origin{}, err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return Origin{}, fmt.Errorf("%q is not an http(s) URL with a host", raw)
	}
	return OriginOf(u), nil
}

func (o Origin) String() string {
	return o.Scheme + "://" + net.JoinHostPort(o.Host, o.Port)
}

// Is reports whether u is of this origin.
func (o Origin) Is(u *url.URL) bool { return OriginOf(u) == o }

// OriginError is a request for another origin than the one the client's
// credentials belong to. The guard refuses it before anything is sent.
type OriginError struct {
	Origin Origin
	// URL is where the request was going, without credentials or query.
	URL string
}

func (e *OriginError) Error() string {
	return fmt.Sprintf("refused to send a request to %s: this client's credentials are for %s, and a redirect or request to another scheme, host or port gets none of them", e.URL, e.Origin)
}

// RedirectError is a redirect to another origin: it is not followed, so
// that nothing meant for the origin the user named goes elsewhere.
type RedirectError struct {
	// From is the URL that answered with the redirect, To where it points
	// (both without credentials; From without its query).
	From, To string
	// Status is the answer's status line, e.g. "302 Found".
	Status string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("%s answered %s, a redirect to %s: not followed, because it leaves %s (another scheme, host or port) "+
		"and credentials go only to the server you named; if you trust %s, name it yourself",
		e.From, e.Status, e.To, originText(e.From), e.To)
}

func originText(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return OriginOf(u).String()
	}
	return raw
}

// maxRedirects is net/http's own limit.
const maxRedirects = 10

// CheckRedirect is the redirect policy of every client that carries
// credentials (http.Client.CheckRedirect): a redirect within the origin of
// the first request is followed, up to 10 times; one that leaves it ends
// the call with a *RedirectError.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) == 0 {
		return nil
	}
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	first := OriginOf(via[0].URL)
	if first.Is(req.URL) {
		return nil
	}
	re := &RedirectError{From: Redact(via[len(via)-1].URL, false), To: Redact(req.URL, true)}
	if req.Response != nil {
		re.Status = req.Response.Status
	}
	return re
}

// Redact writes u without its password and, unless withQuery, without its
// query (a PromQL expression is long and says nothing about where).
func Redact(u *url.URL, withQuery bool) string {
	c := *u
	if !withQuery {
		c.RawQuery, c.ForceQuery = "", false
	}
	c.Fragment, c.RawFragment = "", ""
	return c.Redacted()
}

// Guard wraps a round tripper so that it refuses every request for another
// origin than o, with an *OriginError, before the request leaves. As
// rest.Config.WrapTransport it sits below client-go's authentication, so
// the token, basic auth or exec credential a request carries by then never
// reaches a server the kubeconfig does not name, whatever the http.Client
// does with redirects.
func Guard(o Origin) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper { return &guard{origin: o, rt: rt} }
}

type guard struct {
	origin Origin
	rt     http.RoundTripper
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if !g.origin.Is(req.URL) {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, &OriginError{Origin: g.origin, URL: Redact(req.URL, false)}
	}
	return g.rt.RoundTrip(req)
}

// WrappedRoundTripper lets client-go see through the guard.
func (g *guard) WrappedRoundTripper() http.RoundTripper { return g.rt }

// CloseIdleConnections reaches the transport below (a port-forward's
// connections end with it).
func (g *guard) CloseIdleConnections() { utilnet.CloseIdleConnectionsFor(g.rt) }

// Client is the http.Client for requests to o through rt (which may carry
// credentials): every request, redirects included, goes through Guard(o),
// and a redirect that leaves o fails with a *RedirectError that names it.
func Client(o Origin, rt http.RoundTripper) *http.Client {
	return &http.Client{Transport: Guard(o)(rt), CheckRedirect: CheckRedirect}
}

// APIConfig bounds every client built from cfg, the API server's: it
// refuses requests to another origin than cfg's server (Guard, as cfg's
// innermost wrapper), and caps each answer at MaxAPIAnswerBytes (watches
// and connection upgrades, which stream as long as they are used,
// excepted). It returns cfg. A config whose server does not parse is
// returned as it is: client-go refuses it in its own words.
func APIConfig(cfg *rest.Config) *rest.Config {
	if cfg == nil {
		return nil
	}
	u, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return cfg
	}
	cfg.Wrap(Guard(OriginOf(u)))
	cfg.Wrap(CapBodies(MaxAPIAnswerBytes))
	return cfg
}

// MaxAPIAnswerBytes caps one answer of the API server: a page of 500 pods
// or 5,000 events is a few MiB.
const MaxAPIAnswerBytes = 256 << 20

// IsRefused reports whether err is a request the origin policy stopped: a
// redirect elsewhere, or a request for another origin.
func IsRefused(err error) bool {
	var re *RedirectError
	var oe *OriginError
	return errors.As(err, &re) || errors.As(err, &oe)
}
