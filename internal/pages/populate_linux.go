package pages

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// populate asks Linux (5.14 or later) to fault the n bytes at p in as if written;
// older kernels refuse the advice and the pages fault on first use as before.
func populate(p unsafe.Pointer, n int) {
	_ = unix.Madvise(unsafe.Slice((*byte)(p), n), unix.MADV_POPULATE_WRITE)
}
