package cmd

import (
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
)

// TestStatus_metricsURLTLSFlags reads an https metrics URL with no
// kubeconfig at all: kubectl's --insecure-skip-tls-verify and
// --certificate-authority decide how its certificate is checked, and an
// error never advises a flag that was given.
func TestStatus_metricsURLTLSFlags(t *testing.T) {
	exposition, err := os.ReadFile(filepath.Join(recordedDir, "v1.36-settled.prom"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write(exposition)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	srv.StartTLS()
	defer srv.Close()
	dir := t.TempDir()
	writeCA := func(name string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pemCertificate(der), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	ca, otherCA := writeCA("ca.crt", srv.Certificate().Raw), writeCA("other.crt", selfSignedCA(t))
	t.Setenv("KUBECONFIG", filepath.Join(dir, "no-kubeconfig"))
	t.Setenv("HOME", dir)

	for _, tc := range []struct {
		name    string
		flags   []string
		wantErr []string
		notErr  string
	}{
		{"no flag: the system's roots refuse it", nil, []string{"x509", "--certificate-authority FILE", "--insecure-skip-tls-verify"}, ""},
		{"--insecure-skip-tls-verify", []string{"--insecure-skip-tls-verify"}, nil, ""},
		{"--certificate-authority", []string{"--certificate-authority", ca}, nil, ""},
		{"--certificate-authority of another CA", []string{"--certificate-authority", otherCA}, []string{"not signed by the CA in --certificate-authority " + otherCA}, "pass --certificate-authority FILE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			root := NewCmdSchedq(streams)
			root.SetArgs(append([]string{"status", "--metrics-url", srv.URL + "/metrics", "--interval", "500ms", "-o", "jsonpath={.pending.total}"}, tc.flags...))
			err := root.Execute()
			if tc.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if out.String() != "14" {
					t.Errorf("output %q, want 14 pending", out)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
			if tc.notErr != "" && strings.Contains(err.Error(), tc.notErr) {
				t.Errorf("error advises %q, which was given:\n%v", tc.notErr, err)
			}
		})
	}
}

func pemCertificate(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// selfSignedCA is a CA certificate that signed nothing the tests serve.
func selfSignedCA(t *testing.T) []byte {
	der, _ := testsupport.SelfSigned(t, "another CA", true)
	return der
}
