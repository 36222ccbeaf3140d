package gather

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/pager"
)

// How explain lists: pods and nodes in pages of kubectl's --chunk-size
// (500), events in larger ones (eventChunkSize), each page decoded into
// only what explain reads (decode.go) before the next one is, so that memory
// grows with the pods by what explain keeps of each, not by whole responses
// beside their decoded objects.
const (
	listChunkSize = 500
	// eventChunkSize pages the events. The API server keeps no cache of
	// events and reads every page from etcd, where a page costs time in
	// proportion to all the events stored besides the ones it returns
	// (etcd counts the rest of the range for each, so the pages of a list
	// cost in all as the square of its length over the page size). `make
	// explain-event-pages` listed 100,000 FailedScheduling events in 8.09 s
	// in pages of 500, 3.82 s in pages of 2,000 and 2.67 s in pages of
	// 5,000. A page of 5,000 events is a few MB, trimmed as it is decoded.
	eventChunkSize = 5000
	// listPageBuffer: the next page is fetched while one is trimmed, and
	// waits there; no more pages are held.
	listPageBuffer = 0
	// listGCPercent is the garbage collector's target once explain holds
	// lowerGCFrom objects (unless GOGC says otherwise): the pages' garbage
	// and the kept objects grow the heap together, and at the default 100
	// the heap may reach twice what is live. Below that the default stays:
	// at 5,000 pods a target of 50 cost a fifth of explain's CPU in the
	// collector, for 8 MB less.
	listGCPercent = 50
	lowerGCFrom   = 20000
	// A list of n pods is n/500 requests: with client-go's default limit
	// (5 per second, burst 10) 50,000 pending pods would wait 20 s on the
	// client alone. These are kubectl's limits for discovery, its other
	// many-request reading.
	listQPS   = 50
	listBurst = 300
)

// ListConfig is cfg for explain's lists: protobuf (about a third of JSON's
// bytes and decoding time for pods and events), and the request limits above.
func ListConfig(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		cfg.QPS, cfg.Burst = listQPS, listBurst
	}
	return cfg
}

// gcKeep counts the objects the lists keep, while LowerGCPercent is on.
var gcKeep struct {
	mu      sync.Mutex
	on      bool
	kept    int
	lowered bool
	old     int
}

// LowerGCPercent sets listGCPercent once the lists have kept lowerGCFrom
// objects, and returns what restores the previous target.
func LowerGCPercent() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	gcKeep.mu.Lock()
	gcKeep.on, gcKeep.kept, gcKeep.lowered = true, 0, false
	gcKeep.mu.Unlock()
	return func() {
		gcKeep.mu.Lock()
		defer gcKeep.mu.Unlock()
		gcKeep.on = false
		if gcKeep.lowered {
			debug.SetGCPercent(gcKeep.old)
			gcKeep.lowered = false
		}
	}
}

// kept counts n more objects kept from a page.
func kept(n int) {
	gcKeep.mu.Lock()
	defer gcKeep.mu.Unlock()
	if !gcKeep.on || gcKeep.lowered {
		return
	}
	if gcKeep.kept += n; gcKeep.kept >= lowerGCFrom {
		gcKeep.old = debug.SetGCPercent(listGCPercent)
		gcKeep.lowered = true
	}
}

// eachPage lists in pages of size and hands fn every item.
func eachPage(ctx context.Context, size int64, list func(context.Context, metav1.ListOptions) (runtime.Object, error), opts metav1.ListOptions, fn func(runtime.Object)) error {
	p := pager.New(list)
	p.PageSize = size
	p.PageBufferSize = listPageBuffer
	n := 0
	err := p.EachListItem(ctx, opts, func(obj runtime.Object) error {
		fn(obj)
		if n++; n == listChunkSize {
			kept(n)
			n = 0
		}
		return nil
	})
	kept(n)
	return err
}

// listPods lists pods, each trimmed by slimPod, and what many of them hold
// alike (see sharer) kept once.
func listPods(ctx context.Context, c kubernetes.Interface, ns string, opts metav1.ListOptions) ([]*corev1.Pod, error) {
	sh := newSharer()
	return listKept(ctx, c, "pods", ns, listChunkSize, opts, listing[*corev1.Pod]{
		decode: decodePod,
		slim:   func(obj runtime.Object) *corev1.Pod { return slimPod(obj.(*corev1.Pod)) },
		share:  sh.pod,
		list: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return c.CoreV1().Pods(ns).List(ctx, opts)
		},
	})
}

// listEvents lists events in pages of eventChunkSize, each trimmed by
// slimEvent; their messages and the other strings many of them hold alike
// are kept once.
func listEvents(ctx context.Context, c kubernetes.Interface, ns string, opts metav1.ListOptions) ([]corev1.Event, error) {
	sh := newSharer()
	return listKept(ctx, c, "events", ns, eventChunkSize, opts, listing[corev1.Event]{
		decode: decodeEvent,
		slim:   func(obj runtime.Object) corev1.Event { return slimEvent(obj.(*corev1.Event)) },
		share:  sh.event,
		list: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return c.CoreV1().Events(ns).List(ctx, opts)
		},
	})
}

// listing is how one kind of object is listed and kept: decode reads what
// is kept of one from protobuf, slim trims one client-go decoded, share
// keeps once what many hold alike, and list is the typed call (clients
// that are no REST client: fakes).
type listing[T any] struct {
	decode func([]byte) (T, error)
	slim   func(runtime.Object) T
	share  func(T) T
	list   func(context.Context, metav1.ListOptions) (runtime.Object, error)
}

// listKept lists resource in pages of size: from an API server (a REST
// client) each protobuf page is read by the lean decoder (decode.go).
func listKept[T any](ctx context.Context, c kubernetes.Interface, resource, ns string, size int64, opts metav1.ListOptions, l listing[T]) ([]T, error) {
	var out []T
	typed := func(obj runtime.Object) { out = append(out, l.share(l.slim(obj))) }
	if rc, ok := c.CoreV1().RESTClient().(*rest.RESTClient); ok && rc != nil {
		err := eachRawPage(ctx, rc, resource, ns, size, opts, func(b []byte) error {
			v, err := l.decode(b)
			if err == nil {
				out = append(out, l.share(v))
			}
			return err
		}, typed)
		return out, err
	}
	err := eachPage(ctx, size, l.list, opts, typed)
	return out, err
}

// rawPage is a page as eachRawPage fetched it: protobuf items, or, from a
// server that answered otherwise, the list client-go decoded.
type rawPage struct {
	page *listPage
	list runtime.Object
	err  error
}

// eachRawPage lists resource in pages of size, as the pager of eachPage
// does: the next page is fetched while one is decoded, and no more pages are
// held. Each protobuf item goes to item; a page in another encoding is
// decoded by client-go's scheme and its objects go to typed.
func eachRawPage(ctx context.Context, rc *rest.RESTClient, resource, ns string, size int64, opts metav1.ListOptions, item func([]byte) error, typed func(runtime.Object)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if opts.Limit == 0 {
		opts.Limit = size
	}
	pages := make(chan rawPage, listPageBuffer)
	go func() {
		defer close(pages)
		for {
			p, cont := readPage(ctx, rc, resource, ns, opts)
			select {
			case pages <- p:
			case <-ctx.Done():
				return
			}
			if p.err != nil || cont == "" {
				return
			}
			opts.Continue = cont
		}
	}()
	for p := range pages {
		if p.err != nil {
			return p.err
		}
		if p.list != nil {
			n := 0
			err := meta.EachListItem(p.list, func(obj runtime.Object) error {
				n++
				typed(obj)
				return nil
			})
			kept(n)
			if err != nil {
				return err
			}
			continue
		}
		for _, b := range p.page.items {
			if err := item(b); err != nil {
				return fmt.Errorf("decoding one of %s: %w", resource, err)
			}
		}
		kept(len(p.page.items))
	}
	return ctx.Err()
}

// readPage fetches one page and reads its envelope, and the continue
// token of the next.
func readPage(ctx context.Context, rc *rest.RESTClient, resource, ns string, opts metav1.ListOptions) (p rawPage, cont string) {
	body, err := rc.Get().NamespaceIfScoped(ns, ns != "").Resource(resource).
		VersionedParams(&opts, scheme.ParameterCodec).Do(ctx).Raw()
	if err != nil {
		return rawPage{err: err}, ""
	}
	if p.page, p.err = parseListPage(body); p.err == nil {
		return p, p.page.cont
	}
	if errors.Is(p.err, errNotProtobuf) {
		p.page = nil
		if p.list, p.err = runtime.Decode(scheme.Codecs.UniversalDeserializer(), body); p.err == nil {
			var l metav1.ListInterface
			if l, p.err = meta.ListAccessor(p.list); p.err == nil {
				return p, l.GetContinue()
			}
		}
	}
	return rawPage{err: fmt.Errorf("decoding a page of %s: %w", resource, p.err)}, ""
}

// listNodes lists nodes, without their managed fields and image lists.
func listNodes(ctx context.Context, c kubernetes.Interface) ([]*corev1.Node, error) {
	out := []*corev1.Node{}
	err := eachPage(ctx, listChunkSize, func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return c.CoreV1().Nodes().List(ctx, opts)
	}, metav1.ListOptions{}, func(obj runtime.Object) {
		n := obj.(*corev1.Node).DeepCopy()
		n.ManagedFields, n.Annotations = nil, nil
		n.Status.Images = nil
		out = append(out, n)
	})
	return out, err
}

// slimPod copies what explain reads of a pod: its identity, what says
// whether and by whom it is scheduled (node, phase, scheduler, gates,
// deletion, PodScheduled), its priority, and what its hints check against
// nodes (requests, node selector and affinity, tolerations). The rest —
// managed fields, containers' commands, env, volumes, statuses — can be many
// times as large and is dropped with the page.
func slimPod(p *corev1.Pod) *corev1.Pod {
	s := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion,
			CreationTimestamp: p.CreationTimestamp, DeletionTimestamp: p.DeletionTimestamp,
		},
		Spec: corev1.PodSpec{
			NodeName: p.Spec.NodeName, SchedulerName: p.Spec.SchedulerName, Priority: p.Spec.Priority,
			SchedulingGates: p.Spec.SchedulingGates, SchedulingGroup: p.Spec.SchedulingGroup, NodeSelector: p.Spec.NodeSelector,
			Tolerations: p.Spec.Tolerations, Overhead: p.Spec.Overhead, Resources: p.Spec.Resources,
			Containers: slimContainers(p.Spec.Containers), InitContainers: slimContainers(p.Spec.InitContainers),
		},
		Status: corev1.PodStatus{Phase: p.Status.Phase},
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		s.Spec.Affinity = &corev1.Affinity{NodeAffinity: a.NodeAffinity}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			s.Status.Conditions = []corev1.PodCondition{c}
		}
	}
	return s
}

// slimContainers keeps containers' names and requests.
func slimContainers(cs []corev1.Container) []corev1.Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		out[i] = corev1.Container{Name: c.Name, Resources: corev1.ResourceRequirements{Requests: c.Resources.Requests}}
	}
	return out
}

// slimEvent copies what explain reads of an event: its reason, message,
// counts and times, and the pod it is about.
func slimEvent(e *corev1.Event) corev1.Event {
	return corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: e.Name, Namespace: e.Namespace, UID: e.UID, ResourceVersion: e.ResourceVersion},
		InvolvedObject: corev1.ObjectReference{
			Kind: e.InvolvedObject.Kind, Namespace: e.InvolvedObject.Namespace, Name: e.InvolvedObject.Name, UID: e.InvolvedObject.UID,
		},
		Reason: e.Reason, Message: e.Message, Count: e.Count,
		FirstTimestamp: e.FirstTimestamp, LastTimestamp: e.LastTimestamp, EventTime: e.EventTime, Series: e.Series,
		Type: e.Type,
	}
}
