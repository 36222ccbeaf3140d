package bound_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kubectl-schedq/kubectl-schedq/internal/testsupport"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
)

const token = "tok-9f8e7d6c5b4a"

// A Secret prints as <redacted> whatever the verb or encoder, also as a
// field nobody may interface (unexported, embedded).
func TestSecret_neverPrinted(t *testing.T) {
	type inner struct {
		headers []bound.Header
		secret  bound.Secret
	}
	type outer struct {
		inner
		Header bound.Header
	}
	h := bound.Header{Name: "Authorization", Value: bound.NewSecret(token)}
	v := outer{inner: inner{headers: []bound.Header{h}, secret: bound.NewSecret(token)}, Header: h}
	var printed []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X"} {
		printed = append(printed, fmt.Sprintf(verb, v), fmt.Sprintf(verb, &v), fmt.Sprintf(verb, h.Value))
	}
	js, _ := json.Marshal(struct{ H bound.Header }{h})
	printed = append(printed, string(js), fmt.Sprint(h), fmt.Sprintln([]bound.Header{h}))
	for _, p := range printed {
		if strings.Contains(p, token) || strings.Contains(p, fmt.Sprintf("%x", token)) || strings.Contains(p, fmt.Sprintf("%X", token)) {
			t.Errorf("printed the secret: %s", p)
		}
	}
	if h.Value.Value() != token {
		t.Errorf("Value() = %q", h.Value.Value())
	}
}

func TestParseHeader(t *testing.T) {
	for _, tc := range []struct {
		in, wantName, wantValue, wantErr string
	}{
		{"X-Scope-OrgID: tenant-1", "X-Scope-OrgID", "tenant-1", ""},
		{"authorization:Bearer " + token, "authorization", "Bearer " + token, ""},
		{"X-Empty:", "X-Empty", "", ""},
		{"Bearer" + token, "", "", "want 'Name: value'"},
		{": " + token, "", "", "want 'Name: value'"},
		{"Bad Name: " + token, "", "", `"Bad Name" is not a valid header name`},
		{"X-A: a\nb" + token, "", "", "line break"},
		{"Host: evil.example", "", "", "set by the HTTP client"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			h, err := bound.ParseHeader(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), token) {
					t.Errorf("the error quotes the value: %v", err)
				}
				return
			}
			if err != nil || h.Name != tc.wantName || h.Value.Value() != tc.wantValue {
				t.Fatalf("ParseHeader = %s %q, %v", h.Name, h.Value.Value(), err)
			}
		})
	}
}

func TestCredentials_Token(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, file, want, wantErr string
	}{
		{"trimmed", write("ok", token+"\n"), token, ""},
		{"missing", filepath.Join(dir, "missing"), "", "no such file or directory"},
		{"empty", write("empty", " \n"), "", "is empty"},
		{"two lines", write("two", token+"\n"+token+"\n"), "", "not one token"},
		{"too large", write("big", strings.Repeat(token, 1<<13)), "", "more than 64 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &bound.Credentials{BearerTokenFile: tc.file, TokenFlag: "--prometheus-bearer-token-file"}
			got, err := c.Token()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "--prometheus-bearer-token-file") {
					t.Fatalf("err = %v, want %q and the flag", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), token) {
					t.Errorf("the error quotes the token: %v", err)
				}
				return
			}
			if err != nil || got.Value() != tc.want {
				t.Fatalf("Token() = %q, %v", got.Value(), err)
			}
		})
	}
}

// Credentials attach the token (read anew at each request) and the headers
// to requests for their origin, and refuse any other.
func TestCredentials_Wrap(t *testing.T) {
	srv := testsupport.NewSink(t, false)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("first"), 0o600); err != nil {
		t.Fatal(err)
	}
	origin, _ := bound.ParseOrigin(srv.URL)
	tenant, _ := bound.ParseHeader("X-Scope-OrgID: tenant-1")
	c := &bound.Credentials{Origin: origin, BearerTokenFile: tokenFile, TokenFlag: "--t", Headers: []bound.Header{tenant}}
	client := bound.Client(origin, c.Wrap(http.DefaultTransport))
	get := func(url string) error {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(srv.URL + "/a"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokenFile, []byte("second"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := get(srv.URL + "/b"); err != nil {
		t.Fatal(err)
	}
	want := []string{`GET /a Authorization="Bearer first" X-Scope-OrgID="tenant-1"`, `GET /b Authorization="Bearer second" X-Scope-OrgID="tenant-1"`}
	if got := srv.Requests(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("requests %q, want %q", got, want)
	}
	other := testsupport.NewSink(t, false)
	// Straight through the credentials' transport, without the client's guard.
	req, _ := http.NewRequest(http.MethodGet, other.URL+"/c", nil)
	_, err := c.Wrap(http.DefaultTransport).RoundTrip(req)
	var oe *bound.OriginError
	if !errors.As(err, &oe) || len(other.Requests()) > 0 {
		t.Errorf("a request elsewhere: %v, and the server got %q", err, other.Requests())
	}
}

// A token file that can be read once (the shell's <(command), a pipe) is
// read once and its token kept; a regular file is read at each request.
func TestCredentials_Token_pipe(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("reads the pipe as /dev/fd/N")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		_, _ = w.Write([]byte(token + "\n"))
		w.Close()
	}()
	defer r.Close()
	c := &bound.Credentials{BearerTokenFile: fmt.Sprintf("/dev/fd/%d", r.Fd()), TokenFlag: "--t"}
	for i := range 3 {
		got, err := c.Token()
		if err != nil || got.Value() != token {
			t.Fatalf("read %d: Token() = %q, %v", i+1, got.Value(), err)
		}
	}
}

// FuzzParseHeader: whatever the argument, ParseHeader does not panic, its
// error never quotes what follows the first colon (a credential), and a
// header it takes prints without its value.
func FuzzParseHeader(f *testing.F) {
	for _, seed := range []string{"X-Scope-OrgID: tenant-1", "Authorization: Bearer abc", "no colon", ": value", "Bad Name: v", "X: a\r\nb", "Host: x", "X-Ü: v", "X:\x00"} {
		f.Add(seed)
	}
	// What an error may say whatever the value: its fixed words.
	var fixed strings.Builder
	for _, arg := range []string{"no colon", "Bad Name: z", "X: a\nb", "Host: z"} {
		_, err := bound.ParseHeader(arg)
		fixed.WriteString(err.Error())
	}
	f.Fuzz(func(t *testing.T, arg string) {
		h, err := bound.ParseHeader(arg)
		name, value, _ := strings.Cut(arg, ":")
		value = strings.TrimSpace(value)
		if err != nil {
			if len(value) >= 4 && strings.Contains(err.Error(), value) && !strings.Contains(name, value) && !strings.Contains(fixed.String(), value) {
				t.Fatalf("the error %q quotes the value %q", err, value)
			}
			return
		}
		if h.Value.Value() != value {
			t.Fatalf("ParseHeader(%q) value %q, want %q", arg, h.Value.Value(), value)
		}
		if s := fmt.Sprint(h); len(value) >= 4 && strings.Contains(s, value) && !strings.Contains(h.Name, value) {
			t.Fatalf("the header prints its value: %s", s)
		}
	})
}
