// Package heap is a keyed binary heap that performs exactly the container/heap
// operations upstream's pkg/scheduler/backend/heap performs (Push on insert,
// Fix on update, Remove on delete, Pop), so that pods that tie under the less
// function come out in the same order as in kube-scheduler.
package heap

import "container/heap"

// LessFunc orders two items.
type LessFunc[T any] func(a, b T) bool

// KeyFunc names an item; at most one item per key is held.
type KeyFunc[T any] func(obj T) string

type item[T any] struct {
	obj   T
	index int
}

type data[T any] struct {
	items map[string]*item[T]
	queue []*item[T]
	less  LessFunc[T]
}

func (h *data[T]) Len() int           { return len(h.queue) }
func (h *data[T]) Less(i, j int) bool { return h.less(h.queue[i].obj, h.queue[j].obj) }
func (h *data[T]) Swap(i, j int) {
	h.queue[i], h.queue[j] = h.queue[j], h.queue[i]
	h.queue[i].index = i
	h.queue[j].index = j
}
func (h *data[T]) Push(x any) {
	it := x.(*item[T])
	it.index = len(h.queue)
	h.queue = append(h.queue, it)
}
func (h *data[T]) Pop() any {
	n := len(h.queue) - 1
	it := h.queue[n]
	h.queue[n] = nil
	h.queue = h.queue[:n]
	return it
}

// Recorder is told when the number of items changes (a pending-pods gauge).
type Recorder interface {
	Inc()
	Dec()
}

// Heap is a keyed min-heap under LessFunc.
type Heap[T any] struct {
	data     data[T]
	key      KeyFunc[T]
	recorder Recorder
}

// New returns an empty heap; recorder may be nil.
func New[T any](key KeyFunc[T], less LessFunc[T], recorder Recorder) *Heap[T] {
	return &Heap[T]{data: data[T]{items: map[string]*item[T]{}, less: less}, key: key, recorder: recorder}
}

// AddOrUpdate inserts obj, or replaces the item with the same key and restores
// the heap order.
func (h *Heap[T]) AddOrUpdate(obj T) {
	k := h.key(obj)
	if it, ok := h.data.items[k]; ok {
		it.obj = obj
		heap.Fix(&h.data, it.index)
		return
	}
	it := &item[T]{obj: obj}
	h.data.items[k] = it
	heap.Push(&h.data, it)
	if h.recorder != nil {
		h.recorder.Inc()
	}
}

// Delete removes the item with obj's key and reports whether there was one.
func (h *Heap[T]) Delete(obj T) bool {
	k := h.key(obj)
	it, ok := h.data.items[k]
	if !ok {
		return false
	}
	heap.Remove(&h.data, it.index)
	delete(h.data.items, k)
	if h.recorder != nil {
		h.recorder.Dec()
	}
	return true
}

// Peek returns the head without removing it.
func (h *Heap[T]) Peek() (T, bool) {
	if len(h.data.queue) == 0 {
		var zero T
		return zero, false
	}
	return h.data.queue[0].obj, true
}

// Pop removes and returns the head.
func (h *Heap[T]) Pop() (T, bool) {
	if len(h.data.queue) == 0 {
		var zero T
		return zero, false
	}
	it := heap.Pop(&h.data).(*item[T])
	delete(h.data.items, h.key(it.obj))
	if h.recorder != nil {
		h.recorder.Dec()
	}
	return it.obj, true
}

// GetByKey returns the item stored under key.
func (h *Heap[T]) GetByKey(key string) (T, bool) {
	if it, ok := h.data.items[key]; ok {
		return it.obj, true
	}
	var zero T
	return zero, false
}

// Has reports whether an item with obj's key is held.
func (h *Heap[T]) Has(obj T) bool {
	_, ok := h.data.items[h.key(obj)]
	return ok
}

// Len is the number of items.
func (h *Heap[T]) Len() int { return len(h.data.queue) }

// List returns the items in heap-array order (not sorted).
func (h *Heap[T]) List() []T {
	out := make([]T, 0, len(h.data.queue))
	for _, it := range h.data.queue {
		out = append(out, it.obj)
	}
	return out
}
