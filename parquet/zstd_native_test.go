//go:build linux && cgo

package parquet

import "testing"

// TestOpenLibzstdFallsBack loads libraries that are not a usable libzstd: a missing
// file, and a library without its functions. Neither is used.
func TestOpenLibzstdFallsBack(t *testing.T) {
	for _, name := range []string{"libzstd-not-there.so.9", "libc.so.6"} {
		if z := openLibzstd(name); z != nil {
			t.Errorf("%s loaded as libzstd %d", name, z.version)
		}
	}
}
