package explain

import (
	"encoding/json"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ExplanationList is what explain prints; -o json|yaml prints it as is.
type ExplanationList struct {
	metav1.TypeMeta `json:",inline"`
	Time            metav1.Time   `json:"time"`
	Items           []Explanation `json:"items"`
	// Model is the queue model that explained them (a kube-scheduler minor
	// version), and ModelSource where its version came from.
	Model       string `json:"model,omitempty"`
	ModelSource string `json:"modelSource,omitempty"`
	// Config is the scheduler's configuration explain reasoned with.
	Config *ConfigStatus `json:"config,omitempty"`
	// Metrics says where the scheduler's metrics were read: the platform
	// discovery found and the way to its scheduler, or the source a flag
	// named; empty without metrics.
	Metrics string `json:"metrics,omitempty"`
	// Counts is the number of explained pending pods per queue, keyed by
	// upstream's words (queue.Location.Word).
	Counts   map[string]int `json:"counts"`
	Warnings []string       `json:"warnings,omitempty"`
	NotFound []string       `json:"notFound,omitempty"`
}

// ExplanationListAPIVersion and ExplanationListKind identify -o json|yaml output.
const (
	ExplanationListAPIVersion = "schedq.kubectl-schedq.io/v1alpha1"
	ExplanationListKind       = "ExplanationList"
)

// NewExplanationList wraps explanations for printing, sorted by namespace and name.
func NewExplanationList(items []Explanation, warnings, notFound []string, now time.Time) *ExplanationList {
	sort.SliceStable(items, func(i, j int) bool {
		if items[i].Namespace != items[j].Namespace {
			return items[i].Namespace < items[j].Namespace
		}
		return items[i].Name < items[j].Name
	})
	l := &ExplanationList{
		TypeMeta: metav1.TypeMeta{APIVersion: ExplanationListAPIVersion, Kind: ExplanationListKind},
		Time:     metav1.NewTime(now), Items: items, Counts: map[string]int{}, Warnings: warnings, NotFound: notFound,
	}
	if l.Items == nil {
		l.Items = []Explanation{}
	}
	for _, e := range items {
		if e.State == StatePending {
			l.Counts[e.Queue.Word()]++
		}
	}
	return l
}

// DeepCopyObject implements runtime.Object.
func (l *ExplanationList) DeepCopyObject() runtime.Object {
	b, _ := json.Marshal(l)
	out := &ExplanationList{}
	_ = json.Unmarshal(b, out)
	return out
}

// ConfigStatus is the scheduler configuration an explanation used, and
// where it came from (the scheduler's /configz and /flagz, or flags).
type ConfigStatus struct {
	PodInitialBackoff         metav1.Duration `json:"podInitialBackoff"`
	PodMaxBackoff             metav1.Duration `json:"podMaxBackoff"`
	PodMaxInUnschedulablePods metav1.Duration `json:"podMaxInUnschedulablePods"`
	Source                    string          `json:"source,omitempty"`
}

// NewConfigStatus reports c, read from source.
func NewConfigStatus(c Config, source string) *ConfigStatus {
	return &ConfigStatus{
		PodInitialBackoff:         metav1.Duration{Duration: c.PodInitialBackoff},
		PodMaxBackoff:             metav1.Duration{Duration: c.PodMaxBackoff},
		PodMaxInUnschedulablePods: metav1.Duration{Duration: c.PodMaxInUnschedulablePods},
		Source:                    source,
	}
}
