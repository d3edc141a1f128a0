package storage

import (
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// statAt describes the regular file d of the open directory dir, at path p, with one
// fstatat relative to the directory: the kernel does not walk p's components again.
func statAt(dir *os.File, d fs.DirEntry, p string) (ObjectInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(int(dir.Fd()), d.Name(), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return ObjectInfo{}, &fs.PathError{Op: "stat", Path: p, Err: err}
	}
	return ObjectInfo{
		Path: p, Size: st.Size, ModTime: time.Unix(st.Mtim.Unix()),
		ChangeTime: time.Unix(st.Ctim.Unix()), Inode: st.Ino, Device: uint64(st.Dev),
	}, nil
}

// fileID sets info's inode change time, inode number and device from fi.
func fileID(info *ObjectInfo, fi fs.FileInfo) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	info.ChangeTime = time.Unix(st.Ctim.Unix())
	info.Inode, info.Device = st.Ino, uint64(st.Dev)
}
