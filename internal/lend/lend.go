// Package lend keeps the buffers of one batch for the next: a Pool lends byte
// buffers and takes back those its owner says are dead, so that batch after batch
// reuses memory the allocator would otherwise clear and the collector reclaim. The
// scan's Recycler (parquet) and the kernels' Scratch are made of one.
package lend

import "unsafe"

// maxFree bounds the buffers a Pool keeps: a batch's columns, a few times over.
const maxFree = 64

// A Pool lends buffers and takes them back. It is not safe for concurrent use.
type Pool struct {
	free [][]byte
	lent [][]byte
}

// Take lends a buffer of n bytes, not cleared.
func (p *Pool) Take(n int) []byte {
	for i := len(p.free) - 1; i >= 0; i-- {
		if cap(p.free[i]) >= n {
			b := p.free[i][:n]
			p.free[i] = p.free[len(p.free)-1]
			p.free[len(p.free)-1] = nil
			p.free = p.free[:len(p.free)-1]
			p.lent = append(p.lent, b)
			return b
		}
	}
	b := make([]byte, n)
	p.lent = append(p.lent, b)
	return b
}

// Return takes back every buffer lent since the last Return except those held says
// are still in use (none when held is nil).
func (p *Pool) Return(held func(b []byte) bool) {
	for _, b := range p.lent {
		if len(p.free) < maxFree && (held == nil || !held(b)) {
			p.free = append(p.free, b)
		}
	}
	clear(p.lent)
	p.lent = p.lent[:0]
}

// Values lends n values of type V from p, not cleared, or allocates them (cleared)
// when p is nil.
func Values[V any](p *Pool, n int) []V {
	if p == nil || Bytes[V](n) == 0 {
		return make([]V, n)
	}
	return As[V](p.Take(Bytes[V](n)))
}

// Bytes is the size of n values of type V.
func Bytes[V any](n int) int {
	var zero V
	return n * int(unsafe.Sizeof(zero))
}

// As views a buffer of Bytes[V](n) bytes (n > 0) as n values of type V.
func As[V any](b []byte) []V {
	return unsafe.Slice((*V)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/Bytes[V](1))
}
