package runner

import (
	"context"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// The informers here are built from a ListWatch, not client-go's
// SharedInformerFactory: the factory reaches every API group's informer
// and lister, which made the plugin's binary heavier (docs/results.md,
// Packaging).

// NewPodInformer watches pods in all namespaces, those labelSelector
// selects (all for ""), indexed by namespace.
func NewPodInformer(client kubernetes.Interface, labelSelector string) cache.SharedIndexInformer {
	pods := client.CoreV1().Pods(metav1.NamespaceAll)
	return newInformer(client, &v1.Pod{}, labelSelector,
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return pods.List(ctx, o) },
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return pods.Watch(ctx, o) })
}

// NewNodeInformer watches the nodes labelSelector selects.
func NewNodeInformer(client kubernetes.Interface, labelSelector string) cache.SharedIndexInformer {
	nodes := client.CoreV1().Nodes()
	return newInformer(client, &v1.Node{}, labelSelector,
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return nodes.List(ctx, o) },
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return nodes.Watch(ctx, o) })
}

func newInformer(client kubernetes.Interface, obj runtime.Object, labelSelector string,
	list func(context.Context, metav1.ListOptions) (runtime.Object, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)) cache.SharedIndexInformer {
	tweak := func(o metav1.ListOptions) metav1.ListOptions {
		o.LabelSelector = labelSelector
		return o
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return list(ctx, tweak(o))
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return watchFn(ctx, tweak(o))
		},
	}
	// As client-go's own informers: a client that cannot stream a
	// watch list (the fake clientset) is listed and watched the old way.
	return cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, client), obj, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}
