package bound

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"

	"golang.org/x/net/http/httpguts"
)

// Secret holds a value that must not reach output, errors or logs: every
// fmt verb and JSON print "<redacted>", and the value is held in a closure
// that no printer can open, even as an unexported field. Value returns it.
type Secret struct{ v func() string }

// NewSecret holds s.
func NewSecret(s string) Secret { return Secret{v: func() string { return s }} }

// Value is the secret itself, for the request that carries it.
func (s Secret) Value() string {
	if s.v == nil {
		return ""
	}
	return s.v()
}

const redacted = "<redacted>"

func (s Secret) String() string                   { return redacted }
func (s Secret) GoString() string                 { return redacted }
func (s Secret) Format(f fmt.State, verb rune)    { _, _ = f.Write([]byte(redacted)) }
func (s Secret) MarshalJSON() ([]byte, error)     { return []byte(`"` + redacted + `"`), nil }
func (s Secret) MarshalText() ([]byte, error)     { return []byte(redacted), nil }
func (s *Secret) UnmarshalText(text []byte) error { *s = NewSecret(string(text)); return nil }

// Header is one request header the user gives (--prometheus-header): any
// value is taken for a credential (Authorization, an API key) and printed
// as "<redacted>".
type Header struct {
	Name  string
	Value Secret
}

func (h Header) String() string { return h.Name + ": " + redacted }

// ParseHeader reads "Name: value". Its errors never quote the value, nor
// the whole argument, which may be a token pasted without its name.
func ParseHeader(s string) (Header, error) {
	name, value, ok := strings.Cut(s, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	switch {
	case !ok || name == "":
		return Header{}, fmt.Errorf("want 'Name: value', such as 'X-Scope-OrgID: tenant-1' (the argument is not shown: it may hold a credential)")
	case !httpguts.ValidHeaderFieldName(name):
		return Header{}, fmt.Errorf("%q is not a valid header name", name)
	case !httpguts.ValidHeaderFieldValue(value):
		return Header{}, fmt.Errorf("header %s: the value holds a character a header may not (a line break?)", name)
	}
	switch http.CanonicalHeaderKey(name) {
	case "Host", "Content-Length", "Transfer-Encoding", "Connection":
		return Header{}, fmt.Errorf("header %s is set by the HTTP client, not by a flag", name)
	}
	return Header{Name: name, Value: NewSecret(value)}, nil
}

// MaxTokenFileBytes caps a bearer token file; cloud access tokens and JWTs
// are a few KiB.
const MaxTokenFileBytes = 64 << 10

// Credentials are what authenticates to one origin beyond the kubeconfig's
// credentials: a bearer token read from a file at each request (so a token
// a cloud CLI refreshes is picked up) and headers. Wrap attaches them; this
// is the only place they are attached, and only to requests for Origin.
type Credentials struct {
	Origin Origin
	// BearerTokenFile holds the token (its path is not a secret). A file
	// that can be read only once (a pipe, such as the shell's
	// <(gcloud auth print-access-token)) is read once and its token kept.
	BearerTokenFile string
	// TokenFlag names the flag that gave the file, for errors.
	TokenFlag string
	Headers   []Header

	mu   sync.Mutex
	kept *Secret // the token of a file that is not a regular file
}

// Empty reports whether there is nothing to attach.
func (c *Credentials) Empty() bool {
	return c == nil || c.BearerTokenFile == "" && len(c.Headers) == 0
}

// Token reads the bearer token file: capped, trimmed, never quoted in an
// error. Its errors are *CredentialFileError.
func (c *Credentials) Token() (Secret, error) {
	fail := func(err error) (Secret, error) {
		return Secret{}, &CredentialFileError{Flag: c.TokenFlag, File: c.BearerTokenFile, Err: err}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kept != nil {
		return *c.kept, nil
	}
	f, err := os.Open(c.BearerTokenFile)
	if err != nil {
		return fail(unwrapPathError(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fail(unwrapPathError(err))
	}
	data, err := ReadAll(f, MaxTokenFileBytes, c.BearerTokenFile)
	if IsTooLarge(err) {
		return fail(fmt.Errorf("more than %s: not a token", FormatBytes(MaxTokenFileBytes)))
	}
	if err != nil {
		return fail(unwrapPathError(err))
	}
	token := string(bytes.TrimSpace(data))
	switch {
	case token == "":
		return fail(errors.New("it is empty: write the token into it (e.g. gcloud auth print-access-token > FILE)"))
	case !httpguts.ValidHeaderFieldValue(token) || strings.ContainsAny(token, "\r\n"):
		return fail(errors.New("not one token (it holds line breaks or control characters)"))
	}
	secret := NewSecret(token)
	if !st.Mode().IsRegular() {
		c.kept = &secret
	}
	return secret, nil
}

// CredentialFileError is a credential file that could not be used; it
// never quotes the file's content.
type CredentialFileError struct {
	Flag, File string
	Err        error
}

func (e *CredentialFileError) Error() string { return e.Flag + " " + e.File + ": " + e.Err.Error() }

func (e *CredentialFileError) Unwrap() error { return e.Err }

// unwrapPathError drops the path os.PathError repeats.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Wrap returns rt with the credentials attached to each request for Origin;
// a request for another origin is refused (*OriginError) before anything
// is attached or sent.
func (c *Credentials) Wrap(rt http.RoundTripper) http.RoundTripper {
	if c.Empty() {
		return rt
	}
	return &credentialTransport{c: c, rt: rt}
}

type credentialTransport struct {
	c  *Credentials
	rt http.RoundTripper
}

func (t *credentialTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.c.Origin.Is(req.URL) {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, &OriginError{Origin: t.c.Origin, URL: Redact(req.URL, false)}
	}
	var token Secret
	if t.c.BearerTokenFile != "" {
		var err error
		if token, err = t.c.Token(); err != nil {
			if req.Body != nil {
				_ = req.Body.Close()
			}
			return nil, err
		}
	}
	// A RoundTripper must not change the caller's request.
	req = req.Clone(req.Context())
	for _, h := range t.c.Headers {
		req.Header.Del(h.Name)
	}
	for _, h := range t.c.Headers { // a name given twice is sent twice
		req.Header.Add(h.Name, h.Value.Value())
	}
	if t.c.BearerTokenFile != "" {
		req.Header.Set("Authorization", "Bearer "+token.Value())
	}
	return t.rt.RoundTrip(req)
}

// WrappedRoundTripper lets client-go see through the wrapper.
func (t *credentialTransport) WrappedRoundTripper() http.RoundTripper { return t.rt }
