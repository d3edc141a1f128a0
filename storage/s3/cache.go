package s3

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loredb/lore/storage"
)

// DiskCache keeps ranges of objects (column chunks) on local disk, by (path, ETag,
// range), so that a second read of the same data, in this process or another, is
// served locally. An object with a new ETag is another key: what was cached of the
// old one is never read again and ages out. The cache holds at most Limit bytes: past
// it, the files least recently used go first. Each file carries a checksum; one that
// does not match (a torn write, a disk error) is removed and read again from the store.
type DiskCache struct {
	dir   string
	limit int64

	mu      sync.Mutex
	used    int64 // bytes, as last counted plus what was put since
	counted bool

	// verified are the cache files whose checksum this process has checked, by name:
	// Lore never writes a cache file in place (a new one is renamed over it), so the
	// same file (os.SameFile) with the same size and time needs no second check.
	verified  sync.Map // string → os.FileInfo
	nverified atomic.Int64
}

// maxVerified bounds the files remembered as verified; past it, all are forgotten.
const maxVerified = 1 << 16

// cacheMagic starts every cached file; then the length and the CRC-32C of the bytes.
const cacheMagic = "LORC"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// NewDiskCache keeps at most limit bytes under dir; a limit of 0 or less is no cache.
func NewDiskCache(dir string, limit int64) *DiskCache {
	if limit <= 0 {
		return nil
	}
	return &DiskCache{dir: dir, limit: limit}
}

func (c *DiskCache) file(path, etag string, g storage.Range) string {
	h := sha256.New()
	for _, s := range []string{path, etag} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	var n [16]byte
	binary.BigEndian.PutUint64(n[:8], uint64(g.Off))
	binary.BigEndian.PutUint64(n[8:], uint64(g.Len))
	h.Write(n[:])
	name := hex.EncodeToString(h.Sum(nil))
	return filepath.Join(c.dir, name[:2], name)
}

// Get returns the cached bytes of the range, when they are cached and whole, and the
// function that releases them (they are mapped from the cache file, not copied).
func (c *DiskCache) Get(path, etag string, g storage.Range) ([]byte, func(), bool) {
	if c == nil {
		return nil, nil, false
	}
	name := c.file(path, etag, g)
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() != g.Len+12 {
		os.Remove(name)
		return nil, nil, false
	}
	b, release, err := mapped(f, int(fi.Size()))
	if err != nil {
		return nil, nil, false
	}
	if !c.checked(name, fi) {
		if string(b[:4]) != cacheMagic || int64(binary.BigEndian.Uint32(b[4:8])) != g.Len ||
			crc32.Checksum(b[12:], castagnoli) != binary.BigEndian.Uint32(b[8:12]) {
			release()
			os.Remove(name)
			return nil, nil, false
		}
		c.remember(name, fi)
	}
	if now := time.Now(); now.Sub(fi.ModTime()) > touchAfter {
		os.Chtimes(name, now, now) // recently used
	}
	return b[12:], release, true
}

// checked reports whether the file fi describes was verified before.
func (c *DiskCache) checked(name string, fi os.FileInfo) bool {
	v, ok := c.verified.Load(name)
	if !ok {
		return false
	}
	was := v.(os.FileInfo)
	return os.SameFile(was, fi) && was.Size() == fi.Size() && was.ModTime().Equal(fi.ModTime())
}

func (c *DiskCache) remember(name string, fi os.FileInfo) {
	if c.nverified.Add(1) > maxVerified {
		c.verified.Clear()
		c.nverified.Store(0)
	}
	c.verified.Store(name, fi)
}

// touchAfter is how old a cache file's time may be before a hit sets it anew: the
// order of eviction needs no finer time than that, and a hit then costs no write.
const touchAfter = time.Minute

// Put caches the bytes of a range. A failure to write is no error: the cache is an
// optimisation, and the next read goes to the store.
func (c *DiskCache) Put(path, etag string, g storage.Range, b []byte) {
	if c == nil || int64(len(b)) != g.Len || g.Len > c.limit/4 || g.Len >= 1<<32 {
		return
	}
	f := c.file(path, etag, g)
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(f), ".put-*")
	if err != nil {
		return
	}
	var head [12]byte
	copy(head[:4], cacheMagic)
	binary.BigEndian.PutUint32(head[4:8], uint32(len(b)))
	binary.BigEndian.PutUint32(head[8:12], crc32.Checksum(b, castagnoli))
	_, err1 := tmp.Write(head[:])
	_, err2 := tmp.Write(b)
	err3 := tmp.Close()
	if err1 != nil || err2 != nil || err3 != nil || os.Rename(tmp.Name(), f) != nil {
		os.Remove(tmp.Name())
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.counted {
		c.used, c.counted = c.count(), true
	} else {
		c.used += int64(len(b)) + 12
	}
	if c.used > c.limit {
		c.used = c.evict()
	}
}

type cached struct {
	path string
	size int64
	used time.Time
}

func (c *DiskCache) walk() []cached {
	var out []cached
	filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			out = append(out, cached{p, fi.Size(), fi.ModTime()})
		}
		return nil
	})
	return out
}

func (c *DiskCache) count() int64 {
	var n int64
	for _, f := range c.walk() {
		n += f.size
	}
	return n
}

// evict removes the least recently used files until the cache holds at most three
// quarters of its limit, and returns what it holds then.
func (c *DiskCache) evict() int64 {
	files := c.walk()
	sort.Slice(files, func(i, j int) bool { return files[i].used.Before(files[j].used) })
	var n int64
	for _, f := range files {
		n += f.size
	}
	for _, f := range files {
		if n <= c.limit*3/4 {
			break
		}
		if os.Remove(f.path) == nil {
			n -= f.size
		}
	}
	return n
}
