package kind_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// promScrapeInterval is how often the test's Prometheus scrapes the
// scheduler: shorter than an operator's 15–30 s so that the test waits
// seconds, not minutes, for rates.
const promScrapeInterval = 2 * time.Second

// promServer is a Prometheus process the test started.
type promServer struct {
	url string
}

// startPrometheus runs the prometheus binary named by SCHEDQ_PROMETHEUS
// (make test-kind installs Debian's package) against the kind cluster's
// scheduler the way an operator's Prometheus does: https to the control-plane
// node's port 10259 (kube-scheduler bound to 0.0.0.0 by the cluster's
// kubeadm patch), the scheduler's certificate checked against the CA it
// serves in its chain, and the bearer token of a ServiceAccount holding the
// README's read-only role. The mixin's rendered rules and alerts are
// loaded. Two jobs scrape the one scheduler, with different cluster labels,
// so that a status without --prometheus-selector chooses among two targets.
func (c *cluster) startPrometheus(t *testing.T, token string) *promServer {
	t.Helper()
	bin := env(t, "SCHEDQ_PROMETHEUS", "")
	if _, err := exec.LookPath(bin); err != nil {
		t.Fatalf("SCHEDQ_PROMETHEUS=%s: %v (make test-kind installs Debian's prometheus)", bin, err)
	}
	dir := t.TempDir()
	ip, err := run(context.Background(), 30*time.Second, "docker", "inspect", "-f",
		"{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", c.name+"-control-plane")
	ip = strings.TrimSpace(ip)
	if err != nil || net.ParseIP(ip) == nil {
		t.Fatalf("the control-plane node's address: %v %q", err, ip)
	}
	target := net.JoinHostPort(ip, "10259")
	caFile := filepath.Join(dir, "scheduler-ca.pem")
	if err := os.WriteFile(caFile, schedulerCA(t, target), 0o600); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	job := func(name, cluster string) string {
		return fmt.Sprintf(`  - job_name: %s
    scheme: https
    authorization:
      credentials_file: %s
    tls_config:
      ca_file: %s
      server_name: localhost
    static_configs:
      - targets: [%q]
        labels: {cluster: %q}
`, name, tokenFile, caFile, target, cluster)
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: %s
  evaluation_interval: %s
rule_files:
  - %s
  - %s
scrape_configs:
`, promScrapeInterval, promScrapeInterval,
		filepath.Join(root, "mixin/rendered/prometheus_rules.yaml"), filepath.Join(root, "mixin/rendered/prometheus_alerts.yaml"))
	cfg += job("kube-scheduler", c.name) + job("kube-scheduler-copy", "copy")
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	logFile, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+cfgFile, "--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		logFile.Close()
	})
	p := &promServer{url: "http://" + addr}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	poll(ctx, t, "Prometheus to scrape the scheduler", func() (bool, string) {
		select {
		case err := <-exited:
			exited <- err
			log, _ := os.ReadFile(logFile.Name())
			t.Fatalf("prometheus exited: %v\n%s", err, tail(string(log), 20))
		default:
		}
		var targets struct {
			ActiveTargets []struct {
				Health    string `json:"health"`
				LastError string `json:"lastError"`
				ScrapeURL string `json:"scrapeUrl"`
			} `json:"activeTargets"`
		}
		if err := p.get(ctx, "/api/v1/targets", nil, &targets); err != nil {
			return false, err.Error()
		}
		var bad []string
		for _, tg := range targets.ActiveTargets {
			if tg.Health != "up" {
				bad = append(bad, fmt.Sprintf("%s: %s %s", tg.ScrapeURL, tg.Health, tg.LastError))
			}
		}
		return len(targets.ActiveTargets) == 2 && len(bad) == 0, fmt.Sprintf("%d targets; %s", len(targets.ActiveTargets), strings.Join(bad, "; "))
	})
	return p
}

// schedulerCA returns the CA certificate the scheduler serves last in its
// chain (kube-scheduler's self-signed serving certificate comes with the CA
// that signed it), in PEM: Prometheus then checks the certificate it is
// served on every scrape instead of skipping the check.
func schedulerCA(t *testing.T, target string) []byte {
	t.Helper()
	d := &net.Dialer{Timeout: 10 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", target, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // reads the chain to pin its CA
	if err != nil {
		t.Fatalf("TLS to the scheduler at %s: %v", target, err)
	}
	defer conn.Close()
	chain := conn.ConnectionState().PeerCertificates
	if len(chain) < 2 || !chain[len(chain)-1].IsCA {
		t.Fatalf("the scheduler at %s serves %d certificates, want its certificate and its CA", target, len(chain))
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: chain[len(chain)-1].Raw})
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// get reads one Prometheus API answer's data into out.
func (p *promServer) get(ctx context.Context, path string, q url.Values, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	u := p.url + path
	if q != nil {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("GET %s: %v", path, err)
	}
	if body.Status != "success" {
		return fmt.Errorf("GET %s: %s", path, body.Error)
	}
	return json.Unmarshal(body.Data, out)
}

// series returns how many series an instant query returns.
func (p *promServer) series(ctx context.Context, query string) (int, error) {
	var v struct {
		Result []json.RawMessage `json:"result"`
	}
	err := p.get(ctx, "/api/v1/query", url.Values{"query": {query}}, &v)
	return len(v.Result), err
}

type promRule struct {
	Name      string `json:"name"`
	Type      string `json:"type"`
	Health    string `json:"health"`
	LastError string `json:"lastError"`
}

func (p *promServer) rules(ctx context.Context) ([]promRule, error) {
	var v struct {
		Groups []struct {
			Rules []promRule `json:"rules"`
		} `json:"groups"`
	}
	if err := p.get(ctx, "/api/v1/rules", nil, &v); err != nil {
		return nil, err
	}
	var out []promRule
	for _, g := range v.Groups {
		out = append(out, g.Rules...)
	}
	return out, nil
}

// statusCounts is what status -o json says about the queue and its counters.
type statusCounts struct {
	Time   time.Time `json:"time"`
	Source struct {
		Kind       string `json:"kind"`
		Target     string `json:"target"`
		Candidates int    `json:"candidates"`
	} `json:"source"`
	Scheduler struct {
		Version string `json:"version"`
	} `json:"scheduler"`
	Pending    map[string]int64 `json:"pending"`
	RateWindow string           `json:"rateWindow"`
	Incoming   []struct {
		Queue     string   `json:"queue"`
		Event     string   `json:"event"`
		Total     int64    `json:"total"`
		PerSecond *float64 `json:"perSecond"`
	} `json:"incoming"`
	Attempts []struct {
		Result    string   `json:"result"`
		Total     int64    `json:"total"`
		PerSecond *float64 `json:"perSecond"`
	} `json:"attempts"`
	Warnings []string `json:"warnings"`
}

// counter is one counter series of a status: its total and, from a status
// with rates, the increase its rate stands for (rate × window).
type counter struct {
	total    int64
	increase float64
	hasRate  bool
}

func (s *statusCounts) counters(t *testing.T) map[string]counter {
	t.Helper()
	var window float64
	if s.RateWindow != "" {
		d, err := time.ParseDuration(s.RateWindow)
		if err != nil {
			t.Fatalf("rateWindow %q: %v", s.RateWindow, err)
		}
		window = d.Seconds()
	}
	out := map[string]counter{}
	add := func(key string, total int64, perSecond *float64) {
		c := counter{total: total}
		if perSecond != nil {
			c.increase, c.hasRate = *perSecond*window, true
		}
		out[key] = c
	}
	for _, in := range s.Incoming {
		add("incoming "+in.Queue+"/"+in.Event, in.Total, in.PerSecond)
	}
	for _, a := range s.Attempts {
		add("attempts "+a.Result, a.Total, a.PerSecond)
	}
	return out
}

func statusOf(t *testing.T, kubeconfig string, args ...string) *statusCounts {
	t.Helper()
	out, err := pluginStdout(t, kubeconfig, append([]string{"status", "-o", "json"}, args...)...)
	if err != nil {
		t.Fatalf("status %v: %v\n%s", args, err, out)
	}
	var s statusCounts
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("status %v -o json: %v\n%s", args, err, out)
	}
	return &s
}

// pluginStdout runs bin/kubectl-schedq with a bound on its time and returns
// its standard output; on failure the error carries its standard error.
func pluginStdout(t *testing.T, kubeconfig string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr strings.Builder
	cmd := exec.CommandContext(ctx, env(t, "SCHEDQ_PLUGIN", ""), append(args, "--kubeconfig", kubeconfig)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%w: %s", err, stderr.String())
	}
	return stdout.String(), nil
}

// testPrometheus runs the Prometheus checks on the seeded cluster: the
// mixin's rules evaluate on the kind scheduler's series, and status and
// explain through Prometheus agree with a direct scrape of the same
// scheduler.
func (c *cluster) testPrometheus(t *testing.T, parked, gated, denied []string) {
	// A direct status just before Prometheus' first scrape: its counters
	// are a lower bound for the oldest sample Prometheus will hold.
	d0 := statusOf(t, c.kubeconfig)
	_, token := c.serviceAccountToken(t, true)
	p := c.startPrometheus(t, token)

	t.Run("rules evaluate on the kind scheduler", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var records []string
		poll(ctx, t, "every recording rule to produce series", func() (bool, string) {
			rules, err := p.rules(ctx)
			if err != nil {
				return false, err.Error()
			}
			records = records[:0]
			var missing, bad []string
			for _, r := range rules {
				if r.Health == "err" {
					bad = append(bad, fmt.Sprintf("%s: %s", r.Name, r.LastError))
				}
				if r.Type != "recording" || slices.Contains(records, r.Name) {
					continue
				}
				records = append(records, r.Name)
				// The kind cluster's own series, not the copy job's.
				n, err := p.series(ctx, fmt.Sprintf(`%s{cluster=%q}`, r.Name, c.name))
				if err != nil {
					return false, err.Error()
				}
				if n == 0 {
					missing = append(missing, r.Name)
				}
			}
			if len(bad) > 0 {
				t.Fatalf("rules that do not evaluate: %s", strings.Join(bad, "; "))
			}
			return len(records) > 0 && len(missing) == 0, fmt.Sprintf("%d recording rules, without series: %v", len(records), missing)
		})
		for _, r := range records {
			n, _ := p.series(ctx, fmt.Sprintf(`%s{cluster=%q}`, r, c.name))
			t.Logf("%s: %d series", r, n)
		}
		// The seeded pods are in the recorded queue sizes.
		n, err := p.series(ctx, fmt.Sprintf(`queue:scheduler_pending_pods:sum{cluster=%q,queue="unschedulable"} == %d`, c.name, len(parked)))
		if err != nil || n != 1 {
			t.Errorf("queue:scheduler_pending_pods:sum{queue=\"unschedulable\"} is not %d: %d series, %v", len(parked), n, err)
		}
	})

	t.Run("dashboard queries answer for the kind scheduler", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		c.checkDashboard(ctx, t, p)
	})

	// Prometheus needs a few samples for rates; the first status through it
	// may otherwise answer from one sample, without rates (tested in
	// make test-prometheus).
	time.Sleep(5 * promScrapeInterval)

	selectors := []struct {
		name     string
		args     []string
		target   string // a label the chosen target must have
		nTargets int
	}{
		{"without --prometheus-selector", nil, "", 2},
		{"with --prometheus-selector", []string{"--prometheus-selector", fmt.Sprintf(`job="kube-scheduler",cluster=%q`, c.name)}, fmt.Sprintf(`cluster="%s"`, c.name), 1},
	}
	for _, sel := range selectors {
		t.Run("status through Prometheus agrees with a direct scrape "+sel.name, func(t *testing.T) {
			// d1 is taken after Prometheus' first samples, d2 after the
			// status through Prometheus, which reads the samples Prometheus
			// holds from its first (after d0) to its newest (over a scrape
			// interval after d1): every counter it reads lies between d1's
			// and d2's, and the increase its rate stands for between what the
			// counter gained after d1 and what it gained from d0 to d2.
			first := p.firstSample(t, c.name)
			d1 := statusOf(t, c.kubeconfig)
			if !d1.Time.After(first) {
				t.Fatalf("direct status at %s, not after Prometheus' first sample at %s", d1.Time, first)
			}
			// Two intervals: the newest sample of whichever target status
			// chooses is then younger than d1.
			time.Sleep(2*promScrapeInterval + time.Second)
			viaProm := statusOf(t, c.kubeconfig, append([]string{"--prometheus-url", p.url}, sel.args...)...)
			d2 := statusOf(t, c.kubeconfig)

			if viaProm.Source.Kind != "prometheus" || viaProm.Source.Candidates != sel.nTargets || !strings.Contains(viaProm.Source.Target, sel.target) {
				t.Errorf("source %+v, want prometheus, chosen among %d targets, target with %s", viaProm.Source, sel.nTargets, sel.target)
			}
			if viaProm.Scheduler.Version != d2.Scheduler.Version {
				t.Errorf("scheduler version %q through Prometheus, %q scraped", viaProm.Scheduler.Version, d2.Scheduler.Version)
			}
			// Same queues: the parked and gated pods stay where they are;
			// the denied pods move between activeQ and backoffQ.
			for _, q := range []string{"unschedulablePods", "gated", "total"} {
				if viaProm.Pending[q] != d2.Pending[q] {
					t.Errorf("pending %s: %d through Prometheus, %d scraped", q, viaProm.Pending[q], d2.Pending[q])
				}
			}
			if viaProm.Pending["unschedulablePods"] != int64(len(parked)) || viaProm.Pending["gated"] != int64(len(gated)) ||
				viaProm.Pending["activeQ"]+viaProm.Pending["backoffQ"] != int64(len(denied)) {
				t.Errorf("pending through Prometheus %v, want unschedulablePods %d, gated %d, activeQ+backoffQ %d",
					viaProm.Pending, len(parked), len(gated), len(denied))
			}
			if viaProm.RateWindow == "" {
				t.Fatalf("status through Prometheus has no rates: %v", viaProm.Warnings)
			}

			p0, p1, p2, pp := d0.counters(t), d1.counters(t), d2.counters(t), viaProm.counters(t)
			moving := 0
			for key, got := range pp {
				lo, hi := p1[key], p2[key]
				if got.total < lo.total || got.total > hi.total {
					t.Errorf("%s: total %d through Prometheus, want between %d and %d (direct scrapes before and after)", key, got.total, lo.total, hi.total)
				}
				if !got.hasRate {
					t.Errorf("%s: no rate through Prometheus", key)
					continue
				}
				inc := math.Round(got.increase)
				if min, max := float64(got.total-lo.total), float64(hi.total-p0[key].total); inc < min || inc > max {
					t.Errorf("%s: rate × window = %.2f through Prometheus, want between %.0f and %.0f (the direct scrapes' counts over its window's bounds)", key, got.increase, min, max)
				}
				if inc > 0 {
					moving++
				}
			}
			for key := range p2 {
				if _, ok := pp[key]; !ok && p2[key].total > 0 {
					t.Errorf("%s: in the direct scrape (total %d), missing through Prometheus", key, p2[key].total)
				}
			}
			// The denied pods keep failing their binding: something must move,
			// or the comparison of rates proved nothing.
			if moving == 0 {
				t.Errorf("no counter moved over Prometheus' window %s: the rates were not compared", viaProm.RateWindow)
			}
			t.Logf("rates over %s (%v); %d of %d counters moved", viaProm.RateWindow, viaProm.Warnings, moving, len(pp))
		})

		t.Run("explain through Prometheus agrees with a direct scrape "+sel.name, func(t *testing.T) {
			direct := explainOf(t, c.kubeconfig)
			viaProm := explainOf(t, c.kubeconfig, append([]string{"--prometheus-url", p.url}, sel.args...)...)
			if viaProm.Model != direct.Model || !strings.Contains(viaProm.ModelSource, "kubernetes_build_info") {
				t.Errorf("model %q from %q through Prometheus, %q scraped", viaProm.Model, viaProm.ModelSource, direct.Model)
			}
			got, want := viaProm.queues(), direct.queues()
			for _, n := range slices.Concat(parked, gated) {
				if got[n] != want[n] || got[n] == "" {
					t.Errorf("%s: %q through Prometheus, %q scraped", n, got[n], want[n])
				}
			}
			for _, n := range denied {
				if !slices.Contains([]string{"errorBackoffQ", "activeQ", "inFlight"}, got[n]) {
					t.Errorf("%s placed in %q through Prometheus, want errorBackoffQ, activeQ or inFlight (%q scraped)", n, got[n], want[n])
				}
			}
		})
	}
}

// firstSample returns the time of Prometheus' oldest sample of the kind
// scheduler.
func (p *promServer) firstSample(t *testing.T, cluster string) time.Time {
	t.Helper()
	var v struct {
		Result []struct {
			Values [][2]any `json:"values"`
		} `json:"result"`
	}
	q := fmt.Sprintf(`scheduler_pending_pods{cluster=%q,queue="gated"}[10m]`, cluster)
	if err := p.get(context.Background(), "/api/v1/query", url.Values{"query": {q}}, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Result) != 1 || len(v.Result[0].Values) == 0 {
		t.Fatalf("%s: %d series", q, len(v.Result))
	}
	ts, ok := v.Result[0].Values[0][0].(float64)
	if !ok {
		t.Fatalf("%s: sample time %v", q, v.Result[0].Values[0][0])
	}
	return time.UnixMilli(int64(ts * 1000))
}

func explainOf(t *testing.T, kubeconfig string, args ...string) *explainJSON {
	t.Helper()
	out, err := pluginStdout(t, kubeconfig, append([]string{"explain", "-A", "-o", "json"}, args...)...)
	if err != nil {
		t.Fatalf("explain %v: %v\n%s", args, err, out)
	}
	var e explainJSON
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatalf("explain %v -o json: %v\n%s", args, err, out)
	}
	return &e
}

func (e *explainJSON) queues() map[string]string {
	out := map[string]string{}
	for _, it := range e.Items {
		if it.Namespace == ns {
			out[it.Name] = it.Queue
		}
	}
	return out
}

// dashboardFile is the rendered Grafana dashboard.
const dashboardFile = "../../mixin/rendered/dashboards/schedq-queue.json"

// noValueSeries reads the series a panel's no-data text names ("No data:
// SERIES exists from kube-scheduler vX").
var noValueSeries = regexp.MustCompile(`^No data: (\w+) exists from kube-scheduler v[0-9.]+$`)

// checkDashboard evaluates every panel's query and every variable of the
// rendered dashboard on Prometheus, as Grafana would with the kind cluster
// chosen: each returns series, except a panel whose no-data text names a
// series this scheduler does not serve, which returns none.
func (c *cluster) checkDashboard(ctx context.Context, t *testing.T, p *promServer) {
	t.Helper()
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
			FieldConfig struct {
				Defaults struct {
					NoValue string `json:"noValue"`
				} `json:"defaults"`
			} `json:"fieldConfig"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	vars := strings.NewReplacer("$cluster", c.name, "$instance", ".+", "$__rate_interval", "1m")
	queried, none := 0, 0
	for _, panel := range d.Panels {
		wantNone := ""
		if m := noValueSeries.FindStringSubmatch(panel.FieldConfig.Defaults.NoValue); m != nil {
			n, err := p.series(ctx, fmt.Sprintf(`%s{cluster=%q}`, m[1], c.name))
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				wantNone = m[1]
			}
		}
		for _, tg := range panel.Targets {
			queried++
			expr := vars.Replace(tg.Expr)
			var n int
			poll(ctx, t, "panel "+panel.Title, func() (bool, string) {
				var err error
				if n, err = p.series(ctx, expr); err != nil {
					t.Fatalf("panel %s: %s: %v", panel.Title, expr, err)
				}
				return wantNone != "" || n > 0, fmt.Sprintf("%s: no series", expr)
			})
			if wantNone != "" {
				none++
			}
			if wantNone != "" && n > 0 {
				t.Errorf("panel %s: %d series, but the scheduler serves no %s its no-data text names", panel.Title, n, wantNone)
			}
		}
	}
	if queried == 0 {
		t.Fatalf("%s: no panel queries", dashboardFile)
	}
	t.Logf("%d panel queries: %d with series, %d without, as their no-data text says", queried, queried-none, none)
	for _, v := range d.Templating.List {
		q, ok := v.Query.(map[string]any)
		if v.Type != "query" || !ok {
			continue
		}
		m := labelValues.FindStringSubmatch(fmt.Sprint(q["query"]))
		if m == nil {
			t.Errorf("variable %s: %v is not label_values(selector, label)", v.Name, q["query"])
			continue
		}
		var values []string
		if err := p.get(ctx, "/api/v1/label/"+m[2]+"/values", url.Values{"match[]": {vars.Replace(m[1])}}, &values); err != nil {
			t.Fatalf("variable %s: %v", v.Name, err)
		}
		if len(values) == 0 || (v.Name == "cluster" && !slices.Contains(values, c.name)) {
			t.Errorf("variable %s: values %v from %s", v.Name, values, q["query"])
		}
	}
}

var labelValues = regexp.MustCompile(`^label_values\((.*), *(\w+)\)$`)
