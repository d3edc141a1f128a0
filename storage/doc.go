// Package storage puts object stores behind one small interface: stat an object (size,
// modification time, ETag/version when the store has them), list a prefix, and open an
// object for random-access reads. Local disk is the only store so far; S3 will follow.
//
// Invariants: paths are the store's own (for Local, operating-system paths); List is
// recursive, returns files only and is sorted by path; a missing object is a
// SOURCE_UNAVAILABLE error that wraps fs.ErrNotExist, so callers can tell "absent"
// from "failed".
package storage
