// Package groundtruth holds the shape of the live scheduling queue as the
// embedded control plane reports it: every pod kube-scheduler's
// SchedulingQueue holds, with the sub-queue it is in, read from the queue
// itself rather than inferred from metrics or events.
//
// The embedded control plane serves it as JSON on
// GET /debug/schedq/queue (loopback only):
//
//	{"pods":[{"namespace":"default","name":"p1","queue":"backoff","attempts":1,
//	  "timestamp":"2026-01-02T15:04:05.123Z","backoffExpiresAt":"2026-01-02T15:04:07.000Z"}]}
//
// This package has no Kubernetes imports, so that anything wanting to compare
// against the ground truth (the explain accuracy test, the runner) can use it.
package groundtruth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/kubectl-schedq/kubectl-schedq/pkg/bound"
)

// Path is where the embedded control plane serves the queue, and PopsPath
// its pops.
const (
	Path     = "/debug/schedq/queue"
	PopsPath = "/debug/schedq/pops"
)

// Pops are the times the scheduler popped each pod, by the pod's UID, oldest
// first: recorded where the scheduler takes its next pod from the queue, so
// exact, whatever the pod did between two reads of the queue.
type Pops map[string][]time.Time

// PopsURL is the pops' URL beside a control plane's QueueURL.
func PopsURL(queueURL string) string {
	return strings.TrimSuffix(queueURL, Path) + PopsPath
}

// QueueName is the sub-queue a pod is in, in the words of the trace spec.
type QueueName string

// The sub-queues. Backoff is podBackoffQ (the pod was rejected by at least one
// plugin); ErrorBackoff is podErrorBackoffQ (the last attempt failed with an
// error, no plugin rejected it). Both are "backoff" in scheduler_pending_pods.
// Unschedulable and Gated share unschedulablePods and differ by whether a
// PreEnqueue plugin gates the pod. InFlight pods have been popped and are being
// scheduled. With v1.37's GenericWorkload a pod-group member is where its
// group's entity is; Incomplete members wait in incompletePodGroupPods for
// the scheduler to observe their PodGroup, Pending ones in
// pendingPodGroupPods, outside their group's entity.
const (
	Active        QueueName = "active"
	Backoff       QueueName = "backoff"
	ErrorBackoff  QueueName = "errorBackoff"
	Unschedulable QueueName = "unschedulable"
	Gated         QueueName = "gated"
	InFlight      QueueName = "inFlight"
	Incomplete    QueueName = "incomplete"
	Pending       QueueName = "pending"
)

// QueueNames lists every QueueName, in the order a pod usually moves through them.
var QueueNames = []QueueName{Incomplete, Pending, Gated, Active, InFlight, Backoff, ErrorBackoff, Unschedulable}

// TimeFormat is RFC 3339 with milliseconds, in UTC.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// Queue is every pod the scheduling queue holds at one moment.
type Queue struct {
	Pods []Pod `json:"pods"`
}

// Pod is one pod's place in the queue.
type Pod struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// UID tells a pod from an earlier one of the same name.
	UID   string    `json:"uid,omitempty"`
	Queue QueueName `json:"queue"`
	// Attempts is QueuedPodInfo.Attempts: how many times the pod was popped.
	Attempts int `json:"attempts"`
	// Timestamp is QueuedPodInfo.Timestamp: when the pod entered the queue, or
	// its last failure.
	Timestamp time.Time `json:"-"`
	// BackoffExpiresAt is when the pod's backoff completes (aligned to the
	// one-second window when SchedulerPopFromBackoffQ is on). Set only for pods
	// in Backoff or ErrorBackoff.
	BackoffExpiresAt time.Time `json:"-"`
}

// Key is "namespace/name".
func (p Pod) Key() string { return p.Namespace + "/" + p.Name }

type podJSON struct {
	Namespace        string    `json:"namespace"`
	Name             string    `json:"name"`
	UID              string    `json:"uid,omitempty"`
	Queue            QueueName `json:"queue"`
	Attempts         int       `json:"attempts"`
	Timestamp        string    `json:"timestamp,omitempty"`
	BackoffExpiresAt string    `json:"backoffExpiresAt,omitempty"`
}

// MarshalJSON writes the timestamps as RFC 3339 with milliseconds and leaves
// out zero ones.
func (p Pod) MarshalJSON() ([]byte, error) {
	return json.Marshal(podJSON{
		Namespace:        p.Namespace,
		Name:             p.Name,
		UID:              p.UID,
		Queue:            p.Queue,
		Attempts:         p.Attempts,
		Timestamp:        formatTime(p.Timestamp),
		BackoffExpiresAt: formatTime(p.BackoffExpiresAt),
	})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *Pod) UnmarshalJSON(data []byte) error {
	var j podJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	ts, err := parseTime(j.Timestamp)
	if err != nil {
		return fmt.Errorf("pod %s/%s: timestamp: %w", j.Namespace, j.Name, err)
	}
	bo, err := parseTime(j.BackoffExpiresAt)
	if err != nil {
		return fmt.Errorf("pod %s/%s: backoffExpiresAt: %w", j.Namespace, j.Name, err)
	}
	*p = Pod{Namespace: j.Namespace, Name: j.Name, UID: j.UID, Queue: j.Queue, Attempts: j.Attempts, Timestamp: ts, BackoffExpiresAt: bo}
	return nil
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(TimeFormat)
}

func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, s)
}

// Sort orders the pods by namespace and name.
func (q *Queue) Sort() {
	sort.Slice(q.Pods, func(i, j int) bool {
		if q.Pods[i].Namespace != q.Pods[j].Namespace {
			return q.Pods[i].Namespace < q.Pods[j].Namespace
		}
		return q.Pods[i].Name < q.Pods[j].Name
	})
}

// Get returns the pod namespace/name, if the queue holds it.
func (q Queue) Get(namespace, name string) (Pod, bool) {
	for _, p := range q.Pods {
		if p.Namespace == namespace && p.Name == name {
			return p, true
		}
	}
	return Pod{}, false
}

// Count returns how many pods are in each queue; queues with none are left out.
func (q Queue) Count() map[QueueName]int {
	n := map[QueueName]int{}
	for _, p := range q.Pods {
		n[p.Queue]++
	}
	return n
}

// MaxQueueBytes caps the answer of Fetch: a pod's entry is about 150
// bytes, so this holds well over a million pods.
const MaxQueueBytes = 256 << 20

// Fetch GETs the queue from url (a control plane's QueueURL). A nil client
// means http.DefaultClient.
func Fetch(ctx context.Context, client *http.Client, url string) (Queue, error) {
	var q Queue
	err := fetch(ctx, client, url, &q)
	return q, err
}

// FetchPops GETs the pops from url (PopsURL of a control plane's QueueURL).
func FetchPops(ctx context.Context, client *http.Client, url string) (Pops, error) {
	p := Pops{}
	err := fetch(ctx, client, url, &p)
	return p, err
}

func fetch(ctx context.Context, client *http.Client, url string, into any) error {
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := bound.ReadAll(resp.Body, MaxQueueBytes, "the answer")
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	return nil
}
