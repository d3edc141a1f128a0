package parquet

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// TestPageClasses: a page buffer's class holds what was asked for with at most a
// quarter more (past the smallest class), a buffer goes back to the largest class it
// holds, and a buffer taken for a class goes back to that same class.
func TestPageClasses(t *testing.T) {
	sizes := []int{1, 1 << 16, 1<<16 + 1, 80 << 10, 80<<10 + 1, 983048 + decodeHeadroom, 9398029 + decodeHeadroom}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		sizes = append(sizes, 1+r.IntN(1<<24))
	}
	for _, n := range sizes {
		c, size := pageClassOf(n)
		if size < n {
			t.Fatalf("class %d of %d bytes holds %d", c, n, size)
		}
		if n > 1<<pageClassMin && size > n+n/4 {
			t.Fatalf("class %d of %d bytes is %d: more than a quarter over", c, n, size)
		}
		if in := pageClassIn(size); in != c {
			t.Fatalf("a buffer of class %d (%d bytes) goes back to class %d", c, size, in)
		}
		if in := pageClassIn(n); in >= 0 {
			if _, held := pageClassOf(n); in > c || (in == c && held > n) {
				t.Fatalf("a buffer of %d bytes goes back to class %d, which needs more", n, in)
			}
		}
		if b := growPage(nil, n); len(b) != n || cap(b) < n {
			t.Fatalf("growPage(%d): len %d cap %d", n, len(b), cap(b))
		} else {
			putPage(b)
		}
	}
	if _, size := pageClassOf(983048 + decodeHeadroom); size != 1280<<10 {
		t.Errorf("a 1 MiB page takes %d bytes, want 1.25 MiB", size)
	}
}

// TestPagePoolOutlivesCollections: a page buffer put back is handed out again after
// collections, which would have emptied a sync.Pool, and is let go once idle past
// pageIdle, whether a put or a collection finds it so.
func TestPagePoolOutlivesCollections(t *testing.T) {
	var p pagePool
	c, size := pageClassOf(3 << 20)
	b := make([]byte, size)
	p.put(c, b)
	runtime.GC()
	runtime.GC()
	runtime.GC()
	got := p.get(c)
	if got == nil || &got[0] != &b[0] {
		t.Fatalf("the buffer put back did not outlive three collections")
	}
	if p.get(c) != nil {
		t.Fatalf("a buffer was handed out twice")
	}

	p.put(c, got)
	cl := &p.classes[c]
	cl.mu.Lock()
	cl.trim(time.Now().Add(pageIdle / 2))
	kept := len(cl.free)
	cl.trim(time.Now().Add(2 * pageIdle))
	left := len(cl.free)
	cl.mu.Unlock()
	if kept != 1 || left != 0 {
		t.Errorf("trim kept %d buffers before pageIdle and %d after, want 1 and 0", kept, left)
	}
}

// TestStringSizeHint: a reader's first batch of strings is sized from its page (a
// PLAIN page's bytes less the values' lengths, a dictionary's average entry) rather
// than grown from nothing; later batches from the last one.
func TestStringSizeHint(t *testing.T) {
	plain := &stringColumn{}
	plain.raw = []byte("\x02\x00\x00\x00ab\x03\x00\x00\x00cde\x01\x00\x00\x00f")
	plain.left = 3
	if got := plain.sizeHint(8); got != 18 { // 2 bytes a row, 16 for 8 rows, an eighth more
		t.Errorf("PLAIN page: hint %d, want 18", got)
	}
	dict := &stringColumn{dictOffs: []int32{0, 4, 8}, dictData: []byte("abcdefgh")}
	dict.indexed, dict.left = true, 100
	if got := dict.sizeHint(8); got != 36 { // 4 bytes an entry
		t.Errorf("dictionary page: hint %d, want 36", got)
	}
	dict.hint = 7
	if got := dict.sizeHint(8); got != 7 {
		t.Errorf("after a batch: hint %d, want the last batch's 7", got)
	}
}
