// Package heap is a binary heap of items named by dense integer IDs. It
// performs exactly the container/heap operations upstream's
// pkg/scheduler/backend/heap performs (Push on insert, Fix on update, Remove
// on delete, Pop), so that items that tie under the order come out in the
// same order as in kube-scheduler; where upstream finds an item by its string
// key in a map, this heap finds it by ID in a slice.
//
// Items are ordered by a Key copied into the heap when an item is added or
// updated, so that comparisons read no item; the queue only changes what a
// key is made of while the item is out of the heap, or updates it.
package heap

// Instant is a time.Time's wall clock reading, ordered as Time.Before orders
// times without monotonic readings (the queue's clock gives none).
type Instant struct {
	Sec  int64
	Nsec int32
}

func (a Instant) before(b Instant) bool { return a.Sec < b.Sec || a.Sec == b.Sec && a.Nsec < b.Nsec }

// Key is what an item is ordered by: Expiry, Timestamp and Priority, with
// the instants' fields laid out to leave no padding. The heap keeps the
// item's ID in the key's last four bytes, which would be padding otherwise:
// an entry is then 40 bytes, not 48, and a sift moves less memory.
type Key struct {
	ExpirySec, TimestampSec   int64
	ExpiryNsec, TimestampNsec int32
	Priority                  int32
	id                        int32
}

// KeyOf returns the key of these values.
func KeyOf(expiry, timestamp Instant, priority int32) Key {
	return Key{ExpirySec: expiry.Sec, TimestampSec: timestamp.Sec, ExpiryNsec: expiry.Nsec, TimestampNsec: timestamp.Nsec, Priority: priority}
}

func (k *Key) expiry() Instant    { return Instant{k.ExpirySec, k.ExpiryNsec} }
func (k *Key) timestamp() Instant { return Instant{k.TimestampSec, k.TimestampNsec} }

// Order is how a heap compares keys.
type Order uint8

const (
	// ByPriority is PrioritySort: Priority descending, then Timestamp.
	ByPriority Order = iota
	// ByExpiry is by Expiry alone.
	ByExpiry
	// ByExpiryThenPriority is by Expiry, then as ByPriority.
	ByExpiryThenPriority
)

// Recorder is told when the number of items changes (a pending-pods gauge).
type Recorder interface {
	Inc()
	Dec()
}

type entry[T any] struct {
	key Key // key.id is the item's ID
	obj T
}

// Heap is a min-heap under its Order.
type Heap[T any] struct {
	queue []entry[T]
	// pos holds the items' indices in queue, under tag.
	pos      *Positions
	tag      Tag
	order    Order
	recorder Recorder
	// weigh, if set, is how many the recorder counts an item as (a pod group
	// counts its pods in scheduler_pending_pods); otherwise one.
	weigh func(T) int
}

// SetWeigh sets how many the recorder counts an item as.
func (h *Heap[T]) SetWeigh(weigh func(T) int) { h.weigh = weigh }

// record moves the recorder by obj's weight, up or down.
func (h *Heap[T]) record(obj T, up bool) {
	if h.recorder == nil {
		return
	}
	n := 1
	if h.weigh != nil {
		n = h.weigh(obj)
	}
	for ; n > 0; n-- {
		if up {
			h.recorder.Inc()
		} else {
			h.recorder.Dec()
		}
	}
}

// New returns an empty heap that keeps its items' indices in pos under tag,
// which no other holder of pos uses; recorder may be nil.
func New[T any](order Order, recorder Recorder, pos *Positions, tag Tag) *Heap[T] {
	return &Heap[T]{order: order, recorder: recorder, pos: pos, tag: tag}
}

func (h *Heap[T]) less(a, b *Key) bool {
	if h.order != ByPriority {
		if ea, eb := a.expiry(), b.expiry(); ea != eb {
			return ea.before(eb)
		}
		if h.order == ByExpiry {
			return false
		}
	}
	return lessByPriority(a, b)
}

// lessByPriority is less under ByPriority, small enough to inline: activeQ's
// sifts, the most frequent, then call nothing per comparison.
func lessByPriority(a, b *Key) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	return a.TimestampSec < b.TimestampSec || a.TimestampSec == b.TimestampSec && a.TimestampNsec < b.TimestampNsec
}

// up and down are container/heap's, moving the item through a hole instead
// of swapping at each level: the same comparisons, the same final order.
// They write the Positions entries themselves (as Positions.Set does), from
// a slice header loaded once per sift.
func (h *Heap[T]) up(j int) {
	q, pos, tag := h.queue, h.pos.p, int32(h.tag)
	e := q[j]
	byPriority := h.order == ByPriority
	for {
		i := (j - 1) / 2 // parent
		if i == j {
			break
		}
		if byPriority && !lessByPriority(&e.key, &q[i].key) || !byPriority && !h.less(&e.key, &q[i].key) {
			break
		}
		q[j] = q[i]
		pos[q[j].key.id] = int32(j+1)<<2 | tag
		j = i
	}
	q[j] = e
	pos[e.key.id] = int32(j+1)<<2 | tag
}

func (h *Heap[T]) down(i0, n int) bool {
	q, pos, tag := h.queue, h.pos.p, int32(h.tag)
	e := q[i0]
	i := i0
	byPriority := h.order == ByPriority
	for {
		j1 := 2*i + 1
		if j1 >= n || j1 < 0 { // j1 < 0 after int overflow
			break
		}
		j := j1 // left child
		if j2 := j1 + 1; j2 < n {
			if byPriority && lessByPriority(&q[j2].key, &q[j1].key) || !byPriority && h.less(&q[j2].key, &q[j1].key) {
				j = j2 // = 2*i + 2  // right child
			}
		}
		if byPriority && !lessByPriority(&q[j].key, &e.key) || !byPriority && !h.less(&q[j].key, &e.key) {
			break
		}
		q[i] = q[j]
		pos[q[i].key.id] = int32(i+1)<<2 | tag
		i = j
	}
	q[i] = e
	pos[e.key.id] = int32(i+1)<<2 | tag
	return i > i0
}

// swap is container/heap's Swap.
func (h *Heap[T]) swap(i, j int) {
	q := h.queue
	q[i], q[j] = q[j], q[i]
	h.pos.Set(q[i].key.id, h.tag, i)
	h.pos.Set(q[j].key.id, h.tag, j)
}

// removeLast is the Pop method container/heap calls last.
func (h *Heap[T]) removeLast() T {
	n := len(h.queue) - 1
	e := h.queue[n]
	h.queue[n] = entry[T]{}
	h.queue = h.queue[:n]
	h.pos.Clear(e.key.id)
	return e.obj
}

func (h *Heap[T]) index(id int32) int { return h.pos.Get(id, h.tag) }

// AddOrUpdate inserts obj under id, or replaces the item with this ID and
// restores the heap order (heap.Fix).
func (h *Heap[T]) AddOrUpdate(id int32, key Key, obj T) {
	if i := h.index(id); i >= 0 {
		key.id = id
		h.queue[i] = entry[T]{key: key, obj: obj}
		if !h.down(i, len(h.queue)) {
			h.up(i)
		}
		return
	}
	h.pos.Claim(id)
	key.id = id
	h.queue = append(h.queue, entry[T]{key: key, obj: obj})
	h.up(len(h.queue) - 1)
	h.record(obj, true)
}

// Delete removes the item with this ID (heap.Remove) and reports whether
// there was one.
func (h *Heap[T]) Delete(id int32) bool {
	i := h.index(id)
	if i < 0 {
		return false
	}
	if n := len(h.queue) - 1; n != i {
		h.swap(i, n)
		if !h.down(i, n) {
			h.up(i)
		}
	}
	h.record(h.removeLast(), false)
	return true
}

// Peek returns the head without removing it.
func (h *Heap[T]) Peek() (T, bool) {
	if len(h.queue) == 0 {
		var zero T
		return zero, false
	}
	return h.queue[0].obj, true
}

// Pop removes and returns the head (heap.Pop).
func (h *Heap[T]) Pop() (T, bool) {
	if len(h.queue) == 0 {
		var zero T
		return zero, false
	}
	n := len(h.queue) - 1
	h.swap(0, n)
	h.down(0, n)
	obj := h.removeLast()
	h.record(obj, false)
	return obj, true
}

// Get returns the item with this ID.
func (h *Heap[T]) Get(id int32) (T, bool) {
	if i := h.index(id); i >= 0 {
		return h.queue[i].obj, true
	}
	var zero T
	return zero, false
}

// Has reports whether an item with this ID is held.
func (h *Heap[T]) Has(id int32) bool { return h.index(id) >= 0 }

// Len is the number of items.
func (h *Heap[T]) Len() int { return len(h.queue) }

// List returns the items in heap-array order (not sorted).
func (h *Heap[T]) List() []T {
	out := make([]T, len(h.queue))
	for i := range h.queue {
		out[i] = h.queue[i].obj
	}
	return out
}

// Each calls fn for every item, in heap-array order.
func (h *Heap[T]) Each(fn func(T)) {
	for i := range h.queue {
		fn(h.queue[i].obj)
	}
}
