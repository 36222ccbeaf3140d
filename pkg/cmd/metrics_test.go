package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestMetricsFileNumbers runs status on metrics files with numbers that
// cannot be right: each is refused, or kept with a warning on stderr,
// naming the series and the file.
func TestMetricsFileNumbers(t *testing.T) {
	const head = "# TYPE scheduler_pending_pods gauge\n"
	tests := []struct {
		name, body, wantErr, wantWarning string
	}{
		{name: "1e20", body: head + `scheduler_pending_pods{queue="active"} 1e20` + "\n", wantErr: `bad.prom: scheduler_pending_pods{queue="active"} has value 1e+20, beyond any count`},
		{name: "NaN", body: head + `scheduler_pending_pods{queue="active"} NaN` + "\n", wantErr: `bad.prom: scheduler_pending_pods{queue="active"} has value NaN`},
		{name: "duplicate", body: head + `scheduler_pending_pods{queue="active"} 1` + "\n" + `scheduler_pending_pods{queue="active"} 1` + "\n", wantErr: `bad.prom: scheduler_pending_pods{queue="active"} is given twice`},
		{name: "negative", body: head + `scheduler_pending_pods{queue="backoff"} -3` + "\n", wantWarning: `warning: ` + "DIR" + `bad.prom: scheduler_pending_pods{queue="backoff"} has value -3`},
		{name: "unknown queue", body: head + `scheduler_pending_pods{queue="activeQ"} 3` + "\n", wantWarning: `warning: ` + "DIR" + `bad.prom: scheduler_pending_pods{queue="activeQ"}: queue "activeQ" is not one the scheduler reports`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir() + string(filepath.Separator)
			file := dir + "bad.prom"
			if err := os.WriteFile(file, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"status", "--metrics-file", file}, {"status", "--metrics-file", file, "-o", "json"}} {
				streams, _, _, errOut := genericiooptions.NewTestIOStreams()
				root := NewCmdSchedq(streams)
				root.SetArgs(args)
				err := root.Execute()
				if tc.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
						t.Errorf("%v: err = %v, want %q", args, err, tc.wantErr)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if want := strings.ReplaceAll(tc.wantWarning, "DIR", dir); !strings.Contains(errOut.String(), want) {
					t.Errorf("%v: stderr %q lacks %q", args, errOut, want)
				}
			}
		})
	}
}
