package explain

import (
	"encoding/json"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/queue"
)

// queueNames are upstream's words for the places a pod can be, the names
// every output of explain uses (the table, -o json|yaml, the counts).
var queueNames = map[queue.Location]string{
	queue.LocationActive:        "activeQ",
	queue.LocationBackoff:       "backoffQ",
	queue.LocationErrorBackoff:  "errorBackoffQ",
	queue.LocationUnschedulable: "unschedulablePods",
	queue.LocationGated:         "gated",
	queue.LocationInFlight:      "inFlight",
	queue.LocationUnknown:       "unknown",
}

// QueueName is upstream's word for l: activeQ, backoffQ, errorBackoffQ,
// unschedulablePods, gated, inFlight or unknown ("" for "").
func QueueName(l queue.Location) string {
	if n, ok := queueNames[l]; ok {
		return n
	}
	return string(l)
}

// ParseQueueName is the inverse of QueueName. It also takes the trace
// format's words (active, backoff, …), which older output used.
func ParseQueueName(s string) queue.Location {
	for l, n := range queueNames {
		if n == s {
			return l
		}
	}
	return queue.Location(s)
}

// MarshalJSON writes Queue in upstream's words.
func (e Explanation) MarshalJSON() ([]byte, error) {
	type plain Explanation
	return json.Marshal(struct {
		plain
		Queue string `json:"queue,omitempty"`
	}{plain(e), QueueName(e.Queue)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *Explanation) UnmarshalJSON(b []byte) error {
	type plain Explanation
	v := struct {
		*plain
		Queue string `json:"queue,omitempty"`
	}{plain: (*plain)(e)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	e.Queue = ParseQueueName(v.Queue)
	return nil
}

// MarshalJSON writes Queue in upstream's words.
func (a Alternative) MarshalJSON() ([]byte, error) {
	type plain Alternative
	return json.Marshal(struct {
		plain
		Queue string `json:"queue"`
	}{plain(a), QueueName(a.Queue)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (a *Alternative) UnmarshalJSON(b []byte) error {
	type plain Alternative
	v := struct {
		*plain
		Queue string `json:"queue"`
	}{plain: (*plain)(a)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	a.Queue = ParseQueueName(v.Queue)
	return nil
}
