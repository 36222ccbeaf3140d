package metricscrape

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"
)

// A Locator finds kube-scheduler the way one platform runs it: as static
// pods in kube-system (kubeadm, RKE2, Talos) or in openshift-kube-scheduler
// (OpenShift), behind the API server (EKS), or out of reach (GKE, AKS, k3s).
// Discovery tries the locators of DefaultLocators in order; a new platform
// is one more Locator in one file.
type Locator interface {
	// Platform names the platform, as the SOURCE line and -v print it
	// ("EKS", "OpenShift", "kubeadm").
	Platform() string
	// Detect says whether the cluster looks like this platform. It reads
	// what it needs through c, which keeps every answer for the other
	// locators. It returns an error when it could not look (a 403, a
	// timeout); discovery then goes on with the next locator.
	Detect(ctx context.Context, c *Cluster) (Detection, error)
	// Locate returns how to reach the scheduler now. Discovery calls it
	// at every scrape on the platform it found, so that a new leader or a
	// restarted pod is followed. It returns an error wrapping ErrNotHere
	// when the scheduler it detected is gone (discovery looks again from
	// the start), an *UnreachableError when the platform keeps the
	// scheduler out of reach (the error names the flag that gets its
	// metrics), or another error that is the answer (no leader, a 403).
	Locate(ctx context.Context, c *Cluster) (*Endpoint, error)
}

// Detection is what a locator saw.
type Detection struct {
	// Looks says the cluster looks like the platform.
	Looks bool
	// Evidence says why it does ("API group metrics.eks.amazonaws.com/v1
	// is served"), or, when it does not, what was looked at ("no pod
	// component=kube-scheduler in kube-system"). Empty when there is
	// nothing worth saying (a platform recognised only by its marks).
	Evidence string
}

// Endpoint is how one scheduler's metrics, /configz and /flagz are reached.
type Endpoint struct {
	// Origin says where the metrics come from; Discovery adds the platform.
	Origin Origin
	// Target names the endpoint in errors ("kube-scheduler
	// kube-system/kube-scheduler-cp-1:10259 (port-forward)").
	Target string
	// Open makes the endpoint reachable. It returns the base URL the paths
	// are read under, the client to read them with, and a function that
	// releases what Open set up (a port-forward), or nil.
	Open func(ctx context.Context) (base string, client *http.Client, stop func(), err error)
	// MetricsPath is the metrics' path under base; MetricsAccept the
	// Accept header to send for it (empty: the text format's). With
	// MetricsAnyType the answer's Content-Type is not checked: the body
	// is parsed as a text exposition whatever it says.
	MetricsPath    string
	MetricsAccept  string
	MetricsAnyType bool
	// NoConfig, when set, says why the scheduler's /configz and /flagz are
	// not read through this endpoint; otherwise they are read under base
	// as the scheduler serves them.
	NoConfig string
	// Forbidden is what a 403 on the metrics path lacks: the permission
	// and the RBAC objects that grant it. Nil: the scheduler's own
	// nonResourceURLs ["/metrics"].
	Forbidden *Grant
	// auth, when set, names the identity on a 403 and, for the scheduler's
	// own /metrics (Forbidden nil), checks an impersonated identity's access
	// before the scrape: the scheduler does not honour impersonation, the
	// API server does.
	auth *kubeAuth
}

// Grant is a permission one way to the scheduler needs.
type Grant struct {
	// Permission is what may be done, as a 403 names it ("get ksh/metrics
	// in API group metrics.eks.amazonaws.com").
	Permission string
	// RBAC returns the objects that grant it to id, as YAML.
	RBAC func(id *Identity) string
}

// UnreachableError says the platform keeps the scheduler where this
// command cannot reach it, and what gets its metrics instead.
type UnreachableError struct {
	Platform string
	// Evidence is why the cluster looks like the platform.
	Evidence string
	// Why says where the scheduler is ("k3s runs kube-scheduler inside its
	// server process: there is no scheduler pod").
	Why string
	// Remedy names the flag that gets the metrics there.
	Remedy string
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("this cluster looks like %s (%s): %s; %s", e.Platform, e.Evidence, e.Why, e.Remedy)
}

// ErrNotHere is wrapped by a Locate error that says the scheduler the
// locator detected is no longer there.
var ErrNotHere = errors.New("scheduler not found here")

// ErrNoSchedulerPod is wrapped by the error discovery returns when no
// locator found the scheduler.
var ErrNoSchedulerPod = errors.New("no kube-scheduler found")

// Attempt is one locator's look at the cluster, as -v and NotFoundError
// report it.
type Attempt struct {
	Platform string
	Evidence string
	Err      error
}

func (a Attempt) String() string {
	switch {
	case a.Err != nil:
		return fmt.Sprintf("%s: %v", a.Platform, firstLine(a.Err.Error()))
	case a.Evidence != "":
		return a.Platform + ": " + a.Evidence
	}
	return a.Platform
}

// NotFoundError is discovery's one message when no locator found the
// scheduler: what was tried, what the cluster looks like, and the flag that
// gets the metrics there.
type NotFoundError struct {
	Tried []Attempt
	// Unreachable is set when the cluster looks like a platform that keeps
	// the scheduler out of reach.
	Unreachable *UnreachableError
}

func (e *NotFoundError) Error() string {
	var tried []string
	for _, a := range e.Tried {
		if a.Evidence != "" || a.Err != nil {
			tried = append(tried, a.String())
		}
	}
	msg := ErrNoSchedulerPod.Error()
	if len(tried) > 0 {
		msg += " (" + strings.Join(tried, "; ") + ")"
	}
	if e.Unreachable != nil {
		return msg + "; " + e.Unreachable.Error()
	}
	return msg + "; nothing says which platform this cluster is: use --metrics-url URL (a scheduler /metrics you can reach) or --prometheus-url URL (a Prometheus server that scrapes it)"
}

// Is makes a NotFoundError match ErrNoSchedulerPod.
func (e *NotFoundError) Is(target error) bool { return target == ErrNoSchedulerPod }

// DefaultLocators are the platforms discovery tries, in order: the
// kubeconfig's extension (no API call); EKS's metrics API (one GET of its
// group version); the platforms that run the scheduler as pods, those with
// marks of their own before kubeadm's, which takes any pod of that shape;
// OpenShift's namespace; then the platforms that keep the scheduler out of
// reach, which only explain where it is.
func DefaultLocators() []Locator {
	return []Locator{KubeconfigExtension, EKS, RKE2, Talos, Kubeadm, OpenShift, K3s, K0s, MicroK8s, GKE, AKS}
}

// Discovery is the Source that finds the scheduler through the locators, in
// order, and reads it through the first that reaches it. It stays with that
// locator while it reaches the scheduler, and looks again from the start
// when it no longer does.
type Discovery struct {
	cluster  *Cluster
	locators []Locator
	// extra are the paths read beside the metrics (Options.ExtraPaths).
	extra map[string]string

	mu    sync.Mutex
	found Locator   // the platform that reached the scheduler last
	last  *Endpoint // and how
}

// NewDiscovery returns the source that finds the scheduler of c with
// locators, in order (DefaultLocators when none are given).
func NewDiscovery(c *Cluster, locators ...Locator) *Discovery {
	if len(locators) == 0 {
		locators = DefaultLocators()
	}
	return &Discovery{cluster: c, locators: locators}
}

// Locators are the platforms discovery tries, in order.
func (d *Discovery) Locators() []Locator { return d.locators }

// Scrape implements Source: locate, open, read the metrics (and the extra
// paths), close.
func (d *Discovery) Scrape(ctx context.Context) (*Snapshot, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cluster.refresh()
	ep, platform, err := d.locate(ctx)
	if err != nil {
		return nil, d.cluster.withIdentity(ctx, err)
	}
	d.last = ep
	snap, err := ep.scrape(ctx, d.extra)
	if err != nil {
		return nil, err
	}
	snap.Origin.Platform = platform
	return snap, nil
}

// locate returns the endpoint of the platform found before, or tries every
// locator in order.
func (d *Discovery) locate(ctx context.Context) (*Endpoint, string, error) {
	if d.found != nil {
		ep, err := d.found.Locate(ctx, d.cluster)
		if err == nil || !errors.Is(err, ErrNotHere) {
			return ep, d.found.Platform(), err
		}
		klog.V(1).Infof("scheduler discovery: %s: %v; looking again", d.found.Platform(), err)
		d.found = nil
	}
	nf := &NotFoundError{}
	var couldNotLook error
	for _, l := range d.locators {
		det, err := l.Detect(ctx, d.cluster)
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		a := Attempt{Platform: l.Platform(), Evidence: det.Evidence, Err: err}
		nf.Tried = append(nf.Tried, a)
		if err != nil {
			klog.V(1).Infof("scheduler discovery: %s: could not look: %v", l.Platform(), err)
			if couldNotLook == nil {
				couldNotLook = err
			}
			continue
		}
		if !det.Looks {
			if det.Evidence != "" {
				klog.V(1).Infof("scheduler discovery: %s: %s", l.Platform(), det.Evidence)
			}
			continue
		}
		klog.V(1).Infof("scheduler discovery: %s: %s", l.Platform(), det.Evidence)
		ep, err := l.Locate(ctx, d.cluster)
		var ue *UnreachableError
		switch {
		case err == nil:
			klog.V(1).Infof("scheduler discovery: %s: reading %s", l.Platform(), ep.Target)
			d.found = l
			return ep, l.Platform(), nil
		case errors.As(err, &ue):
			if nf.Unreachable == nil {
				nf.Unreachable = ue
			}
		case errors.Is(err, ErrNotHere):
			klog.V(1).Infof("scheduler discovery: %s: %v", l.Platform(), err)
		default:
			return nil, l.Platform(), err
		}
	}
	// A platform that explains where its scheduler is says more than a
	// place this identity could not look into.
	if nf.Unreachable == nil && couldNotLook != nil {
		var pf *PortForwardForbiddenError
		if errors.As(couldNotLook, &pf) {
			return nil, "", couldNotLook
		}
	}
	return nil, "", nf
}

// String names the scheduler last read, or the platforms discovery tries.
func (d *Discovery) String() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.last != nil && d.found != nil {
		if d.last.Origin.Kind == OriginKubeconfig {
			return d.last.Origin.Address + " (from the kubeconfig)"
		}
		return d.last.Target + " (" + d.found.Platform() + ")"
	}
	names := make([]string, len(d.locators))
	for i, l := range d.locators {
		names[i] = l.Platform()
	}
	return "the kube-scheduler, looked for as on " + strings.Join(names, ", ")
}

// scrape opens the endpoint, reads the metrics and the extra paths, and
// closes it.
func (ep *Endpoint) scrape(ctx context.Context, extra map[string]string) (*Snapshot, error) {
	if ep.Forbidden == nil {
		if err := ep.auth.precheck(ctx, ep.Target); err != nil {
			return nil, err
		}
	}
	base, client, stop, err := ep.Open(ctx)
	if err != nil {
		return nil, err
	}
	if stop != nil {
		defer stop()
	}
	defer client.CloseIdleConnections()
	accept := ep.MetricsAccept
	if accept == "" {
		accept = acceptHeader
	}
	data, err := fetchAccept(ctx, client, base+ep.MetricsPath, ep.Target, accept, ep.MetricsAnyType)
	if err != nil {
		return nil, ep.annotate(ctx, err)
	}
	now := time.Now()
	snap, err := ParseText(ep.Target, data)
	if err != nil {
		return nil, err
	}
	snap.Time = now
	snap.Origin = ep.Origin
	if len(extra) > 0 {
		if ep.NoConfig != "" {
			snap.NoConfig = ep.NoConfig
		} else {
			snap.Extra = readExtra(ctx, client, base, extra)
		}
	}
	return snap, nil
}

// annotate gives a 403 on the metrics path the endpoint's grant and the
// identity it was refused to.
func (ep *Endpoint) annotate(ctx context.Context, err error) error {
	var fe *ForbiddenError
	if errors.As(err, &fe) && ep.Forbidden != nil {
		fe.Permission, fe.rbac = ep.Forbidden.Permission, ep.Forbidden.RBAC
	}
	return ep.auth.annotate(ctx, err)
}
