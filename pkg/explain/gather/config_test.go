package gather

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
)

// configzV1 and configzInternal are /configz answers in the two shapes
// (v1.36+ and v1.34/v1.35), trimmed to what matters here.
const (
	configzV1       = `{"componentconfig":{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration","podInitialBackoffSeconds":2,"podMaxBackoffSeconds":20,"profiles":[{"schedulerName":"default-scheduler"}]}}`
	configzInternal = `{"componentconfig":{"PodInitialBackoffSeconds":3,"PodMaxBackoffSeconds":30,"Profiles":[{"SchedulerName":"default-scheduler"}]}}`
	flagzText       = "kube-scheduler flags\nWarning: This endpoint is not meant to be machine parseable, has no formatting compatibility guarantees and is for debugging purposes only.\n\npod-max-in-unschedulable-pods-duration=2m0s\nsecure-port=10259\n"
)

func extraOK(body, contentType string) *metricscrape.Extra {
	return &metricscrape.Extra{Body: []byte(body), ContentType: contentType, Status: http.StatusOK}
}

func extraErr(status int) *metricscrape.Extra {
	return &metricscrape.Extra{Status: status, Err: errors.New(http.StatusText(status))}
}

func TestSchedulerConfig(t *testing.T) {
	flags := explain.DefaultConfig()
	scraped := func(extra map[string]*metricscrape.Extra) *metricscrape.Snapshot {
		return &metricscrape.Snapshot{Extra: extra, Origin: metricscrape.Origin{Kind: metricscrape.OriginPortForward}}
	}
	for _, tc := range []struct {
		name       string
		given      ConfigGiven
		metricsOff string
		snap       *metricscrape.Snapshot
		want       explain.Config
		wantSource string
		wantNotes  []string
	}{
		{
			name: "v1.36+ configz and flagz",
			snap: scraped(map[string]*metricscrape.Extra{ConfigzPath: extraOK(configzV1, "application/json"), FlagzPath: extraOK(flagzText, "text/plain")}),
			want: explain.Config{PodInitialBackoff: 2 * time.Second, PodMaxBackoff: 20 * time.Second, PodMaxInUnschedulablePods: 2 * time.Minute}, wantSource: "/configz (", wantNotes: nil,
		},
		{
			name: "v1.34 internal configz, no flagz",
			snap: scraped(map[string]*metricscrape.Extra{ConfigzPath: extraOK(configzInternal, "application/json"), FlagzPath: extraErr(http.StatusNotFound)}),
			want: explain.Config{PodInitialBackoff: 3 * time.Second, PodMaxBackoff: 30 * time.Second, PodMaxInUnschedulablePods: 5 * time.Minute}, wantSource: "leftover default",
			wantNotes: []string{"serves no /flagz (before v1.36 only with --feature-gates=ComponentFlagz=true)"},
		},
		{
			name: "forbidden",
			snap: scraped(map[string]*metricscrape.Extra{ConfigzPath: extraErr(http.StatusForbidden), FlagzPath: extraErr(http.StatusForbidden)}),
			want: flags, wantSource: "backoff defaults, leftover default",
			wantNotes: []string{`cannot read the scheduler's /configz (403; grant nonResourceURLs ["/configz", "/flagz"] verbs ["get"]): backoff from --pod-initial-backoff=1s and --pod-max-backoff=10s`, "cannot read the scheduler's /flagz (403"},
		},
		{
			name:  "flags given win",
			given: ConfigGiven{PodInitialBackoff: true, PodMaxBackoff: true, PodMaxInUnschedulablePods: true},
			snap:  scraped(map[string]*metricscrape.Extra{ConfigzPath: extraOK(configzV1, "application/json")}),
			want:  flags, wantSource: "flags",
		},
		{
			name:  "one flag given",
			given: ConfigGiven{PodMaxBackoff: true},
			snap:  scraped(map[string]*metricscrape.Extra{ConfigzPath: extraOK(configzV1, "application/json"), FlagzPath: extraOK(flagzText, "text/plain")}),
			want:  explain.Config{PodInitialBackoff: 2 * time.Second, PodMaxBackoff: 10 * time.Second, PodMaxInUnschedulablePods: 2 * time.Minute}, wantSource: "flags, /configz",
		},
		{
			name: "malformed configz",
			snap: scraped(map[string]*metricscrape.Extra{ConfigzPath: extraOK(`{"componentconfig":{"podInitialBackoffSeconds":"x"}}`, "application/json"), FlagzPath: extraOK(flagzText, "text/plain")}),
			want: explain.Config{PodInitialBackoff: time.Second, PodMaxBackoff: 10 * time.Second, PodMaxInUnschedulablePods: 2 * time.Minute}, wantSource: "backoff defaults, /flagz",
			wantNotes: []string{"the scheduler's /configz: "},
		},
		{
			name: "file source", snap: &metricscrape.Snapshot{Origin: metricscrape.Origin{Kind: metricscrape.OriginFile}},
			want: flags, wantSource: "not read: a file source reaches no scheduler endpoint",
		},
		{
			name: "a path that serves the metrics only (EKS)",
			snap: &metricscrape.Snapshot{NoConfig: "EKS's metrics API serves the scheduler's metrics only, not its /configz or /flagz", Origin: metricscrape.Origin{Kind: metricscrape.OriginAPIServer}},
			want: flags, wantSource: "flags and defaults (EKS's metrics API serves",
			wantNotes: []string{"not its /configz or /flagz: explain uses --pod-initial-backoff=1s, --pod-max-backoff=10s and --pod-max-in-unschedulable-pods=5m0s"},
		},
		{
			name: "no metrics", metricsOff: "--no-metrics",
			want: flags, wantSource: "not read: --no-metrics",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, source, notes := schedulerConfig(Request{Config: flags, ConfigGiven: tc.given, MetricsOff: tc.metricsOff}, tc.snap)
			if cfg != tc.want {
				t.Errorf("config = %+v, want %+v", cfg, tc.want)
			}
			if !strings.Contains(source, tc.wantSource) {
				t.Errorf("source = %q, want it to contain %q", source, tc.wantSource)
			}
			if len(notes) != len(tc.wantNotes) {
				t.Fatalf("notes = %q, want %d", notes, len(tc.wantNotes))
			}
			for i, want := range tc.wantNotes {
				if !strings.Contains(notes[i], want) {
					t.Errorf("note %q does not say %q", notes[i], want)
				}
			}
		})
	}
}
