package cmd

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
)

// TestREADME_troubleshooting holds the README's troubleshooting rows about
// the network to the messages the code prints: each row's quoted message,
// with "…" and the placeholders URL and TARGET standing for anything,
// matches the error the code gives for that case.
func TestREADME_troubleshooting(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(data), "## Troubleshooting")
	table, _, _ = strings.Cut(table, "\n## ")
	o := NewStatusOptions(nil, genericiooptions.NewTestIOStreamsDiscard())
	o.timeout = 30 * time.Second
	for quoted, err := range map[string]error{
		"…: no answer within 30s (wait longer with --request-timeout …)":                                     bound.Call("listing pods", 30*time.Second, context.DeadlineExceeded),
		"finding the scheduler: listing kube-scheduler pods in kube-system (API server): no answer within …": o.withRemedy(&metricscrape.APIStepError{Step: "listing kube-scheduler pods in kube-system", Err: context.DeadlineExceeded}),
		"…: the TLS handshake did not complete within 10s":                                                   &bound.HandshakeTimeoutError{Call: "reading https://s/metrics"},
		"… answered 302 Found, a redirect to URL: not followed":                                              &bound.RedirectError{From: "https://s/metrics", To: "http://localhost:8080/x", Status: "302 Found"},
		"Prometheus at URL answered 401 Unauthorized":                                                        &metricscrape.PrometheusAuthError{Source: "Prometheus at https://p", StatusCode: 401},
		"Prometheus at URL answered 403 Forbidden":                                                           &metricscrape.PrometheusAuthError{Source: "Prometheus at https://p", StatusCode: 403},
		"…: more than 16 MiB, the most that is read from it":                                                 &bound.TooLargeError{What: "the answer of https://p/api/v1/query", Limit: metricscrape.MaxPrometheusAnswerBytes},
		"--interval=…: want 500ms to 1h":                                                                     validateInterval(2 * time.Hour),
	} {
		if !strings.Contains(table, "| `"+quoted+"` |") {
			t.Errorf("the README's troubleshooting has no row for `%s`", quoted)
			continue
		}
		// "…" stands for anything, the blank beside it included.
		pattern := regexp.QuoteMeta(strings.NewReplacer(" …", "…", "… ", "…").Replace(quoted))
		for _, wild := range []string{"…", "URL", "TARGET"} {
			pattern = strings.ReplaceAll(pattern, regexp.QuoteMeta(wild), ".*")
		}
		if !regexp.MustCompile(pattern).MatchString(err.Error()) {
			t.Errorf("the README quotes `%s`, the code says:\n%s", quoted, err)
		}
	}
}
