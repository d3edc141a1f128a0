package source

import (
	"container/list"
	"context"
	"sync"

	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/storage"
)

// identity is what makes a cached footer valid for a file: the same path with the same
// size, modification time, ETag and version, and on local disk the same inode change
// time and inode (a file rewritten in place with its size and modification time
// restored has a new change time).
type identity struct {
	path, etag, version string
	size                int64
	mtime, ctime        int64 // Unix nanoseconds; 0 when unknown
	inode, device       uint64
}

func identityOf(o storage.ObjectInfo) identity {
	return identity{path: o.Path, etag: o.ETag, version: o.Version, size: o.Size,
		mtime: unixNano(o.ModTime), ctime: unixNano(o.ChangeTime), inode: o.Inode, device: o.Device}
}

// footerCache is a process-wide LRU of opened footers. Entries hold no open reader:
// reads bind a fresh one with parquet.File.WithReader.
type footerCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // front = most recently used; values are *cacheEntry
	byID  map[identity]*list.Element
}

type cacheEntry struct {
	id   identity
	file *parquet.File
}

// FooterCacheSize bounds the number of footers kept.
const FooterCacheSize = 4096

var footers = &footerCache{max: FooterCacheSize, order: list.New(), byID: map[identity]*list.Element{}}

func (c *footerCache) get(id identity) *parquet.File {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byID[id]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*cacheEntry).file
	}
	return nil
}

func (c *footerCache) put(id identity, f *parquet.File) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byID[id]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.byID[id] = c.order.PushFront(&cacheEntry{id: id, file: f})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byID, last.Value.(*cacheEntry).id)
	}
}

// loadFooter returns the footer of the file o, from the cache or by opening it.
func loadFooter(ctx context.Context, store storage.Store, o storage.ObjectInfo) (*parquet.File, error) {
	id := identityOf(o)
	if f := footers.get(id); f != nil {
		return f, nil
	}
	r, err := storage.OpenInfo(ctx, store, o)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := parquet.Open(ctx, r, o.Path)
	if err != nil {
		return nil, err
	}
	footers.put(id, f)
	return f, nil
}

// DropCachedFooters empties the footer cache, so that the next reads open every
// footer again (cold-cache measurements; shedding memory).
func DropCachedFooters() {
	footers.mu.Lock()
	defer footers.mu.Unlock()
	footers.order.Init()
	clear(footers.byID)
}
