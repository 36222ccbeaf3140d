package gather

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/explain"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/metricscrape"
	"github.com/kubectl-schedq/kubectl-schedq/pkg/schedconfig"
)

// The scheduler's paths its configuration is read from, beside /metrics:
// /configz (the backoff settings; every version) and /flagz
// (--pod-max-in-unschedulable-pods-duration, which no configuration field
// carries; on by default from v1.36).
const (
	ConfigzPath = "/configz"
	FlagzPath   = "/flagz"
)

// ConfigPaths are the paths a source reads for explain, with the Accept
// header each gets its best answer with on every version (metricscrape's
// Options.ExtraPaths).
var ConfigPaths = map[string]string{ConfigzPath: "application/json", FlagzPath: schedconfig.FlagzAccept}

// ConfigRBAC is what an identity needs to read them.
const ConfigRBAC = `nonResourceURLs ["/configz", "/flagz"] verbs ["get"]`

// ConfigGiven says which settings the user gave as flags: those are taken as
// given, the others from the scheduler.
type ConfigGiven struct {
	PodInitialBackoff, PodMaxBackoff, PodMaxInUnschedulablePods bool
}

func (g ConfigGiven) all() bool {
	return g.PodInitialBackoff && g.PodMaxBackoff && g.PodMaxInUnschedulablePods
}

// schedulerConfig is the configuration explain reasons with: the flags the
// user gave, the rest from the scheduler's /configz and /flagz when the
// scrape read them, else the flags' defaults. It says where each came from
// and, when the scheduler's answer could not be used, why and what to do.
func schedulerConfig(req Request, snap *metricscrape.Snapshot) (cfg explain.Config, source string, notes []string) {
	cfg = req.Config
	given := req.ConfigGiven
	if given.all() {
		return cfg, "flags", nil
	}
	var from []string
	if given.PodInitialBackoff || given.PodMaxBackoff || given.PodMaxInUnschedulablePods {
		from = append(from, "flags")
	}
	var extra map[string]*metricscrape.Extra
	if snap != nil {
		extra = snap.Extra
	}
	why := ""
	switch {
	case req.MetricsOff != "":
		why = req.MetricsOff
	case snap == nil:
		why = "the scheduler could not be read"
	case snap.NoConfig != "":
		// The platform's path hides them: say so, once, with the values
		// used instead.
		return cfg, "flags and defaults (" + snap.NoConfig + ")", []string{fmt.Sprintf(
			"%s: explain uses --pod-initial-backoff=%s, --pod-max-backoff=%s and --pod-max-in-unschedulable-pods=%s (set them if this scheduler's differ)",
			snap.NoConfig, cfg.PodInitialBackoff, cfg.PodMaxBackoff, cfg.PodMaxInUnschedulablePods)}
	case extra == nil:
		why = fmt.Sprintf("a %s source reaches no scheduler endpoint", snap.Origin.Kind)
	}
	if why != "" {
		// Nothing was refused: the user chose a source without the
		// scheduler's endpoint. The source says so; no warning.
		return cfg, "flags and defaults (the scheduler's configuration was not read: " + why + ")", nil
	}

	if !given.PodInitialBackoff || !given.PodMaxBackoff {
		switch cz, err := readConfigz(extra); {
		case err != nil:
			notes = append(notes, fmt.Sprintf("%v: backoff from --pod-initial-backoff=%s and --pod-max-backoff=%s", err, cfg.PodInitialBackoff, cfg.PodMaxBackoff))
			from = append(from, "backoff defaults")
		default:
			if !given.PodInitialBackoff {
				cfg.PodInitialBackoff = time.Duration(cz.PodInitialBackoffSeconds) * time.Second
			}
			if !given.PodMaxBackoff {
				cfg.PodMaxBackoff = time.Duration(cz.PodMaxBackoffSeconds) * time.Second
			}
			from = append(from, ConfigzPath+" ("+string(cz.Shape)+")")
		}
	}
	if !given.PodMaxInUnschedulablePods {
		switch d, err := readLeftover(extra); {
		case err != nil:
			notes = append(notes, fmt.Sprintf("%v: the leftover flush's duration from --pod-max-in-unschedulable-pods=%s", err, cfg.PodMaxInUnschedulablePods))
			from = append(from, "leftover default")
		default:
			cfg.PodMaxInUnschedulablePods = d
			from = append(from, FlagzPath)
		}
	}
	return cfg, strings.Join(from, ", "), notes
}

func readConfigz(extra map[string]*metricscrape.Extra) (schedconfig.Config, error) {
	e, err := answer(extra, ConfigzPath)
	if err != nil {
		return schedconfig.Config{}, err
	}
	cz, err := schedconfig.ParseConfigz(e.Body)
	if err != nil {
		return cz, fmt.Errorf("the scheduler's %s: %w", ConfigzPath, err)
	}
	return cz, nil
}

// readLeftover reads --pod-max-in-unschedulable-pods-duration from /flagz.
func readLeftover(extra map[string]*metricscrape.Extra) (time.Duration, error) {
	e, err := answer(extra, FlagzPath)
	if err != nil {
		if e != nil && e.Status == http.StatusNotFound {
			return 0, fmt.Errorf("the scheduler serves no %s (before v1.36 only with --feature-gates=ComponentFlagz=true)", FlagzPath)
		}
		return 0, err
	}
	fz, err := schedconfig.ParseFlagz(e.Body, e.ContentType)
	if err != nil {
		return 0, fmt.Errorf("the scheduler's %s: %w", FlagzPath, err)
	}
	d, ok, err := fz.PodMaxInUnschedulablePodsDuration()
	switch {
	case err != nil:
		return 0, fmt.Errorf("the scheduler's %s: %w", FlagzPath, err)
	case !ok:
		return 0, fmt.Errorf("the scheduler's %s has no --%s", FlagzPath, schedconfig.PodMaxInUnschedulablePodsDurationFlag)
	}
	return d, nil
}

// answer is the scrape's answer for path, or why there is none.
func answer(extra map[string]*metricscrape.Extra, path string) (*metricscrape.Extra, error) {
	e := extra[path]
	switch {
	case e == nil:
		return nil, fmt.Errorf("the scheduler's %s was not read", path)
	case e.Status == http.StatusForbidden || e.Status == http.StatusUnauthorized:
		return e, fmt.Errorf("cannot read the scheduler's %s (%d; grant %s)", path, e.Status, ConfigRBAC)
	case e.Err != nil:
		return e, fmt.Errorf("cannot read the scheduler's %s (%s)", path, shortError(e.Err))
	}
	return e, nil
}
