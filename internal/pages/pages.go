// Package pages readies fresh memory for the engine's structures that read it before
// they write it.
//
// A large slice comes from pages the process has not touched yet. The first read of
// such a page maps the kernel's shared zero page; the first write after it faults
// again to replace that mapping, and replacing a mapping of a process that runs on
// several cores makes the kernel interrupt the other cores to flush their address
// caches. A hash table that probes its slots before filling them does exactly this,
// once per page: in a virtual machine the interrupts cost a dozen times the table's
// own work (a fresh 256 MiB table probed page by page: 1.3 s against 0.1 s written
// first). Writable maps the pages writable in one system call before the first read,
// so each costs one page's clearing and no interrupt.
package pages

import "unsafe"

// minBytes is the smallest slice Writable asks the kernel about: below it the system
// call costs more than the faults it spares.
const minBytes = 32 << 10

// pageSize is the granularity the kernel maps at (the smallest page of every
// platform the engine runs on).
const pageSize = 4 << 10

// Writable makes the whole pages under s resident and writable, without changing
// what they hold. It is a hint: where the platform cannot, it does nothing.
func Writable[T any](s []T) {
	var zero T
	n := uintptr(len(s)) * unsafe.Sizeof(zero)
	if n < minBytes {
		return
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	first := (start + pageSize - 1) &^ (pageSize - 1)
	last := (start + n) &^ (pageSize - 1)
	if last <= first {
		return
	}
	populate(unsafe.Add(unsafe.Pointer(unsafe.SliceData(s)), first-start), int(last-first))
}
