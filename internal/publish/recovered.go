package publish

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/loredb/lore/errs"
)

// recoveredName is the marker a recovery leaves until an OPTIMIZE reports it.
const recoveredName = "recovered"

// markRecovered records on disk that an interrupted rewrite of location is being
// finished or rolled back. It is written and synced before the recovery changes
// anything, so that a recovery killed part way still leaves it.
func markRecovered(location string) error {
	root := filepath.Join(location, Dir)
	doc := []byte("pid " + strconv.Itoa(os.Getpid()) + " at " + time.Now().UTC().Format(time.RFC3339Nano) + "\n")
	tmp := filepath.Join(root, recoveredName+".tmp")
	if err := writeSynced(tmp, doc); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(root, recoveredName)); err != nil {
		return errs.New(errs.Internal, "cannot mark %q recovered: %w", location, err)
	}
	return syncDir(root)
}

// Recovered reports whether an interrupted rewrite of location was finished or
// rolled back — by any process — since the last ClearRecovered.
func Recovered(location string) bool {
	_, err := os.Stat(filepath.Join(location, Dir, recoveredName))
	return err == nil
}

// ClearRecovered removes the mark Recovered reads: an OPTIMIZE has reported it. The
// caller holds the location's rewrite lock, so no recovery marks it meanwhile.
func ClearRecovered(location string) error {
	err := os.Remove(filepath.Join(location, Dir, recoveredName))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errs.New(errs.Internal, "cannot clear the recovered mark of %q: %w", location, err)
	}
	return nil
}
