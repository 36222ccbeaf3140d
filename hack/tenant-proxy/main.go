// Command tenant-proxy stands in front of a Prometheus server the way a
// managed or multi-tenant one does (Google Cloud Managed Service for
// Prometheus, Azure Monitor, Mimir): over HTTPS, it refuses a request
// without the bearer token in --token-file (401), without an X-Scope-OrgID
// header (401 "no org id", as Mimir does) or for another tenant than
// --tenant (403) — testsupport.TenantGate, which the plugin's unit tests
// use too — and passes the others to --upstream. make test-prometheus runs
// `kubectl schedq status` and `explain` through it.
//
// It prints "listening https://127.0.0.1:PORT" on stdout when it serves,
// writes its self-signed certificate (PEM) to --ca-out for
// --prometheus-certificate-authority, and logs each refusal on stderr,
// without the credentials.
package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
)

func main() {
	upstream := flag.String("upstream", "", "the Prometheus server to pass accepted requests to")
	tokenFile := flag.String("token-file", "", "the bearer token requests must carry")
	tenant := flag.String("tenant", "", "the X-Scope-OrgID requests must carry")
	caOut := flag.String("ca-out", "", "where to write the proxy's certificate (PEM)")
	listen := flag.String("listen", "127.0.0.1:0", "the address to serve on")
	flag.Parse()
	if *upstream == "" || *tokenFile == "" || *tenant == "" || *caOut == "" {
		log.Fatal("tenant-proxy: --upstream, --token-file, --tenant and --ca-out are required")
	}
	if err := run(*upstream, *tokenFile, *tenant, *caOut, *listen); err != nil {
		log.Fatalf("tenant-proxy: %v", err)
	}
}

func run(upstream, tokenFile, tenant, caOut, listen string) error {
	target, err := url.Parse(upstream)
	if err != nil {
		return err
	}
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		return err
	}
	cert, err := selfSigned(caOut)
	if err != nil {
		return err
	}
	gate := testsupport.TenantGate(string(bytes.TrimSpace(token)), tenant, log.Printf)
	proxy := httputil.NewSingleHostReverseProxy(target)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gate(w, r) {
			r.Header.Del("Authorization")
			proxy.ServeHTTP(w, r)
		}
	})
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	fmt.Printf("listening https://%s\n", ln.Addr())
	return srv.ServeTLS(ln, "", "")
}

// selfSigned makes a certificate for 127.0.0.1 and writes it to caOut.
func selfSigned(caOut string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "tenant-proxy"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	if err := os.WriteFile(caOut, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
