//go:build !linux

package storage

import (
	"io/fs"
	"os"
)

// statAt describes the regular file d of the directory dir, at path p.
func statAt(_ *os.File, d fs.DirEntry, p string) (ObjectInfo, error) {
	fi, err := d.Info()
	if err != nil {
		return ObjectInfo{}, err
	}
	return infoOf(p, fi), nil
}

// fileID leaves info's inode change time, inode number and device unset: the change
// marker then falls back to the modification time alone.
func fileID(*ObjectInfo, fs.FileInfo) {}
