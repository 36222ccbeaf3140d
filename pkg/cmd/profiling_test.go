package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestProfileFlags: --profile writes the profile it names to
// --profile-output once the command ends, on success and on error, and a
// name kubectl does not know is refused before the command runs.
func TestProfileFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
		file    string
	}{
		{"cpu on success", []string{"version", "--profile", "cpu", "--profile-output", filepath.Join(dir, "cpu.pprof")}, "", "cpu.pprof"},
		{"heap on success", []string{"version", "--profile=heap", "--profile-output=" + filepath.Join(dir, "heap.pprof")}, "", "heap.pprof"},
		{"cpu on error", []string{"simulate", "--trace", filepath.Join(dir, "no-such-trace.yaml"), "--profile", "cpu", "--profile-output", filepath.Join(dir, "failed.pprof")}, "no-such-trace.yaml", "failed.pprof"},
		{"unknown profile", []string{"version", "--profile", "gpu"}, `--profile "gpu": want one of none, cpu`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			root := NewCmdSchedq(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
			root.SetArgs(tc.args)
			err := root.Execute()
			if tc.wantErr == "" && err != nil {
				t.Fatalf("%v: %v", tc.args, err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("%v: error %v, want one saying %q", tc.args, err, tc.wantErr)
			}
			if tc.file == "" {
				return
			}
			fi, err := os.Stat(filepath.Join(dir, tc.file))
			if err != nil || fi.Size() == 0 {
				t.Fatalf("%v: no profile written (%v)", tc.args, err)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("the directory holds %d entries, want the 3 profiles and no temporary file", len(entries))
	}
}
