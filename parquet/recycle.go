package parquet

import (
	"context"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/loredb/lore/internal/lend"
)

// A Recycler lends the value buffers of the fixed-width and dictionary-index
// columns a reader decodes, batch after batch, and takes them back when its owner
// says which of them are dead. A scan's filters drop most rows of most batches: the
// columns they read, and whole batches they empty, are dead once they have run, and
// a consumer that keeps nothing of a batch once it has folded it in (an aggregate of
// counts, sums and extremes) lets go of the rest too. The next batches then reuse
// that memory, which the allocator would otherwise clear and the collector reclaim.
// A reader without one allocates each batch's buffers, which the engine may keep as
// long as it likes.
type Recycler struct {
	mu   sync.Mutex
	pool lend.Pool
}

// Recycle takes back every buffer lent since the last call except those under the
// arrays keep (their values, validity, children or dictionary, whole or sliced),
// which pass to whoever holds those arrays. Every other array made over a lent
// buffer must be unreachable: a scan calls it once a batch has been through its
// filters and projections, with the columns it hands on, or with none once its
// consumer has folded the batch in.
func (r *Recycler) Recycle(keep []arrow.Array) { r.RecycleBatch(keep, nil) }

// RecycleBatch is Recycle that also keeps sel, a lent selection vector handed on
// with the arrays keep.
func (r *Recycler) RecycleBatch(keep []arrow.Array, sel []int32) {
	var held []span
	for _, a := range keep {
		if a != nil {
			held = spansOf(held, a.Data())
		}
	}
	if cap(sel) > 0 {
		held = append(held, spanOf(sel))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pool.Return(func(b []byte) bool { return sharesMemory(held, b) })
}

// span is the memory [lo, hi) of one buffer.
type span struct{ lo, hi uintptr }

// spanOf is the memory of s up to its capacity.
func spanOf[T any](s []T) span {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	return span{lo, lo + uintptr(cap(s))*unsafe.Sizeof(*new(T))}
}

// spansOf appends the memory of every buffer under d.
func spansOf(out []span, d arrow.ArrayData) []span {
	if p, ok := d.(*array.Data); d == nil || ok && p == nil { // an absent dictionary is a nil *Data
		return out
	}
	for _, b := range d.Buffers() {
		if b == nil {
			continue
		}
		if buf := b.Buf(); cap(buf) > 0 {
			out = append(out, spanOf(buf))
		}
	}
	for _, c := range d.Children() {
		out = spansOf(out, c)
	}
	return spansOf(out, d.Dictionary())
}

// sharesMemory reports whether any of spans shares memory with b.
func sharesMemory(spans []span, b []byte) bool {
	m := spanOf(b)
	for _, s := range spans {
		if s.lo < m.hi && m.lo < s.hi {
			return true
		}
	}
	return false
}

// Bytes lends a buffer of n bytes, not cleared: for the reads' own buffers, and for
// arrays a consumer builds from a batch (a compaction's gathered values), which
// Recycle(keep) sees under the arrays that hold them.
func (r *Recycler) Bytes(n int) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pool.Take(n)
}

// Selection lends room for a selection vector of n rows, not cleared. Recycle(keep)
// cannot see a selection under the arrays it keeps: the one a batch hands on is
// named to RecycleBatch, and any other comes back at the next Recycle.
func (r *Recycler) Selection(n int) []int32 { return values[int32](r, n) }

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
	return lend.As[V](r.Bytes(lend.Bytes[V](n)))
}
