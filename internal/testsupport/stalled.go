package testsupport

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// StalledTLSServer completes the TLS handshake and then never answers: a
// server that hangs, for tests of every call's bound.
func StalledTLSServer(t testing.TB) *httptest.Server {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(func() {
		close(done)
		srv.Close()
	})
	return srv
}

// SilentPort accepts connections on 127.0.0.1 and never writes a byte; it
// returns an https:// URL to it.
func SilentPort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return "https://" + l.Addr().String()
}

// StalledURL is StalledTLSServer's URL.
func StalledURL(t testing.TB) string { return StalledTLSServer(t).URL }

// Unanswering lists the servers a bounded call must give up on, by name:
// one that stalls after the TLS handshake, and a port that never writes.
var Unanswering = []struct {
	Name   string
	Server func(testing.TB) string
}{
	{"a TLS server that stalls after the handshake", StalledURL},
	{"a port that accepts and never answers", SilentPort},
}
