package runner

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// podTracker watches pods through the runner's informer: it sees each pod
// created unbound and then bound, as upstream's collectors see them through
// the scheduler's own informer, and tells the listeners of every bind. It
// also keeps when the runner sent each pod's create request.
type podTracker struct {
	runSelector labels.Selector

	mu        sync.Mutex
	created   map[string]time.Time // namespace/name → create request sent
	listeners map[int]func(pod *v1.Pod, at time.Time)
	nextID    int
}

func newPodTracker(runSelector labels.Selector) *podTracker {
	return &podTracker{
		runSelector: runSelector,
		created:     map[string]time.Time{},
		listeners:   map[int]func(*v1.Pod, time.Time){},
	}
}

func podKey(namespace, name string) string { return namespace + "/" + name }

// handler returns the informer event handler.
func (t *podTracker) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { t.onChange(nil, obj) },
		UpdateFunc: func(oldObj, newObj any) {
			t.onChange(oldObj, newObj)
		},
	}
}

func (t *podTracker) onChange(oldObj, newObj any) {
	newPod, ok := newObj.(*v1.Pod)
	if !ok || newPod.Spec.NodeName == "" {
		return
	}
	if oldObj != nil {
		if oldPod, ok := oldObj.(*v1.Pod); ok && oldPod.Spec.NodeName != "" {
			return
		}
	}
	if !t.runSelector.Matches(labels.Set(newPod.Labels)) {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, l := range t.listeners {
		l(newPod, now)
	}
}

// listen calls fn for every bind until the returned function is called. fn
// runs with the tracker locked: it must be quick and must not call back.
func (t *podTracker) listen(fn func(pod *v1.Pod, at time.Time)) (stop func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	id := t.nextID
	t.nextID++
	t.listeners[id] = fn
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		delete(t.listeners, id)
	}
}

// setCreated records when the create request of a pod was sent.
func (t *podTracker) setCreated(namespace, name string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.created[podKey(namespace, name)] = at
}

// createdAt returns when the runner sent the pod's create request.
func (t *podTracker) createdAt(key string) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	at, ok := t.created[key]
	return at, ok
}
