package testsupport

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Prometheus answers the Prometheus HTTP API's instant queries that are
// plain selectors (`name{a="b",c=~"d"}`), with an optional range
// (`…[5m]`), over series with samples at given times, as a server with the
// default five-minute lookback would.
type Prometheus struct {
	Series []PrometheusSeries
	// Check, when set, sees each request first and may answer it itself
	// (returning false): an authenticating proxy's part.
	Check func(w http.ResponseWriter, r *http.Request) bool
}

// PrometheusSeries is one series and its samples, oldest first.
type PrometheusSeries struct {
	Metric  model.Metric
	Samples []model.SamplePair
}

// PrometheusLookback is how far back an instant query finds a sample.
const PrometheusLookback = 5 * time.Minute

func (p *Prometheus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.Check != nil && !p.Check(w, r) {
		return
	}
	if !strings.HasSuffix(r.URL.Path, "/api/v1/query") {
		http.NotFound(w, r)
		return
	}
	_ = r.ParseForm()
	q := r.Form.Get("query")
	sec, err := strconv.ParseFloat(r.Form.Get("time"), 64)
	if err != nil {
		PrometheusError(w, http.StatusBadRequest, "bad_data", "time: "+err.Error())
		return
	}
	at := model.TimeFromUnixNano(int64(sec * 1e9))
	window := time.Duration(0)
	if i := strings.LastIndexByte(q, '['); i > 0 && strings.HasSuffix(q, "]") {
		d, err := model.ParseDuration(q[i+1 : len(q)-1])
		if err != nil {
			PrometheusError(w, http.StatusBadRequest, "bad_data", err.Error())
			return
		}
		q, window = q[:i], time.Duration(d)
	}
	match, err := ParseSelector(q)
	if err != nil {
		PrometheusError(w, http.StatusBadRequest, "bad_data", err.Error())
		return
	}
	if window > 0 {
		out := model.Matrix{}
		for _, s := range p.Series {
			if !match(s.Metric) {
				continue
			}
			ss := &model.SampleStream{Metric: s.Metric}
			for _, v := range s.Samples {
				if v.Timestamp > at.Add(-window) && v.Timestamp <= at {
					ss.Values = append(ss.Values, v)
				}
			}
			if len(ss.Values) > 0 {
				out = append(out, ss)
			}
		}
		PrometheusResult(w, model.ValMatrix, out)
		return
	}
	out := model.Vector{}
	for _, s := range p.Series {
		if !match(s.Metric) {
			continue
		}
		for i := len(s.Samples) - 1; i >= 0; i-- {
			v := s.Samples[i]
			if v.Timestamp <= at && v.Timestamp > at.Add(-PrometheusLookback) {
				out = append(out, &model.Sample{Metric: s.Metric, Value: v.Value, Timestamp: at})
				break
			}
		}
	}
	PrometheusResult(w, model.ValVector, out)
}

// PrometheusResult writes a successful query answer.
func PrometheusResult(w http.ResponseWriter, typ model.ValueType, result any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": typ.String(), "result": result}})
}

// PrometheusError writes an error answer as Prometheus does.
func PrometheusError(w http.ResponseWriter, code int, errorType, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"status": "error", "errorType": errorType, "error": msg})
}

var matcherRE = regexp.MustCompile(`^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!=|=)\s*("(?:[^"\\]|\\.)*")\s*(?:,|$)`)

// ParseSelector reads a plain selector, `name{a="b",c!="d",e=~"f"}`.
func ParseSelector(q string) (func(model.Metric) bool, error) {
	open := strings.IndexByte(q, '{')
	if open < 0 || !strings.HasSuffix(q, "}") {
		return nil, errBadQuery(q)
	}
	type m struct {
		name, op string
		value    string
		re       *regexp.Regexp
	}
	var ms []m
	if name := q[:open]; name != "" {
		ms = append(ms, m{name: model.MetricNameLabel, op: "=", value: name})
	}
	rest := q[open+1 : len(q)-1]
	for strings.TrimSpace(rest) != "" {
		sub := matcherRE.FindStringSubmatch(rest)
		if sub == nil {
			return nil, errBadQuery(q)
		}
		v, err := strconv.Unquote(sub[3])
		if err != nil {
			return nil, err
		}
		mm := m{name: sub[1], op: sub[2], value: v}
		if mm.op == "=~" {
			if mm.re, err = regexp.Compile("^(?:" + v + ")$"); err != nil {
				return nil, err
			}
		}
		ms = append(ms, mm)
		rest = rest[len(sub[0]):]
	}
	return func(metric model.Metric) bool {
		for _, mm := range ms {
			got := string(metric[model.LabelName(mm.name)])
			switch mm.op {
			case "=":
				if got != mm.value {
					return false
				}
			case "!=":
				if got == mm.value {
					return false
				}
			case "=~":
				if !mm.re.MatchString(got) {
					return false
				}
			}
		}
		return true
	}, nil
}

type errBadQuery string

func (e errBadQuery) Error() string { return "cannot parse " + string(e) }

// SeriesOf turns a text exposition into the series a Prometheus server
// would store for a target with the given labels.
func SeriesOf(t testing.TB, exposition string, target model.LabelSet) model.Vector {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	var all []*dto.MetricFamily
	for _, f := range fams {
		all = append(all, f)
	}
	vec, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{Timestamp: model.Now()}, all...)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range vec {
		for k, v := range target {
			s.Metric[k] = v
		}
	}
	return vec
}

// Scraped returns the samples of a target scraped every interval from
// first to last (inclusive), with value v.
func Scraped(first, last time.Time, interval time.Duration, v float64) []model.SamplePair {
	var out []model.SamplePair
	for t := first; !t.After(last); t = t.Add(interval) {
		out = append(out, model.SamplePair{Timestamp: model.TimeFromUnixNano(t.UnixNano()), Value: model.SampleValue(v)})
	}
	return out
}

// AddScraped adds each sample of vec as a series scraped every interval
// from first to last with the sample's value.
func (p *Prometheus) AddScraped(vec model.Vector, first, last time.Time, interval time.Duration) {
	for _, s := range vec {
		p.Series = append(p.Series, PrometheusSeries{Metric: s.Metric, Samples: Scraped(first, last, interval, float64(s.Value))})
	}
}

// TenantGate is what a multi-tenant Prometheus behind a token check
// (Mimir, Cortex; a managed Prometheus's front) answers, as a
// Prometheus.Check: 401 without the token, 401 "no org id" (Mimir's words)
// without an X-Scope-OrgID header, 403 for another tenant. It logs each
// refusal to logf, when set, without the credentials.
func TenantGate(token, tenant string, logf func(format string, args ...any)) func(w http.ResponseWriter, r *http.Request) bool {
	want := []byte("Bearer " + token)
	return func(w http.ResponseWriter, r *http.Request) bool {
		code, msg := 0, ""
		switch got := r.Header.Get("X-Scope-OrgID"); {
		case subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1:
			code, msg = http.StatusUnauthorized, "invalid or missing bearer token"
		case got == "":
			code, msg = http.StatusUnauthorized, "no org id"
		case got != tenant:
			code, msg = http.StatusForbidden, "the token may not read this tenant"
		default:
			return true
		}
		if logf != nil {
			logf("%s %s: %d %s", r.Method, r.URL.Path, code, msg)
		}
		http.Error(w, msg, code)
		return false
	}
}
