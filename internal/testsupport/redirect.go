package testsupport

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Sink is a server that records every request that reaches it, with what
// came with it that could be a credential: the Authorization and
// X-Scope-OrgID headers, and a client certificate (it asks for one).
type Sink struct {
	*httptest.Server
	mu  sync.Mutex
	got []string
}

// NewSink starts a sink over TLS or plain HTTP; it answers 404.
func NewSink(t testing.TB, overTLS bool) *Sink {
	t.Helper()
	s := &Sink{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		line := fmt.Sprintf("%s %s Authorization=%q X-Scope-OrgID=%q", r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("X-Scope-OrgID"))
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			line += " client-certificate=" + r.TLS.PeerCertificates[0].Subject.CommonName
		}
		s.mu.Lock()
		s.got = append(s.got, line)
		s.mu.Unlock()
		http.NotFound(w, r)
	}))
	if overTLS {
		s.Server.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

// Requests are the requests the sink got, one line each.
func (s *Sink) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

// NewServer starts h over TLS or plain HTTP, closed when the test ends.
func NewServer(t testing.TB, h http.Handler, overTLS bool) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	if overTLS {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(srv.Close)
	return srv
}

// Redirect is a server that answers every request with a 302 to the same
// path and query on another origin, where Sink listens.
type Redirect struct {
	// Name says how the target differs from the server's own origin.
	Name   string
	Server *httptest.Server
	Sink   *Sink
}

// Redirects returns one redirecting server over TLS (overTLS) or plain
// HTTP per way of leaving its origin: plain HTTP on another port (for a
// TLS server, the case of a token sent in clear), HTTPS on another port,
// and another host name (localhost for 127.0.0.1) on another port.
func Redirects(t testing.TB, overTLS bool) []Redirect {
	t.Helper()
	var out []Redirect
	for _, tc := range []struct {
		name       string
		sinkTLS    bool
		targetHost string
	}{
		{"to plain HTTP on another port", false, "127.0.0.1"},
		{"to HTTPS on another port", true, "127.0.0.1"},
		{"to another host name", true, "localhost"},
	} {
		sink := NewSink(t, tc.sinkTLS)
		target := strings.Replace(sink.URL, "127.0.0.1", tc.targetHost, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target+r.URL.RequestURI(), http.StatusFound)
		})
		out = append(out, Redirect{Name: tc.name, Server: NewServer(t, h, overTLS), Sink: sink})
	}
	return out
}

// SelfSigned returns a self-signed certificate for common name cn (DER)
// and its key (PEM): a client certificate, or with isCA a CA that signed
// nothing a test serves.
func SelfSigned(t testing.TB, cn string, isCA bool) (der, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	if isCA {
		tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage, tmpl.ExtKeyUsage = true, true, x509.KeyUsageCertSign, nil
	}
	if der, err = x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key); err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return der, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// ClientCertificate returns a self-signed client certificate and its key,
// PEM-encoded, for common name cn.
func ClientCertificate(t testing.TB, cn string) (certPEM, keyPEM []byte) {
	t.Helper()
	der, keyPEM := SelfSigned(t, cn, false)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM
}
