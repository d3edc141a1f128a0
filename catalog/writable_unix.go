//go:build unix

package catalog

import (
	"errors"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// filesWritable reports whether this process may write the catalog database abs:
// its directory (where SQLite makes the write-ahead log and its index), the file,
// and the log files that exist. It asks the kernel (access), so a read-only mount
// or a file without write permission answers false without opening anything.
func filesWritable(abs string) bool {
	for i, p := range []string{filepath.Dir(abs), abs, abs + "-wal", abs + "-shm"} {
		if err := unix.Access(p, unix.W_OK); err != nil && (i < 2 || !errors.Is(err, fs.ErrNotExist)) {
			return false
		}
	}
	return true
}
