package parquet

import (
	"context"
	"sync"
	"unsafe"
)

// A Recycler lends the value buffers of the fixed-width columns a reader decodes,
// batch after batch, and takes them back when its owner says every batch handed out
// so far is dead. A scan whose consumer keeps nothing of a batch once it has folded
// it in (an aggregate of counts, sums and extremes) reads through one: its batches
// reuse the memory of the ones before, which the allocator would otherwise clear and
// the collector reclaim. A reader without one allocates each batch's buffers, which
// the engine may keep as long as it likes.
type Recycler struct {
	mu   sync.Mutex
	free [][]byte
	lent [][]byte
}

// recyclerFree bounds the buffers a Recycler keeps: a batch's columns, a few times
// over.
const recyclerFree = 64

// Recycle takes back every buffer lent since the last call: the batches they went
// into must be unreachable.
func (r *Recycler) Recycle() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.lent {
		if len(r.free) < recyclerFree {
			r.free = append(r.free, b)
		}
	}
	clear(r.lent)
	r.lent = r.lent[:0]
}

// take lends a buffer of at least n bytes, not cleared.
func (r *Recycler) take(n int) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b []byte
	for i := len(r.free) - 1; i >= 0; i-- {
		if cap(r.free[i]) >= n {
			b = r.free[i][:n]
			r.free[i] = r.free[len(r.free)-1]
			r.free[len(r.free)-1] = nil
			r.free = r.free[:len(r.free)-1]
			break
		}
	}
	if b == nil {
		b = make([]byte, n)
	}
	r.lent = append(r.lent, b)
	return b
}

type recyclerKey struct{}

// WithRecycler returns ctx whose reads lend their batches' value buffers from r.
func WithRecycler(ctx context.Context, r *Recycler) context.Context {
	return context.WithValue(ctx, recyclerKey{}, r)
}

func recyclerFrom(ctx context.Context) *Recycler {
	r, _ := ctx.Value(recyclerKey{}).(*Recycler)
	return r
}

// values returns n values of type V for one batch: lent by r, or allocated when r
// is nil. Lent values are not cleared: the caller writes every one it hands on.
func values[V any](r *Recycler, n int) []V {
	if r == nil || n == 0 {
		return make([]V, n)
	}
	var zero V
	b := r.take(n * int(unsafe.Sizeof(zero)))
	return unsafe.Slice((*V)(unsafe.Pointer(unsafe.SliceData(b))), n)
}
