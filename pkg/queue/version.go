package queue

import (
	"fmt"
	"regexp"
	"strconv"
)

// Version is the kube-scheduler minor version whose queue the model follows.
// The rules that differ between versions read the behaviour fields it fixes
// at construction (see behaviourOf), never the version itself: a rule reads
// like that version's upstream code, and another version is one more row.
type Version int

// The versions modelled. Each differs from the one before only where
// behaviourOf says so.
const (
	V1_34 Version = 34
	V1_35 Version = 35
	V1_36 Version = 36
	V1_37 Version = 37
)

// DefaultVersion is the current release's: what a new cluster runs.
const DefaultVersion = V1_37

// Versions lists the modelled versions, oldest first.
var Versions = []Version{V1_34, V1_35, V1_36, V1_37}

func (v Version) String() string { return "v1." + strconv.Itoa(int(v)) }

// versionPattern matches a Kubernetes version as build_info's git_version,
// the API server's /version and users spell it: v1.37, 1.37.2,
// v1.34.4-gke.1200, v1.36.3+k3s1.
var versionPattern = regexp.MustCompile(`^v?1\.(\d+)(?:\.\d+)?(?:[-+].*)?$`)

// ParseVersion reads a Kubernetes version and returns the modelled minor it
// names. A version outside v1.34–v1.37 is an error that names the ones
// there are.
func ParseVersion(s string) (Version, error) {
	m := versionPattern.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q is not a Kubernetes version (want v1.MINOR or v1.MINOR.PATCH, e.g. %s)", s, DefaultVersion)
	}
	minor, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, fmt.Errorf("%q is not a Kubernetes version: %w", s, err)
	}
	v := Version(minor)
	if !v.Known() {
		return v, fmt.Errorf("kube-scheduler %s has no queue model (modelled: %s–%s)", v, Versions[0], Versions[len(Versions)-1])
	}
	return v, nil
}

// Known reports whether v is one of Versions.
func (v Version) Known() bool { return v >= Versions[0] && v <= Versions[len(Versions)-1] }

// behaviour is what differs between the modelled versions, each field set
// from the version where upstream changed (the file:line of the change is
// beside each). Everything not listed is the same in all of them.
type behaviour struct {
	// activateFromBackoffRunsPreEnqueue: Activate() of a pod in backoffQ runs
	// PreEnqueue again even with PopFromBackoffQ on; only BackoffComplete
	// skipped it (scheduling_queue.go v1.34:634, changed in v1.35:643).
	activateFromBackoffRunsPreEnqueue bool
	// gatedReaddKeepsRecord: a gated pod already in unschedulablePods is left
	// as it is by moveToActiveQ/moveToBackoffQ; from v1.36 it is updated in
	// place and the gated and unschedulable gauges follow a flip
	// (unschedulable_pods.go v1.36:50).
	gatedReaddKeepsRecord bool
	// targetPodEvents: the pod's own updates are TargetPod events and a new
	// pod is UnscheduledPodAdd; before, both were UnschedulablePod events
	// (framework/types.go v0.37:165-171, events.go v1.37:55-61).
	targetPodEvents bool
	// updateOfUnqueuedPodAdds: Update() of a pod in no queue adds it as new
	// (event UnscheduledPodAdd); before, it counted as UnschedulablePodUpdate
	// (scheduling_queue.go v1.37:1455).
	updateOfUnqueuedPodAdds bool
	// flushReevaluatesGated: wildcard events (the leftover flush) re-run
	// PreEnqueue for gated pods, and a flushed pod is not flushed again for
	// podMaxInUnschedulablePodsDuration after its FlushTimestamp; before,
	// gated pods only reacted to their gating plugin's events
	// (scheduling_queue.go v1.37:1312-1322, 1930).
	flushReevaluatesGated bool
	// gatedMoveChecksQueues: moveToActiveQ leaves a gated pod alone when
	// activeQ or backoffQ hold it (scheduling_queue.go v1.36:685-690; gone
	// in v1.37:826, where the entity was taken out of them before).
	gatedMoveChecksQueues bool
}

func behaviourOf(v Version) behaviour {
	return behaviour{
		activateFromBackoffRunsPreEnqueue: v < V1_35,
		gatedReaddKeepsRecord:             v < V1_36,
		targetPodEvents:                   v >= V1_37,
		updateOfUnqueuedPodAdds:           v >= V1_37,
		flushReevaluatesGated:             v >= V1_37,
		gatedMoveChecksQueues:             v < V1_37,
	}
}

// WithVersion makes the queue follow kube-scheduler v's rules (default
// DefaultVersion). An unknown version panics: callers parse with
// ParseVersion.
func WithVersion(v Version) Option {
	if !v.Known() {
		panic(fmt.Sprintf("queue: no model of kube-scheduler %s", v))
	}
	return func(o *priorityQueueOptions) { o.version = v }
}
