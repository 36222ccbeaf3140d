package runner

import (
	"crypto/rand"
	"encoding/hex"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NewRunID returns a fresh run id: 10 hex digits, valid as a label value.
func NewRunID() string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ObjectRef names an object the run created.
type ObjectRef struct {
	Resource  schema.GroupVersionResource `json:"resource"`
	Namespace string                      `json:"namespace,omitempty"`
	Name      string                      `json:"name"`
}

// Ledger records what a run created, so that a provider on a shared cluster
// can delete it: every object but pods (which it finds by label, their
// number being large) by reference, and the namespaces pods were created in.
// It is safe for concurrent use.
type Ledger struct {
	mu            sync.Mutex
	objects       map[ObjectRef]bool
	podNamespaces map[string]bool
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger {
	return &Ledger{objects: map[ObjectRef]bool{}, podNamespaces: map[string]bool{}}
}

// Add records an object.
func (l *Ledger) Add(ref ObjectRef) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.objects[ref] = true
}

// Remove forgets an object the run deleted itself.
func (l *Ledger) Remove(ref ObjectRef) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.objects, ref)
}

// Has reports whether the run created the object.
func (l *Ledger) Has(ref ObjectRef) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.objects[ref]
}

// AddPodNamespace records that pods were created in namespace.
func (l *Ledger) AddPodNamespace(namespace string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.podNamespaces[namespace] = true
}

// Objects lists the recorded objects: namespaced ones first, namespaces
// last, so that deleting in order removes contents before containers.
func (l *Ledger) Objects() []ObjectRef {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]ObjectRef, 0, len(l.objects))
	for r := range l.objects {
		out = append(out, r)
	}
	rank := func(r ObjectRef) int {
		switch {
		case r.Namespace != "":
			return 0
		case r.Resource.Resource == "namespaces":
			return 2
		default:
			return 1
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if rank(a) != rank(b) {
			return rank(a) < rank(b)
		}
		if a.Resource.String() != b.Resource.String() {
			return a.Resource.String() < b.Resource.String()
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return out
}

// PodNamespaces lists the namespaces pods were created in, sorted.
func (l *Ledger) PodNamespaces() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.podNamespaces))
	for ns := range l.podNamespaces {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}
