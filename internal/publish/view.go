package publish

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/loredb/lore/errs"
)

// The publish lock keeps every Lore process's listing of a location out of the
// instant between a publish's first rename and its manifest's removal, where a
// listing would hold both the new files and the ones they replace. It is a flock on
// the directory LOCATION/_lore_optimize itself: a publish (and a recovery that
// finishes one) holds it exclusive while it renames, deletes and removes its
// manifest; a listing holds it shared while it lists. A directory needs no file to be
// created first, and opening it read-only to lock it is no change the inotify watch
// of a kept listing reports.
//
// A publisher killed while it holds the lock loses it with its process, leaving a
// manifest whose files are half moved. A listing that holds the lock shared and finds
// such a manifest (one of its new files in place) does not list: it has the rewrite
// finished first (settle), then looks again.

// ViewWait bounds how long a listing waits for publishes of its location before it
// fails with OPTIMIZE_IN_PROGRESS; a publish holds the lock for the renames and
// deletes of one directory's files.
var ViewWait = 30 * time.Second

// publishWait bounds how long a publish waits for the listings holding its location's
// publish lock. Past it the publish fails with its manifest written: the next
// recovery finishes it.
var publishWait = 5 * time.Minute

// View runs list so that it reads location as it is before or after each publish of
// a rewrite, never between. settle finishes or rolls back an interrupted rewrite of
// location when the rewrite lock is free (a killed publisher left it half done); it
// is called without the publish lock held.
//
// A location that has no _lore_optimize directory before and after list costs two
// failed stats: no rewrite ever started there, and the directory, once made, stays.
func View(ctx context.Context, location string, settle func() error, list func() error) error {
	root := filepath.Join(location, Dir)
	if !lockSupported || !isDir(root) {
		if err := list(); err != nil || !lockSupported || !isDir(root) {
			return err
		}
		// A rewrite started while list ran: it may have published too.
	}
	deadline := time.Now().Add(ViewWait)
	for pause := time.Millisecond; ; pause = min(2*pause, 20*time.Millisecond) {
		d, err := lockDir(ctx, root, false, deadline)
		if err != nil {
			return err
		}
		torn, err := halfPublished(location)
		if err == nil && !torn {
			err = list()
		}
		unlock(d)
		d.Close()
		if err != nil || !torn {
			return err
		}
		if err := settle(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return errs.New(errs.OptimizeInProgress,
				"%q holds a rewrite published half way whose recovery has not ended after %s", location, ViewWait)
		}
		if err := sleep(ctx, pause); err != nil {
			return err
		}
	}
}

// lockDir opens the directory root and takes its flock, polling until deadline: a
// blocking flock could be neither canceled nor bounded.
func lockDir(ctx context.Context, root string, exclusive bool, deadline time.Time) (*os.File, error) {
	d, err := os.Open(root)
	if err != nil {
		return nil, errs.New(errs.Internal, "cannot open %q: %w", root, err)
	}
	for pause := 100 * time.Microsecond; ; pause = min(2*pause, 10*time.Millisecond) {
		held, err := tryFlock(d, exclusive)
		if err != nil {
			d.Close()
			return nil, errs.New(errs.Internal, "cannot lock %q: %w", root, err)
		}
		if held {
			return d, nil
		}
		if time.Now().After(deadline) {
			d.Close()
			if exclusive {
				return nil, errs.New(errs.Internal, "listings of %q kept its publish lock past %s", filepath.Dir(root), publishWait)
			}
			return nil, errs.New(errs.OptimizeInProgress,
				"a rewrite of %q has been publishing its files for more than %s", filepath.Dir(root), ViewWait)
		}
		if err := sleep(ctx, pause); err != nil {
			d.Close()
			return nil, err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// halfPublished reports whether a staging directory of location holds a manifest one
// of whose new files is in place. Under the shared publish lock no publish is under
// way, so that is a publisher killed between its first rename and its manifest's
// removal; a manifest none of whose files moved is a publish yet to start, and the
// files in place are those before it.
func halfPublished(location string) (bool, error) {
	root := filepath.Join(location, Dir)
	ents, err := os.ReadDir(root)
	if err != nil {
		return false, errs.New(errs.Internal, "cannot read %q: %w", root, err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		doc, err := os.ReadFile(filepath.Join(root, e.Name(), manifestName))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return false, errs.New(errs.Internal, "cannot read manifest of %q: %w", e.Name(), err)
		}
		var m Manifest
		if json.Unmarshal(doc, &m) != nil || validate(m) != nil {
			// Recovery reports what is wrong with it.
			return true, nil
		}
		for _, a := range m.Add {
			if _, err := os.Lstat(filepath.Join(location, filepath.FromSlash(a.Final))); err == nil {
				return true, nil
			}
		}
	}
	return false, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
