// Package storage puts object stores behind one small interface: stat an object (size,
// modification time, ETag/version when the store has them), list a prefix, and open an
// object for random-access reads. Local is local disk; storage/s3 is S3 and the stores
// that speak its protocol; a Router sends each path to the store that holds it by its
// URL scheme. Join, Clean and Dir work on both kinds of path.
//
// Invariants: paths are the store's own (for Local, operating-system paths; for S3,
// s3://bucket/key URLs); List is
// recursive, returns files only and is sorted by path; a missing object is a
// SOURCE_UNAVAILABLE error that wraps fs.ErrNotExist, so callers can tell "absent"
// from "failed".
package storage
