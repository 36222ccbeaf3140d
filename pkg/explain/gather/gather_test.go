package gather

import (
	"strings"
	"testing"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

// TestModelVersion: the version given (--scheduler-version) wins, then the
// scheduler's own version, then the current release with a note.
func TestModelVersion(t *testing.T) {
	withVersion := func(v string) *metricscrape.Snapshot {
		return &metricscrape.Snapshot{Build: metricscrape.BuildInfo{GitVersion: v}}
	}
	for _, tc := range []struct {
		name       string
		flag       string
		snap       *metricscrape.Snapshot
		want       queue.Version
		wantSource string
		wantNote   string
	}{
		{"flag", "v1.34", withVersion("v1.37.2"), queue.V1_34, "--scheduler-version", ""},
		{"build info", "", withVersion("v1.35.4"), queue.V1_35, "the scheduler's kubernetes_build_info", ""},
		{"vendor build", "", withVersion("v1.36.3-gke.1200"), queue.V1_36, "the scheduler's kubernetes_build_info", ""},
		{"no version", "", withVersion(""), queue.V1_37, "default", "reports no version"},
		{"no model", "", withVersion("v1.33.1"), queue.V1_37, "default", "v1.33 has no queue model"},
		{"no metrics", "", nil, queue.V1_37, "default", "no scheduler metrics"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var given queue.Version
			if tc.flag != "" {
				var err error
				if given, err = queue.ParseVersion(tc.flag); err != nil {
					t.Fatal(err)
				}
			}
			v, source, note := modelVersion(given, tc.snap)
			if v != tc.want || source != tc.wantSource || (tc.wantNote == "") != (note == "") || !strings.Contains(note, tc.wantNote) {
				t.Errorf("modelVersion = %s, %q, %q; want %s, %q, note containing %q", v, source, note, tc.want, tc.wantSource, tc.wantNote)
			}
		})
	}
}
