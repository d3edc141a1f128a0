package parquet

import (
	"sync"
	"time"

	"github.com/loredb/lore/internal/aftergc"
)

// pageIdle is how long a page buffer may sit in the pool unused before it is let
// go.
const pageIdle = time.Second

// A pagePool keeps page buffers by size class until they have been idle for
// pageIdle. Unlike a sync.Pool, a collection does not empty it: a scan allocates
// batch after batch over a small live heap, and under a collector paced for a
// small heap (collections every few tens of MB allocated) a sync.Pool would hand
// the buffers of pages of several MB to the collector between one column chunk and
// the next, and every chunk would allocate and clear them again. Buffers idle past
// pageIdle are dropped when a buffer is put back and after every collection, so an
// engine between statements holds none for long.
type pagePool struct {
	classes [pageClasses]pageClass
	once    sync.Once
}

type pageClass struct {
	mu   sync.Mutex
	free []pooledPage // oldest first
}

type pooledPage struct {
	b  []byte
	at time.Time // when it came back
}

// get takes the buffer of class c put back last, or returns nil.
func (p *pagePool) get(c int) []byte {
	cl := &p.classes[c]
	cl.mu.Lock()
	defer cl.mu.Unlock()
	n := len(cl.free)
	if n == 0 {
		return nil
	}
	b := cl.free[n-1].b
	cl.free[n-1] = pooledPage{}
	cl.free = cl.free[:n-1]
	return b
}

// put keeps b, a buffer of class c, and lets go of the class's idle ones.
func (p *pagePool) put(c int, b []byte) {
	p.once.Do(p.trimAfterCollections)
	now := time.Now()
	cl := &p.classes[c]
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.trim(now)
	cl.free = append(cl.free, pooledPage{b: b, at: now})
}

// trim drops the buffers idle past pageIdle at now.
func (cl *pageClass) trim(now time.Time) {
	k := 0
	for k < len(cl.free) && now.Sub(cl.free[k].at) > pageIdle {
		k++
	}
	if k == 0 {
		return
	}
	n := copy(cl.free, cl.free[k:])
	clear(cl.free[n:])
	cl.free = cl.free[:n]
}

// trimAfterCollections trims every class after each collection (the runtime
// collects at least every two minutes).
func (p *pagePool) trimAfterCollections() {
	aftergc.Each(func() bool {
		now := time.Now()
		for c := range p.classes {
			cl := &p.classes[c]
			cl.mu.Lock()
			cl.trim(now)
			cl.mu.Unlock()
		}
		return true
	})
}
