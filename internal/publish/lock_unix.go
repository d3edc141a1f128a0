//go:build unix

package publish

import (
	"errors"
	"os"
	"syscall"
)

// lockSupported: flock is there, so rewrites and the publish lock work.
const lockSupported = true

// tryLock takes an exclusive flock on f without waiting; false when another open
// file (of this process or another) holds it. The kernel drops the lock when its
// holder exits, however it exits.
func tryLock(f *os.File) (bool, error) { return tryFlock(f, true) }

// tryFlock takes an exclusive or a shared flock on f without waiting; false when a
// conflicting lock is held through another open file, of this process or another.
func tryFlock(f *os.File, exclusive bool) (bool, error) {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

func unlock(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
