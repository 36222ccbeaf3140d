// Package heap is a binary heap of items named by dense integer IDs. It
// performs exactly the container/heap operations upstream's
// pkg/scheduler/backend/heap performs (Push on insert, Fix on update, Remove
// on delete, Pop), so that items that tie under the less function come out in
// the same order as in kube-scheduler; where upstream finds an item by its
// string key in a map, this heap finds it by ID in a slice.
package heap

import "container/heap"

// LessFunc orders two items.
type LessFunc[T any] func(a, b T) bool

// IDFunc names an item; at most one item per ID is held. IDs are small
// non-negative integers (an index into per-ID slices).
type IDFunc[T any] func(obj T) int32

// Recorder is told when the number of items changes (a pending-pods gauge).
type Recorder interface {
	Inc()
	Dec()
}

type data[T any] struct {
	queue []T
	// pos[id] is the item's index in queue plus one; 0 means absent.
	pos  []int32
	id   IDFunc[T]
	less LessFunc[T]
}

func (h *data[T]) Len() int           { return len(h.queue) }
func (h *data[T]) Less(i, j int) bool { return h.less(h.queue[i], h.queue[j]) }
func (h *data[T]) Swap(i, j int) {
	h.queue[i], h.queue[j] = h.queue[j], h.queue[i]
	h.pos[h.id(h.queue[i])] = int32(i + 1)
	h.pos[h.id(h.queue[j])] = int32(j + 1)
}
func (h *data[T]) Push(x any) {
	obj := x.(T)
	h.queue = append(h.queue, obj)
	h.pos[h.id(obj)] = int32(len(h.queue))
}
func (h *data[T]) Pop() any {
	n := len(h.queue) - 1
	obj := h.queue[n]
	var zero T
	h.queue[n] = zero
	h.queue = h.queue[:n]
	h.pos[h.id(obj)] = 0
	return obj
}

// Heap is a min-heap under LessFunc.
type Heap[T any] struct {
	data     data[T]
	recorder Recorder
}

// New returns an empty heap; recorder may be nil.
func New[T any](id IDFunc[T], less LessFunc[T], recorder Recorder) *Heap[T] {
	return &Heap[T]{data: data[T]{id: id, less: less}, recorder: recorder}
}

func (h *Heap[T]) index(id int32) int {
	if int(id) >= len(h.data.pos) {
		return -1
	}
	return int(h.data.pos[id]) - 1
}

// AddOrUpdate inserts obj, or replaces the item with the same ID and
// restores the heap order.
func (h *Heap[T]) AddOrUpdate(obj T) {
	id := h.data.id(obj)
	if i := h.index(id); i >= 0 {
		h.data.queue[i] = obj
		heap.Fix(&h.data, i)
		return
	}
	if n := int(id) + 1; n > len(h.data.pos) {
		h.data.pos = append(h.data.pos, make([]int32, max(n-len(h.data.pos), len(h.data.pos)/2))...)
	}
	heap.Push(&h.data, obj)
	if h.recorder != nil {
		h.recorder.Inc()
	}
}

// Delete removes the item with this ID and reports whether there was one.
func (h *Heap[T]) Delete(id int32) bool {
	i := h.index(id)
	if i < 0 {
		return false
	}
	heap.Remove(&h.data, i)
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
	return h.data.queue[0], true
}

// Pop removes and returns the head.
func (h *Heap[T]) Pop() (T, bool) {
	if len(h.data.queue) == 0 {
		var zero T
		return zero, false
	}
	obj := heap.Pop(&h.data).(T)
	if h.recorder != nil {
		h.recorder.Dec()
	}
	return obj, true
}

// Get returns the item with this ID.
func (h *Heap[T]) Get(id int32) (T, bool) {
	if i := h.index(id); i >= 0 {
		return h.data.queue[i], true
	}
	var zero T
	return zero, false
}

// Has reports whether an item with this ID is held.
func (h *Heap[T]) Has(id int32) bool { return h.index(id) >= 0 }

// Len is the number of items.
func (h *Heap[T]) Len() int { return len(h.data.queue) }

// List returns the items in heap-array order (not sorted).
func (h *Heap[T]) List() []T { return append([]T(nil), h.data.queue...) }
