package metricscrape

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/schedconfig"
)

// ConfigzPath is the scheduler's /configz, read beside the metrics for its
// profiles; ConfigzAccept is the Accept header it is read with.
const (
	ConfigzPath   = "/configz"
	ConfigzAccept = "application/json"
)

// SecondSchedulerSelectors select the pods a second kube-scheduler runs in,
// beside the cluster's own: component=scheduler, as Kubernetes' "Configure
// Multiple Schedulers" task and scheduler-plugins' chart label theirs, and
// kubeadm's component=kube-scheduler, for a second set of static pods.
var SecondSchedulerSelectors = []string{"component=scheduler", SchedulerPodSelector}

// maxSecondSchedulers bounds how many other kube-schedulers are asked for
// their /configz (one port-forward each) while looking for a profile.
const maxSecondSchedulers = 8

// SchedulerSeen is a kube-scheduler discovery looked at: where it runs and
// the scheduler names its profiles serve.
type SchedulerSeen struct {
	// Pod is namespace/name of the pod read (the leader's when known).
	Pod string `json:"pod"`
	// Lease is namespace/name of its replicas' Lease, when they elect one.
	Lease string `json:"lease,omitempty"`
	// Profiles are its profiles' scheduler names (its /configz).
	Profiles []string `json:"profiles,omitempty"`
	// Error says why its profiles are not known.
	Error string `json:"error,omitempty"`
}

func (s SchedulerSeen) String() string {
	if s.Error != "" {
		return fmt.Sprintf("%s (profiles unknown: %s)", s.Pod, s.Error)
	}
	return fmt.Sprintf("%s (profiles %s)", s.Pod, strings.Join(s.Profiles, ", "))
}

// NotServedError says that no kube-scheduler found serves a scheduler
// name: its pods wait for a scheduler of another kind (Volcano, YuniKorn),
// or for one that is not running. No kube-scheduler's queue holds them.
type NotServedError struct {
	SchedulerName string
	// Seen are the kube-schedulers looked at, the cluster's own first.
	Seen []SchedulerSeen
	// Namespaces are those the search looked in for other kube-schedulers.
	Namespaces []string
	// Incomplete says why the search may have missed one.
	Incomplete string
}

func (e *NotServedError) Error() string {
	seen := make([]string, len(e.Seen))
	for i, s := range e.Seen {
		seen[i] = s.String()
	}
	msg := fmt.Sprintf("no kube-scheduler here serves scheduler name %q", e.SchedulerName)
	if len(seen) > 0 {
		msg += " (looked at " + strings.Join(seen, "; ") + ")"
	}
	if e.Incomplete != "" {
		msg += "; " + e.Incomplete
	}
	msg += ": its pods wait for a scheduler of another kind (Volcano, YuniKorn, …) or for one that is not running, and are in no kube-scheduler's queue"
	if len(e.Namespaces) > 0 {
		msg += " (looked in namespaces " + strings.Join(e.Namespaces, ", ") + "; a kube-scheduler in another is found with --scheduler-namespace NAMESPACE, which sends your credentials to the pods there)"
	}
	return msg
}

// ProfileSource reads the kube-scheduler that serves one scheduler name.
// That is the scheduler discovery finds when one of its profiles has the
// name (its /configz says; without /configz, the name is taken as served
// when it is default-scheduler or the metrics count attempts of that
// profile); else another kube-scheduler, in kube-system, the cluster's own
// scheduler's namespace or one the user names, whose /configz profiles
// have it: a second
// scheduler beside the cluster's own, with its own pods, Lease, metrics and
// configuration, read the same way (a port-forward to the holder of its
// Lease). It stays with a second
// scheduler while it answers. When no kube-scheduler serves the name,
// Scrape returns a *NotServedError.
//
// With no name it reads the scheduler discovery finds, and adds the
// profiles its /configz names.
type ProfileSource struct {
	base *Discovery
	name string
	// namespaces are the namespaces the user names to look in beside
	// kube-system and the cluster's own scheduler's.
	namespaces []string

	mu sync.Mutex
	// second is the other kube-scheduler found serving name, kept while it
	// answers; seen are the schedulers looked at on the way.
	second *PodLocator
	seen   []SchedulerSeen
}

// NewProfileSource reads, through d, the kube-scheduler that serves
// schedulerName (or, when empty, the one d finds), looking for a second one
// in kube-system, the cluster's own scheduler's namespace and namespaces
// (empty names are ignored). d reads /configz beside the metrics from now
// on.
func NewProfileSource(d *Discovery, schedulerName string, namespaces ...string) *ProfileSource {
	if d.extra == nil {
		d.extra = map[string]string{}
	}
	if _, ok := d.extra[ConfigzPath]; !ok {
		d.extra[ConfigzPath] = ConfigzAccept
	}
	var ns []string
	for _, n := range namespaces {
		if n != "" {
			ns = append(ns, n)
		}
	}
	return &ProfileSource{base: d, name: schedulerName, namespaces: ns}
}

// String names the scheduler read last, or the one looked for.
func (s *ProfileSource) String() string {
	s.mu.Lock()
	second := s.second
	s.mu.Unlock()
	if second != nil {
		return fmt.Sprintf("the kube-scheduler serving %q (%s in %s)", s.name, second.Pods.Selector, second.Pods.Namespace)
	}
	if s.name == "" {
		return s.base.String()
	}
	return fmt.Sprintf("the kube-scheduler serving %q (%s)", s.name, s.base)
}

// Scrape implements Source.
func (s *ProfileSource) Scrape(ctx context.Context) (*Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.second != nil {
		s.base.cluster.refresh()
		snap, err := s.scrapeSecond(ctx)
		if err == nil || !errors.Is(err, ErrNotHere) {
			return snap, err
		}
		klog.V(1).Infof("scheduler discovery: the scheduler serving %q: %v; looking again", s.name, err)
		s.second = nil
	}
	snap, err := s.base.Scrape(ctx)
	if err != nil && (s.name == "" || !errors.Is(err, ErrNoSchedulerPod)) {
		return nil, err
	}
	var own SchedulerSeen
	var platform string
	var exclude []string
	if snap != nil {
		profiles, perr := snapshotProfiles(snap)
		if perr == nil {
			snap.Origin.Profiles = profiles
		}
		served := slices.Contains(profiles, s.name) ||
			// Without /configz (EKS's path, a 403): what the metrics show.
			perr != nil && (s.name == schedconfig.DefaultSchedulerName || slices.Contains(snap.Profiles, s.name))
		if s.name == "" || served {
			return snap, nil
		}
		o := snap.Origin
		own = SchedulerSeen{Pod: orDefault(o.Pod, o.Address), Lease: o.Lease, Profiles: profiles}
		if perr != nil {
			own.Error = configzError(perr)
		}
		platform = o.Platform
		exclude = append([]string{o.Pod}, o.Standby...)
	}
	return s.search(ctx, own, platform, exclude)
}

// scrapeSecond reads the second scheduler found before.
func (s *ProfileSource) scrapeSecond(ctx context.Context) (*Snapshot, error) {
	ep, err := s.second.Locate(ctx, s.base.cluster)
	if err != nil {
		return nil, err
	}
	snap, err := ep.scrape(ctx, s.base.extra)
	if err != nil {
		return nil, err
	}
	snap.Origin.Platform = s.second.Name
	if profiles, err := snapshotProfiles(snap); err == nil {
		snap.Origin.Profiles = profiles
	}
	snap.Origin.Others = s.seen
	return snap, nil
}

// search looks at the other kube-schedulers of the cluster for one whose
// profiles serve s.name, and reads it. own is the cluster's scheduler, read
// already on platform (its pods are in exclude); empty when discovery found
// none.
func (s *ProfileSource) search(ctx context.Context, own SchedulerSeen, platform string, exclude []string) (*Snapshot, error) {
	c := s.base.cluster
	nse := &NotServedError{SchedulerName: s.name}
	if own.Pod != "" {
		nse.Seen = append(nse.Seen, own)
	}
	namespaces := searchNamespaces(exclude, s.namespaces)
	groups, incomplete, err := secondSchedulers(ctx, c, namespaces, exclude)
	if err != nil {
		return nil, err
	}
	nse.Namespaces, nse.Incomplete = namespaces, incomplete
	for _, g := range groups {
		seen := SchedulerSeen{Pod: g.pod.Namespace + "/" + g.pod.Name}
		cfg, err := readConfigz(ctx, c, g.pods, g.pod)
		if err != nil {
			seen.Error = configzError(err)
			nse.Seen = append(nse.Seen, seen)
			klog.V(1).Infof("scheduler discovery: %s: %v", seen.Pod, err)
			continue
		}
		seen.Profiles = cfg.SchedulerNames()
		if le := cfg.LeaderElection; le.LeaderElect {
			g.pods.LeaseNamespace, g.pods.LeaseName = le.ResourceNamespace, le.ResourceName
			seen.Lease = g.pods.lease()
		}
		klog.V(1).Infof("scheduler discovery: %s", seen)
		if !slices.Contains(seen.Profiles, s.name) {
			nse.Seen = append(nse.Seen, seen)
			continue
		}
		name := "second scheduler"
		if platform != "" {
			name = platform + ", " + name
		}
		s.second = &PodLocator{Name: name, Pods: g.pods}
		s.seen = nse.Seen
		snap, err := s.scrapeSecond(ctx)
		if err != nil {
			s.second = nil
			return nil, err
		}
		return snap, nil
	}
	return nil, nse
}

// secondGroup is one other kube-scheduler: the pods of one controller (a
// Deployment's replicas) or one set of static pods, and one of them that
// runs.
type secondGroup struct {
	pods SchedulerPods
	pod  *corev1.Pod
}

// searchNamespaces are the namespaces a second kube-scheduler is looked
// for in: kube-system, those of the cluster's own scheduler's pods (own,
// e.g. openshift-kube-scheduler) and those the user names. Only these: the
// search sends the kubeconfig's credentials to each pod it asks for its
// /configz, and a pod that any namespace's owner can label is not to be
// trusted with them.
func searchNamespaces(own, named []string) []string {
	namespaces := []string{SchedulerNamespace}
	for _, p := range own {
		if ns, _, ok := strings.Cut(p, "/"); ok && !slices.Contains(namespaces, ns) {
			namespaces = append(namespaces, ns)
		}
	}
	for _, ns := range named {
		if !slices.Contains(namespaces, ns) {
			namespaces = append(namespaces, ns)
		}
	}
	return namespaces
}

// secondSchedulers finds the kube-schedulers in namespaces other than the
// pods in exclude, by SecondSchedulerSelectors.
func secondSchedulers(ctx context.Context, c *Cluster, namespaces, exclude []string) (groups []secondGroup, incomplete string, err error) {
	byKey := map[string]*secondGroup{}
	var keys []string
	var forbidden []string
	for _, ns := range namespaces {
		for _, sel := range SecondSchedulerSelectors {
			pods, err := c.Pods(ctx, ns, sel)
			if apierrors.IsForbidden(err) {
				// Another namespace may still have it.
				if !slices.Contains(forbidden, ns) {
					forbidden = append(forbidden, ns)
				}
				continue
			}
			if err != nil {
				return nil, "", (SchedulerPods{Namespace: ns}).apiStep("listing pods "+sel+" in "+ns+" to find the scheduler", err)
			}
			for i := range pods {
				p := &pods[i]
				if slices.Contains(exclude, p.Namespace+"/"+p.Name) || p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
					continue
				}
				key, sp := groupOf(p, sel)
				g, ok := byKey[key]
				if !ok {
					g = &secondGroup{pods: sp, pod: p}
					byKey[key] = g
					keys = append(keys, key)
				} else if p.Name < g.pod.Name {
					g.pod = p
				}
			}
		}
	}
	var notes []string
	if len(forbidden) > 0 {
		notes = append(notes, "pods in "+strings.Join(forbidden, ", ")+" could not be listed (forbidden)")
	}
	sort.Strings(keys)
	for _, k := range keys {
		if len(groups) == maxSecondSchedulers {
			notes = append(notes, fmt.Sprintf("only the first %d other kube-schedulers were asked", maxSecondSchedulers))
			break
		}
		groups = append(groups, *byKey[k])
	}
	return groups, strings.Join(notes, "; "), nil
}

// groupOf says which scheduler a pod is a replica of: its controller's (a
// Deployment's ReplicaSet), else, for static pods, those of its namespace
// that sel selects. It returns the pods' SchedulerPods without a Lease,
// which the scheduler's /configz names.
func groupOf(p *corev1.Pod, sel string) (string, SchedulerPods) {
	sp := SchedulerPods{Namespace: p.Namespace, Selector: sel, Port: securePort(p)}
	if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind != "Node" {
		// The replicas share their template's labels; a rollout's
		// pod-template-hash is not theirs to share.
		set := labels.Set{}
		for k, v := range p.Labels {
			if !perPodLabels[k] {
				set[k] = v
			}
		}
		sp.Selector = labels.SelectorFromSet(set).String()
		return p.Namespace + "/" + ref.Kind + "/" + ref.Name, sp
	}
	return p.Namespace + "/" + sel, sp
}

// perPodLabels are the labels controllers set per revision or per pod.
var perPodLabels = map[string]bool{
	"pod-template-hash": true, "controller-revision-hash": true, "pod-template-generation": true,
	"statefulset.kubernetes.io/pod-name": true, "apps.kubernetes.io/pod-index": true,
}

// securePort is the scheduler's --secure-port in the pod's command line, or
// the default 10259.
func securePort(p *corev1.Pod) int {
	for _, c := range p.Spec.Containers {
		args := append(append([]string{}, c.Command...), c.Args...)
		for i, a := range args {
			v, ok := strings.CutPrefix(a, "--secure-port=")
			if !ok && a == "--secure-port" && i+1 < len(args) {
				v, ok = args[i+1], true
			}
			if n, err := strconv.Atoi(v); ok && err == nil && n > 0 {
				return n
			}
		}
	}
	return SchedulerSecurePort
}

// readConfigz reads the /configz of pod through a port-forward.
func readConfigz(ctx context.Context, c *Cluster, sp SchedulerPods, pod *corev1.Pod) (schedconfig.Config, error) {
	ep, err := sp.Endpoint(c, &SchedulerTarget{Pod: pod})
	if err != nil {
		return schedconfig.Config{}, err
	}
	base, client, stop, err := ep.Open(ctx)
	if err != nil {
		return schedconfig.Config{}, err
	}
	if stop != nil {
		defer stop()
	}
	defer client.CloseIdleConnections()
	e := readExtra(ctx, client, base, map[string]string{ConfigzPath: ConfigzAccept})[ConfigzPath]
	if e.Err != nil {
		return schedconfig.Config{}, e.Err
	}
	return schedconfig.ParseConfigz(e.Body)
}

// snapshotProfiles are the scheduler names of the profiles in the
// snapshot's /configz.
func snapshotProfiles(snap *Snapshot) ([]string, error) {
	if snap.NoConfig != "" {
		return nil, errors.New(snap.NoConfig)
	}
	e, ok := snap.Extra[ConfigzPath]
	if !ok || e == nil {
		return nil, errors.New(ConfigzPath + " was not read")
	}
	if e.Err != nil {
		return nil, e.Err
	}
	cfg, err := schedconfig.ParseConfigz(e.Body)
	if err != nil {
		return nil, err
	}
	return cfg.SchedulerNames(), nil
}

// configzError says briefly why a scheduler's /configz gave no profiles.
func configzError(err error) string {
	var fe *ForbiddenError
	if errors.As(err, &fe) {
		return "these credentials may not get " + ConfigzPath
	}
	return firstLine(err.Error())
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
