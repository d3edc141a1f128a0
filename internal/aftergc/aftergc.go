// Package aftergc runs work after the garbage collector's cycles: the collector's
// pacing sets its next target from the live heap a collection left, and the page
// buffer pool lets go of buffers idle since.
package aftergc

import "runtime"

// Each calls f after the next collection, and after every one that follows for as
// long as f returns true. f runs on the goroutine that runs finalizers: it must be
// short and must not block.
func Each(f func() bool) {
	// A finalizer on a fresh object runs once a collection has found it
	// unreachable. 16 bytes keeps the object out of the tiny allocator, whose
	// blocks hold several objects and are freed only when all of them are.
	runtime.SetFinalizer(new([16]byte), func(*[16]byte) {
		if f() {
			Each(f)
		}
	})
}
