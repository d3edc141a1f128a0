package source

import (
	"hash"
	"sync"
)

// SnapshotCache keeps the listings of the lake snapshots read last, by a key naming
// what defines each (its log entries, its metadata file): a statement that finds a
// table unchanged reuses its snapshot instead of reading it again. A listing is
// immutable once built, so statements share it.
type SnapshotCache struct {
	mu    sync.Mutex
	limit int
	order []string
	m     map[string]*Listing
}

// NewSnapshotCache keeps up to limit snapshots, dropping the oldest first.
func NewSnapshotCache(limit int) *SnapshotCache {
	return &SnapshotCache{limit: limit, m: map[string]*Listing{}}
}

// Get returns the snapshot cached under key, or nil.
func (c *SnapshotCache) Get(key string) *Listing {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[key]
}

// Put caches l under key, unless a snapshot is already there.
func (c *SnapshotCache) Put(key string, l *Listing) {
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
func (c *SnapshotCache) Drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order, c.m = nil, map[string]*Listing{}
}

// DigestField writes b length-prefixed, so that no two sequences of fields digest
// alike.
func DigestField(h hash.Hash, b []byte) { writeField(h, b) }
