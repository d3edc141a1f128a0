//go:build linux && cgo

package parquet

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>

// The few entry points of libzstd Lore calls, declared here rather than taken from
// zstd.h so that building needs no headers and running needs no library: they are
// looked up with dlsym and called through these pointers.
typedef void *(*lore_zstd_create_fn)(void);
typedef size_t (*lore_zstd_free_fn)(void *);
typedef size_t (*lore_zstd_decompress_fn)(void *, void *, size_t, const void *, size_t);
typedef unsigned (*lore_zstd_is_error_fn)(size_t);
typedef const char *(*lore_zstd_error_name_fn)(size_t);
typedef unsigned (*lore_zstd_version_fn)(void);

typedef struct {
	lore_zstd_create_fn create;
	lore_zstd_free_fn free;
	lore_zstd_decompress_fn decompress;
	lore_zstd_is_error_fn is_error;
	lore_zstd_error_name_fn error_name;
	lore_zstd_version_fn version;
} lore_zstd;

// lore_zstd_open loads the library and fills z; it returns 0 when the library or one
// of its symbols is missing (the handle is then closed again).
static int lore_zstd_open(const char *name, lore_zstd *z) {
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		return 0;
	}
	z->create = (lore_zstd_create_fn)dlsym(h, "ZSTD_createDCtx");
	z->free = (lore_zstd_free_fn)dlsym(h, "ZSTD_freeDCtx");
	z->decompress = (lore_zstd_decompress_fn)dlsym(h, "ZSTD_decompressDCtx");
	z->is_error = (lore_zstd_is_error_fn)dlsym(h, "ZSTD_isError");
	z->error_name = (lore_zstd_error_name_fn)dlsym(h, "ZSTD_getErrorName");
	z->version = (lore_zstd_version_fn)dlsym(h, "ZSTD_versionNumber");
	if (!z->create || !z->free || !z->decompress || !z->is_error || !z->error_name || !z->version) {
		dlclose(h);
		return 0;
	}
	return 1;
}

static unsigned lore_zstd_version(const lore_zstd *z) { return z->version(); }
static void *lore_zstd_create(const lore_zstd *z) { return z->create(); }
static void lore_zstd_free(const lore_zstd *z, void *ctx) { z->free(ctx); }
static const char *lore_zstd_error_name(const lore_zstd *z, size_t code) { return z->error_name(code); }

// lore_zstd_result is what lore_zstd_decompress returns: the bytes written, or when
// failed is set the library's error code.
typedef struct {
	size_t n;
	int failed;
} lore_zstd_result;

// lore_zstd_decompress decodes src into dst, writing no more than cap bytes.
static lore_zstd_result lore_zstd_decompress(const lore_zstd *z, void *ctx, void *dst, size_t cap, const void *src, size_t n) {
	lore_zstd_result r;
	r.n = z->decompress(ctx, dst, cap, src, n);
	r.failed = z->is_error(r.n) != 0;
	return r;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// libzstdMinVersion is the oldest libzstd used (1.4.0, as ZSTD_versionNumber
// states it): older releases are slower and were not tried.
const libzstdMinVersion = 10400

// libzstd is the system's Zstandard library, loaded at run time; it decodes the
// pages of DuckDB's and Lore's files 1.2 to 1.4 times as fast as the pure-Go
// decoder (1.65 times a string column's; BenchmarkZstdPages).
type libzstd struct {
	fns     C.lore_zstd
	version uint

	// free holds the decompression contexts not in use. A context is used by one
	// goroutine at a time. They are kept, not pooled in a sync.Pool: a scan
	// allocates fast enough to run the collector every few milliseconds, which
	// would empty the pool and have every decoder create, and fault in, a new
	// context of some 100 KiB for its next page.
	mu   sync.Mutex
	free []unsafe.Pointer
}

// zstdKeepContexts is how many idle contexts per processor are kept; beyond that a
// context is freed when it is put back.
const zstdKeepContexts = 2

// loadLibzstd loads libzstd.so.1 once; it is nil when the library is absent, lacks
// a function, or is older than 1.4.0.
var loadLibzstd = sync.OnceValue(func() *libzstd { return openLibzstd("libzstd.so.1") })

// openLibzstd loads the library file name (a name dlopen searches for, or a path);
// it is nil when that is not a libzstd of 1.4.0 or later.
func openLibzstd(file string) *libzstd {
	z := &libzstd{}
	name := C.CString(file)
	defer C.free(unsafe.Pointer(name))
	if C.lore_zstd_open(name, &z.fns) == 0 {
		return nil
	}
	// The handle stays open for the life of the process: contexts point into it.
	z.version = uint(C.lore_zstd_version(&z.fns))
	if z.version < libzstdMinVersion {
		return nil
	}
	return z
}

// nativeZstdVersion is the version of the system library in use ("1.5.4"), or ""
// when pages are decoded by the pure-Go decoder.
func nativeZstdVersion() string {
	z := loadLibzstd()
	if z == nil {
		return ""
	}
	return fmt.Sprintf("%d.%d.%d", z.version/10000, z.version/100%100, z.version%100)
}

// errNoContext is a failure to allocate a decompression context.
var errNoContext = errors.New("libzstd cannot allocate a decompression context")

// decode decompresses the frames of src (concatenated, skippable or without a
// content size, as the format allows) into dst and returns the bytes written. It
// never writes past len(dst): a frame that decodes to more is an error.
func (z *libzstd) decode(dst, src []byte) ([]byte, error) {
	ctx := z.context()
	if ctx == nil {
		return nil, errNoContext
	}
	var dp, sp unsafe.Pointer
	if len(dst) > 0 {
		dp = unsafe.Pointer(&dst[0])
	}
	if len(src) > 0 {
		sp = unsafe.Pointer(&src[0])
	}
	r := C.lore_zstd_decompress(&z.fns, ctx, dp, C.size_t(len(dst)), sp, C.size_t(len(src)))
	z.release(ctx)
	if r.failed != 0 {
		return nil, fmt.Errorf("zstd: %s", C.GoString(C.lore_zstd_error_name(&z.fns, r.n)))
	}
	n := int(r.n)
	if n > len(dst) {
		panic(fmt.Sprintf("BUG: libzstd wrote %d bytes into %d", n, len(dst)))
	}
	return dst[:n], nil
}

// context takes an idle decompression context, or creates one; it is nil when
// libzstd cannot allocate it.
func (z *libzstd) context() unsafe.Pointer {
	z.mu.Lock()
	if n := len(z.free); n > 0 {
		ctx := z.free[n-1]
		z.free = z.free[:n-1]
		z.mu.Unlock()
		return ctx
	}
	z.mu.Unlock()
	return C.lore_zstd_create(&z.fns)
}

// release gives back a context taken with context.
func (z *libzstd) release(ctx unsafe.Pointer) {
	z.mu.Lock()
	if len(z.free) < zstdKeepContexts*runtime.GOMAXPROCS(0) {
		z.free = append(z.free, ctx)
		ctx = nil
	}
	z.mu.Unlock()
	if ctx != nil {
		C.lore_zstd_free(&z.fns, ctx)
	}
}
