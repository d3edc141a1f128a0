package source

import (
	"hash"
	"sync"
)

// Cache keeps what lake readers read last (snapshots, parsed metadata) by a key
// naming what defines it (log entries, a metadata file and its change marker): a
// statement that finds a table unchanged reuses it instead of reading it again. What
// is cached is immutable once built, so statements share it.
type Cache[V any] struct {
	mu    sync.Mutex
	limit int
	order []string
	m     map[string]V
}

// NewCache keeps up to limit entries, dropping the oldest first.
func NewCache[V any](limit int) *Cache[V] {
	return &Cache[V]{limit: limit, m: map[string]V{}}
}

// NewSnapshotCache is a cache of lake snapshots.
func NewSnapshotCache(limit int) *Cache[*Listing] { return NewCache[*Listing](limit) }

// Get returns what is cached under key.
func (c *Cache[V]) Get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[key]
	return v, ok
}

// Put caches l under key, unless something is already there.
func (c *Cache[V]) Put(key string, l V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; ok {
		return
	}
	if len(c.order) >= c.limit {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	c.order = append(c.order, key)
	c.m[key] = l
}

// Drop empties the cache (tests, benchmarks of cold reads).
func (c *Cache[V]) Drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order, c.m = nil, map[string]V{}
}

// DigestField writes b length-prefixed, so that no two sequences of fields digest
// alike.
func DigestField(h hash.Hash, b []byte) { writeField(h, b) }
