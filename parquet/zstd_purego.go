//go:build !(linux && cgo)

package parquet

// libzstd stands for the system's Zstandard library, which only Linux builds with
// cgo load: elsewhere every page is decoded by the pure-Go decoder.
type libzstd struct{}

// loadLibzstd is always nil here.
func loadLibzstd() *libzstd { return nil }

// nativeZstdVersion is always "" here.
func nativeZstdVersion() string { return "" }

// decode is never called: there is no library.
func (*libzstd) decode(dst, src []byte) ([]byte, error) {
	panic("BUG: libzstd decode without libzstd")
}
