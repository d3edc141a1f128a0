package parquet

import (
	"math/rand/v2"
	"testing"
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
