package queue

import "fmt"

// One vocabulary for where a pod can be. Each place has three spellings,
// kept together here and nowhere else:
//   - its Location, the word of the trace format and of the ground truth
//     (active, backoff, …);
//   - the queue label scheduler_pending_pods counts it under, if any (an
//     error-backoff pod counts as backoff; an in-flight pod in no queue);
//   - upstream's word for it (activeQ, backoffQ, …), the one every output of
//     the plugin shows.
type place struct {
	loc   Location
	label string
	word  string
}

// places lists every place in the order a pod usually moves through them.
var places = []place{
	{LocationGated, LabelGated, "gated"},
	{LocationIncomplete, LabelIncomplete, "incompletePodGroupPods"},
	{LocationPending, LabelPending, "pendingPodGroupPods"},
	{LocationActive, LabelActive, "activeQ"},
	{LocationInFlight, "", "inFlight"},
	{LocationBackoff, LabelBackoff, "backoffQ"},
	{LocationErrorBackoff, LabelBackoff, "errorBackoffQ"},
	{LocationUnschedulable, LabelUnschedulable, "unschedulablePods"},
	{LocationUnknown, "", "unknown"},
}

// Word is upstream's word for the place: activeQ, backoffQ, errorBackoffQ,
// unschedulablePods, gated, incompletePodGroupPods, pendingPodGroupPods,
// inFlight or unknown; an unknown Location is returned as it is.
func (l Location) Word() string {
	for _, p := range places {
		if p.loc == l {
			return p.word
		}
	}
	return string(l)
}

// ParseLocation reads upstream's word for a place, or its Location
// spelling (which older output used).
func ParseLocation(s string) (Location, error) {
	for _, p := range places {
		if p.word == s || string(p.loc) == s {
			return p.loc, nil
		}
	}
	return "", fmt.Errorf("unknown queue %q", s)
}

// MarshalText writes upstream's word, so that JSON and YAML show it.
func (l Location) MarshalText() ([]byte, error) { return []byte(l.Word()), nil }

// UnmarshalText reads what MarshalText writes (and the Location spelling);
// an unknown word is kept as it is.
func (l *Location) UnmarshalText(b []byte) error {
	loc, err := ParseLocation(string(b))
	if err != nil {
		loc = Location(b)
	}
	*l = loc
	return nil
}

// QueueWord is upstream's word for a scheduler_pending_pods (or
// scheduler_queue_incoming_pods_total) queue value; an unknown value is
// returned as it is.
func QueueWord(label string) string {
	for _, p := range places {
		if p.label == label {
			return p.word
		}
	}
	return label
}
