//go:build !unix

package publish

import (
	"errors"
	"os"
)

// lockSupported: without flock no rewrite runs, so listings need no publish lock.
const lockSupported = false

var errNoLocks = errors.New("file locks are not supported on this platform")

// tryLock has no portable form outside Unix: rewrites are refused there.
func tryLock(f *os.File) (bool, error) { return false, errNoLocks }

func tryFlock(f *os.File, exclusive bool) (bool, error) { return false, errNoLocks }

func unlock(f *os.File) {}
