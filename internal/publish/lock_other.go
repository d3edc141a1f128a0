//go:build !unix

package publish

import (
	"errors"
	"os"
)

// tryLock has no portable form outside Unix: rewrites are refused there.
func tryLock(f *os.File) (bool, error) {
	return false, errors.New("file locks are not supported on this platform")
}

func unlock(f *os.File) {}
