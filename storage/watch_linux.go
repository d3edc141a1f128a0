package storage

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The local file system is watched with inotify: one instance per process, shared by
// every Local value. A watched location is a root: its directory and every directory
// under it (or, for a file, the directory holding it), each with an inotify watch. A
// change anywhere under a root moves the root's last change to the current sequence
// number; a stamp is a root and the sequence number when it was taken.
//
// Notifications are read when a stamp is taken or checked, never in the background:
// the kernel queues a change's notification before the system call that made the
// change returns, so reading the queue at the check sees every change made before it.

// watchMask is what counts as a change: content, times and modes, entries created,
// removed or renamed, and the watched directory itself removed, renamed or unmounted
// (IN_DELETE_SELF, IN_MOVE_SELF; the kernel adds IN_IGNORED and IN_UNMOUNT).
const watchMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_MOVED_FROM |
	unix.IN_MOVED_TO | unix.IN_CREATE | unix.IN_DELETE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
	unix.IN_ONLYDIR

// rewalkMask are the events after which a root's directories are walked again before
// its next stamp: a watched directory went, or the queue overflowed.
const rewalkMask = unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_IGNORED | unix.IN_UNMOUNT |
	unix.IN_Q_OVERFLOW

// Bounds on what is watched, below the kernel's default per-user limits: a root with
// more directories is not watched (it is listed every time), and past maxRoots the
// watch starts over.
const (
	maxRootDirs  = 1024
	maxWatches   = 8192
	maxRoots     = 256
	eventBufSize = 64 << 10
)

// watchableFS are the file systems whose changes all go through this kernel, so that
// inotify reports them: ext2/3/4, XFS, Btrfs, tmpfs, overlayfs, F2FS. Network and FUSE
// file systems can change without the kernel knowing.
var watchableFS = map[int64]bool{
	0xEF53:     true, // ext2, ext3, ext4
	0x58465342: true, // xfs
	0x9123683E: true, // btrfs
	0x01021994: true, // tmpfs
	0x794C7630: true, // overlayfs
	0xF2F52010: true, // f2fs
}

type watchRoot struct {
	path     string // absolute
	ok       bool   // its changes can be seen
	dev, ino uint64
	dirs     []int32 // watch descriptors
	changed  uint64  // sequence number of the last change seen
	rewalk   bool
}

type watcher struct {
	mu      sync.Mutex
	fd      int
	seq     uint64
	roots   map[string]*watchRoot
	dirs    map[int32][]*watchRoot // the roots each watch serves
	watches int
	buf     []byte
}

var (
	localWatchOnce sync.Once
	localWatch     *watcher
)

// theWatcher is the process's watcher, or nil when inotify cannot be used.
func theWatcher() *watcher {
	localWatchOnce.Do(func() {
		fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
		if err != nil {
			return
		}
		localWatch = &watcher{fd: fd, roots: map[string]*watchRoot{}, dirs: map[int32][]*watchRoot{},
			buf: make([]byte, eventBufSize)}
	})
	return localWatch
}

// Watch implements Watcher for the local file system.
func (Local) Watch(location string) (Stamp, bool) {
	w := theWatcher()
	if w == nil {
		return Stamp{}, false
	}
	base, pattern := GlobBase(location)
	abs, err := filepath.Abs(base)
	if err != nil {
		return Stamp{}, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.drain()
	r := w.roots[abs]
	if r == nil {
		if len(w.roots) >= maxRoots {
			w.reset()
		}
		r = &watchRoot{path: abs}
		w.roots[abs] = r
		w.walk(r, pattern != nil)
	} else if r.rewalk || !r.same() {
		w.walk(r, pattern != nil)
	}
	if !r.ok {
		return Stamp{}, false
	}
	return Stamp{root: r, seq: w.seq}, true
}

// unchangedSince reports whether s's root saw no change after s was taken; the
// caller's Watch of the same root has just read the queue and checked the root.
func unchangedSince(s Stamp) bool {
	w := theWatcher()
	w.mu.Lock()
	defer w.mu.Unlock()
	r := s.root
	return r.ok && !r.rewalk && r.changed <= s.seq
}

// same reports whether the root's path still names the directory or file walked: a
// path whose component (a symbolic link, a renamed parent) now leads elsewhere is
// another root.
func (r *watchRoot) same() bool {
	var st unix.Stat_t
	if unix.Stat(r.path, &st) != nil {
		return false
	}
	return uint64(st.Dev) == r.dev && st.Ino == r.ino
}

// walk (re)establishes r's watches: first on each directory, then its entries are
// read, so that a change after the entries were read is reported. A root that is a
// glob's base is watched whole, like a directory.
func (w *watcher) walk(r *watchRoot, glob bool) {
	w.forget(r)
	w.seq++
	r.changed, r.rewalk, r.ok = w.seq, false, false
	var st unix.Stat_t
	if unix.Stat(r.path, &st) != nil {
		return
	}
	r.dev, r.ino = uint64(st.Dev), st.Ino
	var fs unix.Statfs_t
	if unix.Statfs(r.path, &fs) != nil || !watchableFS[int64(fs.Type)] {
		return
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		// A file: its directory's watch reports its changes, unless it is a link.
		var lst unix.Stat_t
		if glob || unix.Lstat(r.path, &lst) != nil || lst.Mode&unix.S_IFMT != unix.S_IFREG {
			return
		}
		r.ok = w.add(r, filepath.Dir(r.path))
		return
	}
	r.ok = w.walkDir(r, r.path)
}

func (w *watcher) walkDir(r *watchRoot, dir string) bool {
	if len(r.dirs) >= maxRootDirs || !w.add(r, dir) {
		return false
	}
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return false
	}
	for _, e := range entries {
		switch {
		case e.IsDir():
			if !w.walkDir(r, filepath.Join(dir, e.Name())) {
				return false
			}
		case e.Type()&os.ModeSymlink != 0:
			// A link's target can change without a notification here.
			return false
		}
	}
	return true
}

func (w *watcher) add(r *watchRoot, dir string) bool {
	if w.watches >= maxWatches {
		return false
	}
	wd, err := unix.InotifyAddWatch(w.fd, dir, watchMask)
	if err != nil {
		return false
	}
	id := int32(wd)
	if len(w.dirs[id]) == 0 {
		w.watches++
	}
	w.dirs[id] = append(w.dirs[id], r)
	r.dirs = append(r.dirs, id)
	return true
}

// forget removes r's watches, those no other root shares from the kernel too.
func (w *watcher) forget(r *watchRoot) {
	for _, id := range r.dirs {
		rs := w.dirs[id]
		kept := rs[:0]
		for _, x := range rs {
			if x != r {
				kept = append(kept, x)
			}
		}
		if len(kept) == 0 {
			delete(w.dirs, id)
			w.watches--
			unix.InotifyRmWatch(w.fd, uint32(id))
			continue
		}
		w.dirs[id] = kept
	}
	r.dirs = nil
}

// reset forgets every root: stamps taken before are changed from now on.
func (w *watcher) reset() {
	for _, r := range w.roots {
		w.forget(r)
		r.ok = false
	}
	w.roots = map[string]*watchRoot{}
}

// drain reads every queued notification and marks the roots they concern changed.
func (w *watcher) drain() {
	for {
		n, err := unix.Read(w.fd, w.buf)
		if n <= 0 {
			if err != nil && !errors.Is(err, syscall.EAGAIN) && !errors.Is(err, syscall.EINTR) {
				// The instance is broken: nothing can be trusted unchanged.
				for _, r := range w.roots {
					r.ok = false
				}
			}
			return
		}
		w.seq++
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			off += unix.SizeofInotifyEvent + int(ev.Len)
			w.note(ev.Wd, ev.Mask)
		}
	}
}

func (w *watcher) note(wd int32, mask uint32) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		for _, r := range w.roots {
			r.changed, r.rewalk = w.seq, true
		}
		return
	}
	// A new entry may be a directory to watch or a link that cannot be: the next
	// stamp walks the root again.
	rewalk := mask&(rewalkMask|unix.IN_CREATE|unix.IN_MOVED_TO) != 0 ||
		(mask&unix.IN_ISDIR != 0 && mask&(unix.IN_MOVED_FROM|unix.IN_DELETE) != 0)
	for _, r := range w.dirs[wd] {
		r.changed = w.seq
		if rewalk {
			r.rewalk = true
		}
	}
	if mask&unix.IN_IGNORED != 0 {
		// The kernel dropped the watch (its directory went): the descriptor may be
		// reused for another directory.
		for _, r := range w.dirs[wd] {
			r.dirs = removeWatch(r.dirs, wd)
		}
		if len(w.dirs[wd]) > 0 {
			w.watches--
		}
		delete(w.dirs, wd)
	}
}

func removeWatch(ids []int32, id int32) []int32 {
	out := ids[:0]
	for _, x := range ids {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}
