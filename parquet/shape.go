package parquet

import (
	"crypto/sha256"
	"encoding/binary"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// shape is what a footer's schema maps to, apart from its row groups: the Parquet
// schema, the Arrow schema in Lore's types and what File knows of each column. The
// files of a table mostly share one schema, so Open builds a shape once for every
// footer whose schema bytes are the same and lets their Files share it: a table of
// a thousand small files then keeps one schema live, not a thousand, and opening
// the rest skips mapping it. A shape is immutable.
type shape struct {
	sch    *schema.Schema
	schema *arrow.Schema
	cols   []column
}

// shapeKey identifies a schema by the footer bytes it is mapped from: the Thrift
// list of schema elements and the ARROW:schema value the library reads types from.
type shapeKey [sha256.Size]byte

// keyOf is the key of a footer whose schema list is elements and whose ARROW:schema
// value is arrowSchema (nil when it has none).
func keyOf(elements, arrowSchema []byte) shapeKey {
	h := sha256.New()
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(elements)))
	h.Write(n[:])
	h.Write(elements)
	h.Write(arrowSchema)
	var k shapeKey
	h.Sum(k[:0])
	return k
}

// shapeCache holds the shapes of the schemas opened lately.
type shapeCache struct {
	mu sync.Mutex
	m  map[shapeKey]*shape
}

// maxShapes bounds the cache; past it, it starts again empty (files already open
// keep their shapes).
const maxShapes = 1024

var shapes = &shapeCache{m: map[shapeKey]*shape{}}

// get is the shape of key, made by build when the cache has none. A shape that
// fails to build is not kept.
func (c *shapeCache) get(key shapeKey, build func() (*shape, error)) (*shape, error) {
	c.mu.Lock()
	sh := c.m[key]
	c.mu.Unlock()
	if sh != nil {
		return sh, nil
	}
	sh, err := build()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev := c.m[key]; prev != nil {
		return prev, nil
	}
	if len(c.m) >= maxShapes {
		clear(c.m)
	}
	c.m[key] = sh
	return sh, nil
}

// lazyMeta is the library's metadata of a footer, decoded from the footer's bytes on
// first use and then kept.
type lazyMeta struct {
	footer []byte
	once   sync.Once
	md     *metadata.FileMetaData
	err    error
}

// metadata is the library's metadata of the file's footer.
func (f *File) metadata() (*metadata.FileMetaData, error) {
	m := f.meta
	m.once.Do(func() {
		defer func() {
			if p := recover(); p != nil {
				m.md, m.err = nil, corrupt("cannot read footer of %q: %v", f.name, panicText(p))
			}
		}()
		m.md, m.err = metadata.NewFileMetaData(m.footer, nil)
		if m.err != nil {
			m.err = corrupt("cannot read footer of %q: %v", f.name, m.err)
			return
		}
		m.md.SetSourceFileSize(f.size)
	})
	return m.md, m.err
}
