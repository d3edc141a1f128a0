package lore

import (
	"sync"

	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage"
)

// maxListings bounds the listings kept; past it the cache starts over.
const maxListings = 1024

// listingCache keeps the latest listing of each location whose store watches it
// (storage.Watcher: local disk, where the kernel reports changes), with the stamp
// taken before it was read. While the stamp is unchanged the listing is what reading
// the location again would give — the same files, sizes and change markers, so the
// same version — and a statement is pinned to it without listing, reading a Delta
// log or an Iceberg metadata file again. The first change under the location makes
// the next statement read it afresh, so the staleness rule (SPEC §4) holds as if
// every statement had listed.
//
// A location is watched from its second resolution on: setting a watch up walks the
// location's directories once more, and a process that resolves a location once —
// a lore sql -c answering from statistics — would pay for it and never use it.
type listingCache struct {
	mu    sync.Mutex
	byKey map[string]watchedListing
	seen  map[string]bool // keys resolved once, without a watch
}

type watchedListing struct {
	l     *source.Listing
	stamp storage.Stamp
}

// resolve returns the listing read() gives for location in store, from the cache
// when nothing under location changed since it was read.
func (c *listingCache) resolve(store storage.Store, key, location string, read func() (*source.Listing, error)) (*source.Listing, error) {
	c.mu.Lock()
	_, cached := c.byKey[key]
	first := !cached && !c.seen[key]
	if first {
		if c.seen == nil || len(c.seen) >= maxListings {
			c.seen = map[string]bool{}
		}
		c.seen[key] = true
	}
	c.mu.Unlock()
	if first {
		return read()
	}
	stamp, ok := storage.Watch(store, location)
	if !ok {
		return read()
	}
	c.mu.Lock()
	w, hit := c.byKey[key]
	c.mu.Unlock()
	if hit && stamp.UnchangedSince(w.stamp) {
		return w.l, nil
	}
	l, err := read()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.byKey == nil || len(c.byKey) >= maxListings {
		c.byKey = map[string]watchedListing{}
	}
	c.byKey[key] = watchedListing{l: l, stamp: stamp}
	c.mu.Unlock()
	return l, nil
}

// clear forgets every listing.
func (c *listingCache) clear() {
	c.mu.Lock()
	c.byKey, c.seen = nil, nil
	c.mu.Unlock()
}
