// Package shareddata finds the real tables written by other engines that tests read:
// ../shared/data beside the repository (MANIFEST.md in each folder says what is there).
// They are never copied into the repository; a test without them skips.
package shareddata

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Dir is the shared data directory, or the test is skipped with the reason.
func Dir(t testing.TB) string {
	t.Helper()
	d, err := Find()
	if err != nil {
		t.Skip(err.Error())
	}
	return d
}

// Find looks for shared/data in the directories above the module root of the
// working directory: beside the repository, or further up for a git worktree nested
// deeper.
func Find() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("module root not found")
		}
		dir = parent
	}
	for up := filepath.Dir(dir); ; up = filepath.Dir(up) {
		d := filepath.Join(up, "shared", "data")
		if _, err := os.Stat(d); err == nil {
			return d, nil
		}
		if filepath.Dir(up) == up {
			return "", fmt.Errorf("shared test data (../shared/data) not found above %s", dir)
		}
	}
}
