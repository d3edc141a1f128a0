package storage

import (
	"context"
	"io"
	"time"
)

// ObjectInfo describes one stored object. Path, Size and ModTime (or ETag/Version on
// stores that have them) together identify a version of the object, which is what
// metadata caches key on.
type ObjectInfo struct {
	Path    string
	Size    int64
	ModTime time.Time
	ETag    string
	Version string
}

// Reader is an open object: random access plus its size. Close releases it.
type Reader interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// Store is an object store.
type Store interface {
	// Stat describes one object. A missing object is an errs.SourceUnavailable error
	// wrapping fs.ErrNotExist.
	Stat(ctx context.Context, path string) (ObjectInfo, error)
	// List returns every object under dir, recursively, files only, sorted by path.
	List(ctx context.Context, dir string) ([]ObjectInfo, error)
	// Open opens an object for reading.
	Open(ctx context.Context, path string) (Reader, error)
}
