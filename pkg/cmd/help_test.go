package cmd

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func TestHelp(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		want     []string
		wantNot  []string
		wantErr  string
		noOutput bool
	}{
		{name: "explain -h: no list of global flags", args: []string{"explain", "-h"},
			want:    []string{"--no-headers", `The global flags apply: --kubeconfig, --context, -n, --request-timeout, -v, … (see "kubectl schedq options")`},
			wantNot: []string{"--as-group", "Global Flags:", "--tls-server-name"}},
		{name: "simulate -h: only -v applies", args: []string{"simulate", "-h"},
			want: []string{`Of the global flags only -v applies (see "kubectl schedq options")`}, wantNot: []string{"--kubeconfig"}},
		{name: "root -h", args: []string{"-h"}, want: []string{"options ", `Use "kubectl schedq options" for the global flags`}, wantNot: []string{"--kubeconfig"}},
		{name: "options lists them", args: []string{"options"}, want: []string{"--kubeconfig", "--request-timeout", "--context"}},
		{name: "unknown flag", args: []string{"explain", "--bogus"}, wantErr: "unknown flag: --bogus\nSee 'kubectl schedq explain -h' for help and examples"},
		{name: "bad flag value", args: []string{"simulate", "--trace", "x", "--pop-from-backoffq", "maybe"}, wantErr: "See 'kubectl schedq simulate -h'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := runSchedq(nil, tc.args...)
			if wantError(t, err, tc.wantErr) {
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(out.String(), w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}
}

// runSchedq runs the root command with stdin and returns stdout (cobra's
// own output included: help, completion) and stderr.
func runSchedq(stdin []byte, args ...string) (stdout, stderr *bytes.Buffer, err error) {
	streams, in, out, errOut := genericiooptions.NewTestIOStreams()
	in.Write(stdin)
	root := NewCmdSchedq(streams)
	root.SetOut(out)
	root.SetArgs(args)
	return out, errOut, root.Execute()
}

// wantError checks err against want ("" wants none) and reports whether
// an error was wanted, so that the caller stops there.
func wantError(t *testing.T, err error, want string) bool {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatal(err)
		}
		return false
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
	return true
}
