package search

import (
	"container/heap"
	"slices"
)

// topK keeps the k first items seen in the given order (negative: a comes
// first) in O(n log k): a heap whose root is the worst item kept. Search
// pages and facet values both need "the best few of very many".
type topK[T any] struct {
	k     int
	order func(a, b T) int
	items []T
}

func (h *topK[T]) Len() int           { return len(h.items) }
func (h *topK[T]) Less(i, j int) bool { return h.order(h.items[i], h.items[j]) > 0 }
func (h *topK[T]) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *topK[T]) Push(x any)         { h.items = append(h.items, x.(T)) }
func (h *topK[T]) Pop() any {
	n := len(h.items)
	x := h.items[n-1]
	h.items = h.items[:n-1]
	return x
}

func (h *topK[T]) offer(x T) {
	if len(h.items) < h.k {
		heap.Push(h, x)
		return
	}
	if h.k > 0 && h.order(x, h.items[0]) < 0 {
		h.items[0] = x
		heap.Fix(h, 0)
	}
}

// full reports whether k items are kept, the worst at items[0].
func (h *topK[T]) full() bool { return len(h.items) >= h.k }

// sorted returns the items kept, first first.
func (h *topK[T]) sorted() []T {
	slices.SortFunc(h.items, h.order)
	return h.items
}
