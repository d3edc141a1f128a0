package storage

import (
	"context"
	"io"
	"time"
)

// ObjectInfo describes one stored object. Path, Size and ModTime (or ETag/Version on
// stores that have them; ChangeTime, Inode and Device on local disk) together identify
// a version of the object, which is what metadata caches key on.
type ObjectInfo struct {
	Path    string
	Size    int64
	ModTime time.Time
	ETag    string
	Version string
	// ChangeTime is a local file's inode change time, and Inode and Device its inode
	// number and file system: a write moves the change time, a file replaced by a
	// rename has another inode, and a user can set neither (a modification time can be
	// restored, as cp -p and rsync -t do). Zero where the platform does not report them.
	ChangeTime time.Time
	Inode      uint64
	Device     uint64
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

// SubdirLister is a store that names the directories directly under a directory in
// one request (an object store's listing with a delimiter), without listing what
// they hold. complete is false when there were more than one request returns.
type SubdirLister interface {
	Subdirs(ctx context.Context, dir string) (names []string, complete bool, err error)
}

// ListerFrom is a store that lists part of a directory in one request: object stores
// list keys from a start key, so a reader that knows where the objects it needs begin
// (the commits after a checkpoint) need not list the rest.
type ListerFrom interface {
	// ListFrom returns the objects under dir, recursively, files only, sorted by
	// path, whose path relative to dir sorts after after.
	ListFrom(ctx context.Context, dir, after string) ([]ObjectInfo, error)
}
