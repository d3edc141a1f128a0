package lore

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/plan"
)

// resultCache keeps the results of queries by everything that decides them (SPEC
// §9): the statement's text, the settings that change results, and for every table it
// reads the table's name, location and pinned source version and the statistics
// record it was planned with, and every location it reads by path with its version,
// plus the generation of the catalog as this engine last changed it. A source that
// moved has another version, so a statement over it is computed again, never served
// from the cache; a catalog change this engine makes empties the cache. A statement
// that reads the current time, or a source whose version cannot be taken, is not
// kept. Entries are held by bytes,
// least recently used first out. Results are Arrow batches, immutable, shared by every
// hit.
type resultCache struct {
	max int64

	mu    sync.Mutex
	used  int64
	order *list.List // front = most recently used; values are *cachedResult
	byKey map[string]*list.Element

	gen atomic.Uint64 // bumped by every catalog change this engine makes
}

// cachedResult is one kept result.
type cachedResult struct {
	key         string
	schema      *arrow.Schema
	batches     []arrow.Record
	bytes       int64
	from        string // the id of the query that computed it
	approximate []Approximation
}

func newResultCache(max int64) *resultCache {
	return &resultCache{max: max, order: list.New(), byKey: map[string]*list.Element{}}
}

// catalogChanged empties the cache: what a statement names may now be another table.
func (c *resultCache) catalogChanged() { c.clear() }

// clear empties the cache and returns what it held. The generation moves on, so a
// statement that computed its key before is not kept afterwards either.
func (c *resultCache) clear() (entries int, bytes int64) {
	c.gen.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	entries, bytes = c.order.Len(), c.used
	c.order.Init()
	clear(c.byKey)
	c.used = 0
	return entries, bytes
}

// ClearResultCache empties the result cache (a server's DELETE /v1/cache) and
// returns how many results and bytes it dropped. Only results go: footers, the disk
// cache of object-store reads and statistics records are knowledge of sources, kept
// current by their versions, and stay.
func (e *Engine) ClearResultCache() (entries int, bytes int64) { return e.results.clear() }

// key is the cache key of a query over named tables and locations read by path, or
// "" when it must not be kept.
func (c *resultCache) key(text string, settings map[string]string, tables map[string]*plan.TableRef, paths []*plan.TableRef) string {
	if c.max <= 0 {
		return ""
	}
	h := sha256.New()
	field := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	field(strconv.FormatUint(c.gen.Load(), 10))
	field(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(text), ";")))
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		if k == "result_cache" || k == "memory_limit" {
			continue // they change how a result is made, not what it is
		}
		field(k)
		field(settings[k])
	}
	source := func(name string, t *plan.TableRef) bool {
		if t.Version.IdentitySHA256 == "" {
			return false // a source whose version could not be taken
		}
		field(name)
		field(t.Location)
		field(t.Version.Kind + ":" + t.Version.IdentitySHA256)
		computed := int64(0)
		if t.Stats != nil {
			computed = t.Stats.ComputedAtMS
		}
		field(strconv.FormatInt(computed, 10))
		return true
	}
	for _, k := range slices.Sorted(maps.Keys(tables)) {
		if !source(k, tables[k]) {
			return ""
		}
	}
	for _, t := range paths {
		if !source("", t) {
			return ""
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// get returns the result kept under key, or nil.
func (c *resultCache) get(key string) *cachedResult {
	if key == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*cachedResult)
	}
	return nil
}

// accepts is the largest result, in bytes as put counts them, the cache keeps: one
// result may not push out most others.
func (c *resultCache) accepts() int64 { return c.max / 4 }

// put keeps a result computed by query id under key, when it fits.
func (c *resultCache) put(key string, res *Result, id string, approximate []Approximation) {
	if key == "" || res == nil {
		return
	}
	r := &cachedResult{key: key, schema: res.Schema, batches: res.Batches, from: id, approximate: approximate}
	for _, b := range res.Batches {
		for _, col := range b.Columns() {
			r.bytes += int64(arraySize(col.Data()))
		}
	}
	if r.bytes > c.accepts() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[key]; ok {
		return
	}
	c.byKey[key] = c.order.PushFront(r)
	c.used += r.bytes
	for c.used > c.max {
		last := c.order.Back()
		old := last.Value.(*cachedResult)
		c.order.Remove(last)
		delete(c.byKey, old.key)
		c.used -= old.bytes
	}
}

// arraySize is the bytes an array's buffers hold, its children's included.
func arraySize(d arrow.ArrayData) int {
	n := 0
	for _, b := range d.Buffers() {
		if b != nil {
			n += b.Len()
		}
	}
	for _, ch := range d.Children() {
		n += arraySize(ch)
	}
	if dict, ok := d.Dictionary().(*array.Data); ok && dict != nil {
		n += arraySize(dict)
	}
	return n
}
