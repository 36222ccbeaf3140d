package metricscrape

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/rest"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
)

// PrometheusSource reads the scheduler's series from a Prometheus server with
// instant queries, for clusters whose scheduler cannot be reached (managed
// control planes). It makes two queries per scrape: one to find the
// scheduler's scrape target, one for that target's series.
type PrometheusSource struct {
	// address is the server's URL without a password, for messages.
	address  string
	selector string
	api      promv1.API
	// tokenFile and headerNames are what the user gave, for the advice on
	// a 401 or 403 (header values are never kept here).
	tokenFile   string
	headerNames []string
}

// PrometheusAccess says how to reach a Prometheus server (the
// --prometheus-* flags).
type PrometheusAccess struct {
	// URL is the server's HTTP API root (--prometheus-url).
	URL string
	// Selector holds extra label matchers (`job="kube-scheduler"`) for a
	// server that scrapes several schedulers or clusters.
	Selector string
	// BearerTokenFile and Headers are the server's own credentials
	// (--prometheus-bearer-token-file, --prometheus-header), sent to URL's
	// origin only. The file is read at each request.
	BearerTokenFile string
	Headers         []bound.Header
	// CertificateAuthority verifies the server's certificate
	// (--prometheus-certificate-authority; the system's roots when empty);
	// InsecureSkipTLSVerify skips that check (--insecure-skip-tls-verify).
	CertificateAuthority  string
	InsecureSkipTLSVerify bool
}

// MaxPrometheusAnswerBytes caps one answer of the Prometheus API: the
// scheduler's series for one target are well under 1 MiB.
const MaxPrometheusAnswerBytes = 16 << 20

// NewPrometheusSource returns a source for the Prometheus HTTP API at
// a.URL. When a.URL is on the API server of cfg (a service proxy URL) and
// no token file is given, the kubeconfig's credentials and CA are used;
// otherwise only a's own credentials are sent. cfg may be nil.
func NewPrometheusSource(a PrometheusAccess, cfg *rest.Config) (*PrometheusSource, error) {
	u, err := url.Parse(a.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--prometheus-url %q: want http(s)://host[:port][/path]", redactRaw(a.URL))
	}
	if err := checkSelector(a.Selector); err != nil {
		return nil, err
	}
	origin := bound.OriginOf(u)
	creds := &bound.Credentials{Origin: origin, BearerTokenFile: a.BearerTokenFile, TokenFlag: "--prometheus-bearer-token-file", Headers: a.Headers}
	if a.BearerTokenFile != "" {
		// Read now, so that a missing file fails before any query; it is
		// read again at each query.
		if _, err := creds.Token(); err != nil {
			return nil, err
		}
	}
	tc := &rest.Config{TLSClientConfig: rest.TLSClientConfig{CAFile: a.CertificateAuthority}}
	if cfg != nil && sameHost(u, cfg.Host) && a.BearerTokenFile == "" {
		tc = CredentialConfig(cfg, false, "")
		if a.CertificateAuthority != "" {
			tc.CAFile, tc.CAData = a.CertificateAuthority, nil
		}
	}
	if a.InsecureSkipTLSVerify {
		tc.Insecure, tc.CAFile, tc.CAData = true, "", nil
	}
	// The flags' credentials go in below client-go's debugging round
	// tripper, so that -v logs never show them.
	tc.Wrap(creds.Wrap)
	rt, err := rest.TransportFor(tc)
	if err != nil {
		if a.CertificateAuthority != "" {
			return nil, fmt.Errorf("--prometheus-certificate-authority %s: %w", a.CertificateAuthority, err)
		}
		return nil, fmt.Errorf("Prometheus at %s: %w", u.Redacted(), err)
	}
	client, err := api.NewClient(api.Config{Address: a.URL, Client: bound.Client(origin, bound.CapBodies(MaxPrometheusAnswerBytes)(rt))})
	if err != nil {
		return nil, fmt.Errorf("--prometheus-url %q: %w", u.Redacted(), err)
	}
	src := &PrometheusSource{address: u.Redacted(), selector: a.Selector, api: promv1.NewAPI(client), tokenFile: a.BearerTokenFile}
	for _, h := range a.Headers {
		src.headerNames = append(src.headerNames, h.Name)
	}
	return src, nil
}

// redactRaw hides the password of a URL that may not parse.
func redactRaw(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	if i := strings.LastIndex(raw, "@"); i >= 0 {
		return "…" + raw[i:]
	}
	return raw
}

// checkSelector rejects what would break out of a `{…}` matcher list.
func checkSelector(sel string) error {
	if strings.ContainsAny(sel, "{}") {
		return fmt.Errorf("Prometheus selector %q: give label matchers only, without braces (job=\"kube-scheduler\",cluster=\"prod\")", sel)
	}
	return nil
}

func sameHost(u *url.URL, apiServer string) bool {
	a, err := url.Parse(apiServer)
	return err == nil && a.Host != "" && strings.EqualFold(a.Host, u.Host)
}

func (s *PrometheusSource) String() string { return "Prometheus at " + s.address }

// Scrape implements Source at the current time.
func (s *PrometheusSource) Scrape(ctx context.Context) (*Snapshot, error) {
	return s.ScrapeAt(ctx, time.Now())
}

// ScrapeAt implements Historian.
func (s *PrometheusSource) ScrapeAt(ctx context.Context, t time.Time) (*Snapshot, error) {
	targets, err := s.query(ctx, s.matchers(PendingPodsMetric, nil), t)
	if err != nil {
		return nil, err
	}
	if len(targets) == 0 {
		sel := ""
		if s.selector != "" {
			sel = " matching {" + s.selector + "}"
		}
		return nil, fmt.Errorf("%s has no %s series%s at %s: it does not scrape kube-scheduler, or not with these labels",
			s, PendingPodsMetric, sel, t.UTC().Format(time.RFC3339))
	}
	groups := groupTargets(targets)
	chosen := groups[0]
	if len(groups) > 1 {
		if chosen, err = s.pickLeader(ctx, groups, t); err != nil {
			return nil, err
		}
	}

	series, err := s.query(ctx, s.matchers(familyRegexp(), chosen), t)
	if err != nil {
		return nil, err
	}
	// As a metrics file without scheduler_pending_pods is refused, so is
	// an answer without it (the target may have gone between the queries,
	// or the server answers nothing): no queue is not an empty queue.
	if !hasMetric(series, PendingPodsMetric) {
		return nil, fmt.Errorf("%s answered no %s series for target %s at %s (%d other series): this is not a kube-scheduler's queue; run again, or check --prometheus-selector",
			s, PendingPodsMetric, chosen, t.UTC().Format(time.RFC3339), len(series))
	}
	snap, err := FromSamples(series)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s, err)
	}
	snap.Time = t
	snap.Origin = Origin{Kind: OriginPrometheus, Address: s.address, Target: chosen.String(), Candidates: len(groups)}
	return snap, nil
}

// HeldSpan returns the span, within the window before t, over which
// Prometheus holds the scheduler's series without a gap: from the oldest to
// the newest sample of scheduler_pending_pods (matching the selector) of
// the target whose samples start latest, so that every target a scrape may
// choose has samples over it. Right after a scheduler restart, a leader
// change or a new Prometheus the span is shorter than the window (from and
// to are equal after one scrape); a status reading its rates over it answers
// from the first scrape on. It returns an error when Prometheus holds no
// such series in the window.
func (s *PrometheusSource) HeldSpan(ctx context.Context, t time.Time, window time.Duration) (from, to time.Time, err error) {
	q := s.matchers(PendingPodsMetric, nil) + "[" + model.Duration(window).String() + "]"
	v, err := s.run(ctx, q, t)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	m, ok := v.(model.Matrix)
	if !ok {
		return time.Time{}, time.Time{}, fmt.Errorf("%s: query %s returned a %s, not a range vector", s, q, v.Type())
	}
	var first, last model.Time
	found := false
	for _, ss := range m {
		if len(ss.Values) == 0 {
			continue
		}
		if f := ss.Values[0].Timestamp; !found || f > first {
			first, last, found = f, ss.Values[len(ss.Values)-1].Timestamp, true
		}
	}
	if !found {
		sel := ""
		if s.selector != "" {
			sel = " matching {" + s.selector + "}"
		}
		return time.Time{}, time.Time{}, fmt.Errorf("%s has no %s series%s in the %s before %s: it does not scrape kube-scheduler, or not with these labels",
			s, PendingPodsMetric, sel, window, t.UTC().Format(time.RFC3339))
	}
	return first.Time(), last.Time(), nil
}

// pickLeader chooses among several scheduler targets: the one that says it
// leads, else the one with the most scheduling attempts.
func (s *PrometheusSource) pickLeader(ctx context.Context, groups []model.LabelSet, t time.Time) (model.LabelSet, error) {
	leaders, err := s.query(ctx, s.matchers(LeaderElectionMasterStatusMetric, model.LabelSet{leaseNameLabel: SchedulerLeaseName}), t)
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		for _, l := range leaders {
			if l.Value > 0 && containsLabels(l.Metric, g) {
				return g, nil
			}
		}
	}
	attempts, err := s.query(ctx, s.matchers(ScheduleAttemptsMetric, nil), t)
	if err != nil {
		return nil, err
	}
	best, bestN := groups[0], -1.0
	for _, g := range groups {
		var n float64
		for _, a := range attempts {
			if containsLabels(a.Metric, g) {
				n += float64(a.Value)
			}
		}
		if n > bestN {
			best, bestN = g, n
		}
	}
	return best, nil
}

// run runs one query at t and says what went wrong in the user's terms.
func (s *PrometheusSource) run(ctx context.Context, q string, t time.Time) (model.Value, error) {
	v, _, err := s.api.Query(ctx, q, t)
	if err == nil {
		return v, nil
	}
	var (
		apiErr *promv1.Error
		urlErr *url.Error
	)
	switch {
	case errors.Is(err, context.Canceled):
		return nil, err
	case errors.As(err, &urlErr), bound.IsTooLarge(err), errors.Is(err, context.DeadlineExceeded):
		return nil, classifyTransportError(s.String(), err)
	case !errors.As(err, &apiErr):
		// The client decoded a 2xx answer that is not a query result.
		return nil, fmt.Errorf("%s: query %s: the answer is not a Prometheus query result (%v): is --prometheus-url the server's API root?", s, q, err)
	}
	var code int
	if _, scanErr := fmt.Sscanf(apiErr.Msg, "client error: %d", &code); scanErr == nil && (code == http.StatusUnauthorized || code == http.StatusForbidden) {
		return nil, &PrometheusAuthError{Source: s.String(), StatusCode: code, Detail: answerExcerpt(apiErr.Detail), TokenFile: s.tokenFile, Headers: s.headerNames}
	}
	msg := apiErr.Msg
	if d := answerExcerpt(apiErr.Detail); d != "" && apiErr.Type != promv1.ErrBadData && apiErr.Type != promv1.ErrExec {
		msg += ": " + strconv.Quote(d)
	}
	return nil, fmt.Errorf("%s: query %s: %s", s, q, msg)
}

// query runs one instant query.
func (s *PrometheusSource) query(ctx context.Context, q string, t time.Time) (model.Vector, error) {
	v, err := s.run(ctx, q, t)
	if err != nil {
		return nil, err
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("%s: query %s returned a %s, not a vector", s, q, v.Type())
	}
	return vec, nil
}

// matchers writes `name{selector, target labels}`; name may be a
// `__name__=~"…"` matcher.
func (s *PrometheusSource) matchers(name string, target model.LabelSet) string {
	var parts []string
	metric := name
	if strings.HasPrefix(name, model.MetricNameLabel) {
		parts = append(parts, name)
		metric = ""
	}
	if s.selector != "" {
		parts = append(parts, s.selector)
	}
	keys := make([]string, 0, len(target))
	for k := range target {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%q", k, string(target[model.LabelName(k)])))
	}
	return metric + "{" + strings.Join(parts, ",") + "}"
}

// familyRegexp matches every series a Snapshot is built from.
func familyRegexp() string {
	names := make([]string, 0, len(wantedFamilies)+4)
	for name := range wantedFamilies {
		switch name {
		case PodSchedulingSLIDurationMetric, PodSchedulingAttemptsMetric:
			names = append(names, name+"_(bucket|sum|count)")
		default:
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return fmt.Sprintf(`%s=~"%s"`, model.MetricNameLabel, strings.Join(names, "|"))
}

// groupTargets turns pending-pods series into the label sets of their scrape
// targets: every label but the name and queue.
func groupTargets(vec model.Vector) []model.LabelSet {
	seen := map[model.Fingerprint]model.LabelSet{}
	for _, smp := range vec {
		ls := model.LabelSet{}
		for k, v := range smp.Metric {
			if k != model.MetricNameLabel && k != QueueLabel {
				ls[k] = v
			}
		}
		seen[ls.Fingerprint()] = ls
	}
	out := make([]model.LabelSet, 0, len(seen))
	for _, ls := range seen {
		out = append(out, ls)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func containsLabels(m model.Metric, want model.LabelSet) bool {
	for k, v := range want {
		if m[k] != v {
			return false
		}
	}
	return true
}

// PrometheusAuthError is a 401 or 403 from the Prometheus server: it wants
// credentials it did not get, or does not let them query.
type PrometheusAuthError struct {
	Source     string
	StatusCode int
	// Detail is the first line of the answer.
	Detail string
	// TokenFile and Headers are the credentials that were sent (the
	// headers by name).
	TokenFile string
	Headers   []string
}

func (e *PrometheusAuthError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s answered %d %s", e.Source, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Detail != "" {
		fmt.Fprintf(&b, " (%q)", e.Detail)
	}
	var sent string
	switch {
	case e.TokenFile != "" && len(e.Headers) > 0:
		sent = fmt.Sprintf("the token in --prometheus-bearer-token-file %s and the header(s) %s", e.TokenFile, strings.Join(e.Headers, ", "))
	case e.TokenFile != "":
		sent = "the token in --prometheus-bearer-token-file " + e.TokenFile
	case len(e.Headers) > 0:
		sent = "the header(s) " + strings.Join(e.Headers, ", ")
	}
	const tenant = "a multi-tenant server (Mimir, Cortex) also wants the tenant: --prometheus-header 'X-Scope-OrgID: TENANT'"
	switch {
	case e.StatusCode == http.StatusForbidden:
		who := "these credentials"
		if sent == "" {
			who = "a request without credentials"
		}
		fmt.Fprintf(&b, ": it does not let %s query it: the token's identity needs the right to read metrics "+
			"(Monitoring Viewer on GMP, Monitoring Data Reader on an Azure Monitor workspace), and %s", who, tenant)
	case sent == "":
		fmt.Fprintf(&b, ": it wants credentials and none were sent: give a token with --prometheus-bearer-token-file FILE; %s", tenant)
	case e.TokenFile == "":
		fmt.Fprintf(&b, ": it did not accept %s: give a token with --prometheus-bearer-token-file FILE; %s", sent, tenant)
	default:
		fmt.Fprintf(&b, ": it did not accept %s: a cloud access token lasts about an hour (fetch a new one); %s", sent, tenant)
	}
	return b.String()
}

func hasMetric(vec model.Vector, name string) bool {
	for _, smp := range vec {
		if smp != nil && string(smp.Metric[model.MetricNameLabel]) == name {
			return true
		}
	}
	return false
}
