package metricscrape

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// TransportErrorKind says why a metrics endpoint could not be read.
type TransportErrorKind string

const (
	// Unreachable: the connection could not be made (refused, no route, DNS).
	Unreachable TransportErrorKind = "unreachable"
	// TLSFailure: the TLS handshake failed (untrusted certificate, wrong
	// name).
	TLSFailure TransportErrorKind = "tls"
	// PlainHTTP: an https:// URL whose server speaks plain HTTP.
	PlainHTTP TransportErrorKind = "plain-http"
	// Timeout: no answer before the deadline (--request-timeout).
	Timeout TransportErrorKind = "timeout"
)

// TransportError is a failure to get an HTTP answer at all.
type TransportError struct {
	Kind TransportErrorKind
	// Target is what was dialled: a URL, or a pod behind a port-forward.
	Target string
	Err    error
}

func (e *TransportError) Error() string {
	switch e.Kind {
	case TLSFailure:
		return fmt.Sprintf("TLS handshake with %s failed: %v", e.Target, rootCause(e.Err))
	case PlainHTTP:
		return fmt.Sprintf("%s answers in plain HTTP, not HTTPS: use an http:// URL", e.Target)
	case Timeout:
		return fmt.Sprintf("%s did not answer in time", e.Target)
	default:
		return fmt.Sprintf("cannot reach %s: %v", e.Target, rootCause(e.Err))
	}
}

func (e *TransportError) Unwrap() error { return e.Err }

// classifyTransportError turns an http.Client error into a TransportError.
func classifyTransportError(target string, err error) error {
	if err == nil {
		return nil
	}
	var te *TransportError
	if errors.As(err, &te) {
		return err
	}
	kind := Unreachable
	var (
		netErr     net.Error
		unknownCA  x509.UnknownAuthorityError
		hostErr    x509.HostnameError
		invalidErr x509.CertificateInvalidError
		verifyErr  *tls.CertificateVerificationError
		recordErr  tls.RecordHeaderError
		alertErr   tls.AlertError
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		kind = Timeout
	case strings.Contains(err.Error(), "HTTP response to HTTPS client"), errors.As(err, &recordErr):
		// Go's transport reports a plain-HTTP answer to a TLS hello as
		// "server gave HTTP response to HTTPS client", other non-TLS
		// answers as a RecordHeaderError.
		kind = PlainHTTP
	case errors.As(err, &unknownCA), errors.As(err, &hostErr), errors.As(err, &invalidErr),
		errors.As(err, &verifyErr), errors.As(err, &alertErr):
		kind = TLSFailure
	case errors.As(err, &netErr) && netErr.Timeout():
		kind = Timeout
	case strings.Contains(err.Error(), "tls: "):
		kind = TLSFailure
	}
	return &TransportError{Kind: kind, Target: target, Err: err}
}

// rootCause strips url.Error and friends down to the message that explains.
func rootCause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		var opErr *net.OpError
		if errors.As(err, &opErr) && opErr.Err != nil {
			return opErr
		}
		err = u
	}
}

// HTTPStatusError is an answer other than 200 that has no more specific error.
type HTTPStatusError struct {
	Target     string
	StatusCode int
	Status     string
	// Body is the start of the response body.
	Body string
}

func (e *HTTPStatusError) Error() string {
	msg := fmt.Sprintf("%s answered %s", e.Target, e.Status)
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// UnauthorizedError is a 401: the scheduler did not accept the credentials.
type UnauthorizedError struct {
	Target string
}

func (e *UnauthorizedError) Error() string {
	return fmt.Sprintf("%s answered 401 Unauthorized: it does not accept the kubeconfig's credentials "+
		"(kube-scheduler trusts client certificates signed by the cluster CA and tokens the API server can review)", e.Target)
}

// ForbiddenError is a 403 on /metrics: the identity may not read them.
// Remedy prints what grants it.
type ForbiddenError struct {
	Target string
	// Identity is who the scheduler saw, when it could be found out.
	Identity *Identity
	// Impersonated is set when the answer comes from a SelfSubjectAccessReview
	// for an impersonated identity (kube-scheduler itself does not honour
	// impersonation headers).
	Impersonated bool
	// Permission is what was refused, when it is not the scheduler's own
	// get on /metrics (EKS: get ksh/metrics in API group
	// metrics.eks.amazonaws.com); rbac grants it.
	Permission string
	rbac       func(*Identity) string
}

func (e *ForbiddenError) Error() string {
	who := "your credentials"
	if e.Identity != nil && e.Identity.Username != "" {
		who = fmt.Sprintf("user %q", e.Identity.Username)
	}
	perm := "get " + MetricsPath
	if e.Permission != "" {
		perm = e.Permission
	}
	if e.Impersonated {
		return fmt.Sprintf("%s: 403 Forbidden: %s may not %s (SelfSubjectAccessReview)", e.Target, who, perm)
	}
	return fmt.Sprintf("%s: 403 Forbidden: %s may not %s", e.Target, who, perm)
}

// Remedy is the minimal ClusterRole and ClusterRoleBinding that lets the
// identity read kube-scheduler's metrics, ready for `kubectl apply -f -`.
func (e *ForbiddenError) Remedy() string {
	if e.rbac != nil {
		return e.rbac(e.Identity)
	}
	return MetricsReaderRBAC(e.Identity)
}

// statusError builds the error for a non-200 answer.
func statusError(target string, resp *http.Response, body []byte) error {
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return &UnauthorizedError{Target: target}
	case http.StatusForbidden:
		return &ForbiddenError{Target: target}
	}
	text := strings.TrimSpace(string(body))
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = text[:i]
	}
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	return &HTTPStatusError{Target: target, StatusCode: resp.StatusCode, Status: resp.Status, Body: text}
}
