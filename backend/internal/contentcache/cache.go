// Package contentcache is the one bounded cache of answers keyed by
// content: a parse, a compilation or a verification that is a pure
// function of some exact bytes, remembered under a key derived from those
// bytes (their SHA-256, or the bytes themselves). Because the key is the
// content, a changed byte is a miss and is computed again at once; the
// cache only ever spares recomputing the same answer.
//
// It guarantees:
//
//   - Bounds hold after every call: at most MaxEntries entries and, when
//     MaxBytes is set, at most MaxBytes of their declared sizes.
//   - Eviction is first in, first out: when an entry would exceed a
//     bound, the oldest entries added are dropped until it fits. A hit
//     does not refresh an entry (the answers are cheap to recompute and
//     the order stays independent of who reads what).
//   - An entry larger than MaxBytes on its own is never stored, and
//     evicts nothing.
//   - The first answer added for a key stays until it is evicted; adding
//     the same key again changes nothing (both answers are the same pure
//     function of the same content).
//   - It is safe for concurrent use.
//
// It is hand-written (a map and an intrusive FIFO list, ~100 lines)
// rather than taken from an LRU library because the users need FIFO with
// a byte bound and the first-answer-stays rule, which the common
// libraries (golang-lru, ristretto) do not offer together.
package contentcache

import (
	"container/list"
	"sync"
)

// Limits bound a Cache. MaxEntries must be at least 1; MaxBytes 0 means
// that sizes are not bounded.
type Limits struct {
	MaxEntries int
	MaxBytes   int64
}

// Cache maps keys derived from content to answers computed from it,
// within its Limits. Create one with New.
type Cache[K comparable, V any] struct {
	limits Limits

	mu    sync.Mutex
	m     map[K]*list.Element
	order list.List // of *entry[K, V], oldest first
	bytes int64
}

type entry[K comparable, V any] struct {
	key  K
	val  V
	size int64
}

// New returns an empty cache with limits l; MaxEntries below 1 is taken
// as 1 and a negative MaxBytes as 0 (unbounded).
func New[K comparable, V any](l Limits) *Cache[K, V] {
	if l.MaxEntries < 1 {
		l.MaxEntries = 1
	}
	if l.MaxBytes < 0 {
		l.MaxBytes = 0
	}
	return &Cache[K, V]{limits: l, m: map[K]*list.Element{}}
}

// Get returns the answer stored for k, if any. It does not change the
// eviction order.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[k]; ok {
		return e.Value.(*entry[K, V]).val, true
	}
	var zero V
	return zero, false
}

// Add stores v for k, of the given size (counted against MaxBytes; use
// 0 for a cache bounded by entries only), evicting the oldest entries as
// the limits require. It reports whether v is stored now: false when k
// already had an answer (which stays) or when size alone exceeds
// MaxBytes (nothing is evicted then).
func (c *Cache[K, V]) Add(k K, v V, size int64) bool {
	if size < 0 {
		size = 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; ok {
		return false
	}
	max := c.limits.MaxBytes
	if max > 0 && size > max {
		return false
	}
	for c.order.Len() > 0 && (c.order.Len() >= c.limits.MaxEntries || (max > 0 && c.bytes+size > max)) {
		oldest := c.order.Front()
		e := c.order.Remove(oldest).(*entry[K, V])
		delete(c.m, e.key)
		c.bytes -= e.size
	}
	c.m[k] = c.order.PushBack(&entry[K, V]{key: k, val: v, size: size})
	c.bytes += size
	return true
}

// Len is the number of entries stored.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// Bytes is the sum of the stored entries' sizes.
func (c *Cache[K, V]) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
