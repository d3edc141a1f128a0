//go:build unix

package s3

import (
	"os"
	"syscall"
)

// mapped maps the first n bytes of f read-only: a cache hit is then read by the page
// cache straight into the decoder's buffers, with no copy into a buffer of its own.
// Cache files are only ever replaced by a rename and removed, never truncated or
// written in place, so a mapping stays valid until release.
func mapped(f *os.File, n int) ([]byte, func(), error) {
	if n == 0 {
		return nil, func() {}, nil
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, n, syscall.PROT_READ, syscall.MAP_SHARED|mapPopulate)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { syscall.Munmap(b) }, nil
}
