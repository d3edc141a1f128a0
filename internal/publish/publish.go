// Package publish replaces files of a local directory table crash-safe: new files are
// staged under LOCATION/_lore_optimize/<id>/ (hidden from listings, as every path
// segment starting with '_' is), then a manifest naming the files to add and to remove
// is written and synced, then the new files are renamed into place, the replaced files
// deleted, and the manifest and staging directory removed. A process killed at any
// step leaves either no manifest (the rewrite is rolled back: the staging directory is
// deleted, the table is as before) or a manifest (the rewrite is finished: every step
// is idempotent), so that after Recover the table holds each row exactly once.
//
// One rewrite per location at a time: Acquire takes LOCATION/_lore_optimize/lock with
// flock, which the kernel releases when its holder dies, so a lock left by a killed
// process is simply taken.
//
// Listings: the renames, deletes and the manifest's removal run under a second,
// short lock (the publish lock, a flock on LOCATION/_lore_optimize), which every Lore
// process's listing of the location takes shared through View, so that no listing
// holds both a new file and one it replaces (view.go).
package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/loredb/lore/errs"
)

// Dir is the directory under a table's location that holds staged rewrites and the
// lock.
const Dir = "_lore_optimize"

const (
	lockName     = "lock"
	manifestName = "manifest.json"
)

// FailPoint, when set (by crash tests), is called at each step of a publish and of a
// write; step names it: "staged", "manifest", "renamed", "deleted", "cleanup".
var FailPoint func(step string)

func failPoint(step string) {
	if FailPoint != nil {
		FailPoint(step)
	}
}

// Manifest is what a publish does, written before it does it. Paths are relative to
// the staging directory (Staged) and to the location (Final, Remove), with '/'.
type Manifest struct {
	Add    []Move   `json:"add"`
	Remove []string `json:"remove"`
}

// Move is one new file: staged under the staging directory, published at Final.
type Move struct {
	Staged string `json:"staged"`
	Final  string `json:"final"`
}

// Stage is one rewrite's staging directory.
type Stage struct {
	Location string
	ID       string
	Dir      string
	// manifested: the manifest is written, so the rewrite is to be finished, by
	// Publish or by the next recovery, never discarded.
	manifested bool
}

// NewStage makes the staging directory of rewrite id under location.
func NewStage(location, id string) (*Stage, error) {
	dir := filepath.Join(location, Dir, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, errs.New(errs.Internal, "cannot create staging directory %q: %w", dir, err)
	}
	return &Stage{Location: location, ID: id, Dir: dir}, nil
}

// Discard removes the staging directory and what it holds: the rewrite is abandoned
// before its manifest was written. Once the manifest is written it does nothing:
// some new files may be in place and some replaced files gone, and only finishing
// the manifest (Recover) leaves each row once.
func (s *Stage) Discard() error {
	if s.manifested {
		return nil
	}
	return os.RemoveAll(s.Dir)
}

// Publish writes m's manifest and carries it out (see the package comment).
func (s *Stage) Publish(m Manifest) error {
	if err := validate(m); err != nil {
		return err
	}
	// The staged files are synced by their writer; their directory entries too.
	if err := syncDir(s.Dir); err != nil {
		return err
	}
	failPoint("staged")
	doc, err := json.Marshal(m)
	if err != nil {
		return errs.New(errs.Internal, "cannot encode manifest: %w", err)
	}
	tmp := filepath.Join(s.Dir, manifestName+".tmp")
	if err := writeSynced(tmp, doc); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(s.Dir, manifestName)); err != nil {
		return errs.New(errs.Internal, "cannot write manifest in %q: %w", s.Dir, err)
	}
	s.manifested = true
	if err := syncDir(s.Dir); err != nil {
		return err
	}
	failPoint("manifest")
	return finish(s.Location, s.Dir, m)
}

// validate refuses a manifest whose paths leave the location or that would remove a
// file it adds: either is a bug that could lose rows.
func validate(m Manifest) error {
	finals := map[string]bool{}
	for _, a := range m.Add {
		if !local(a.Staged) || !local(a.Final) {
			return errs.New(errs.Internal, "manifest path escapes its directory: %+v", a)
		}
		finals[a.Final] = true
	}
	for _, r := range m.Remove {
		if !local(r) || finals[r] {
			return errs.New(errs.Internal, "manifest removes %q, which is not a plain file it keeps", r)
		}
	}
	return nil
}

func local(p string) bool { return p != "" && filepath.IsLocal(filepath.FromSlash(p)) }

// finish carries out a written manifest: renames, deletes, then the staging directory
// goes, all under the location's publish lock (view.go), so that no Lore listing
// sees the files between. Every step may have been done before (by a process killed
// later): a staged file already gone was renamed, a removed file already gone was
// deleted.
func finish(location, dir string, m Manifest) error {
	root := filepath.Join(location, Dir)
	d, err := lockDir(context.Background(), root, true, time.Now().Add(publishWait))
	if err != nil {
		return err
	}
	defer func() {
		unlock(d)
		d.Close()
	}()
	dirs := map[string]bool{}
	for _, a := range m.Add {
		from := filepath.Join(dir, filepath.FromSlash(a.Staged))
		to := filepath.Join(location, filepath.FromSlash(a.Final))
		err := os.Rename(from, to)
		switch {
		case err == nil:
		case errors.Is(err, fs.ErrNotExist):
			if _, serr := os.Stat(to); serr != nil {
				return errs.New(errs.Internal, "rewrite %q: staged file %q is neither staged nor published", dir, a.Staged)
			}
		default:
			return errs.New(errs.Internal, "cannot publish %q: %w", to, err)
		}
		dirs[filepath.Dir(to)] = true
		failPoint("renamed")
	}
	if err := syncDirs(dirs); err != nil {
		return err
	}
	clear(dirs)
	for _, r := range m.Remove {
		p := filepath.Join(location, filepath.FromSlash(r))
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return errs.New(errs.Internal, "cannot delete replaced file %q: %w", p, err)
		}
		dirs[filepath.Dir(p)] = true
		failPoint("deleted")
	}
	if err := syncDirs(dirs); err != nil {
		return err
	}
	failPoint("cleanup")
	if err := os.Remove(filepath.Join(dir, manifestName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errs.New(errs.Internal, "cannot remove manifest of %q: %w", dir, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return errs.New(errs.Internal, "cannot remove staging directory %q: %w", dir, err)
	}
	return nil
}

// Pending reports whether location has a staging directory left by a rewrite that
// did not end: Recover has work to do.
func Pending(location string) bool {
	ents, err := os.ReadDir(filepath.Join(location, Dir))
	if err != nil {
		return false
	}
	return slices.ContainsFunc(ents, func(e fs.DirEntry) bool { return e.IsDir() })
}

// Recover finishes or rolls back every rewrite of location that did not end; the
// caller holds the location's lock. It reports whether there was any, and leaves
// that on disk for Recovered.
func Recover(location string) (bool, error) {
	root := filepath.Join(location, Dir)
	ents, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, errs.New(errs.Internal, "cannot read %q: %w", root, err)
	}
	any := false
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if !any {
			// Before anything changes: a recovery killed part way is reported too.
			if err := markRecovered(location); err != nil {
				return false, err
			}
		}
		any = true
		dir := filepath.Join(root, e.Name())
		doc, err := os.ReadFile(filepath.Join(dir, manifestName))
		if errors.Is(err, fs.ErrNotExist) {
			// Killed before the manifest: nothing was published.
			if err := os.RemoveAll(dir); err != nil {
				return any, errs.New(errs.Internal, "cannot roll back rewrite %q: %w", dir, err)
			}
			continue
		}
		if err != nil {
			return any, errs.New(errs.Internal, "cannot read manifest of %q: %w", dir, err)
		}
		var m Manifest
		if err := json.Unmarshal(doc, &m); err != nil {
			return any, errs.New(errs.Internal, "manifest of %q does not read: %w", dir, err)
		}
		if err := validate(m); err != nil {
			return any, err
		}
		if err := finish(location, dir, m); err != nil {
			return any, err
		}
	}
	return any, nil
}

// Lock is a held rewrite lock of one location.
type Lock struct {
	f *os.File
}

// Acquire takes location's rewrite lock without waiting: 409 OPTIMIZE_IN_PROGRESS
// when another rewrite (in this process or another) holds it. The lock file records
// the holder's pid and start time, for whoever looks.
func Acquire(location string) (*Lock, error) {
	root := filepath.Join(location, Dir)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, errs.New(errs.Internal, "cannot create %q: %w", root, err)
	}
	f, err := os.OpenFile(filepath.Join(root, lockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, errs.New(errs.Internal, "cannot open rewrite lock in %q: %w", root, err)
	}
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, errs.New(errs.Internal, "cannot lock %q: %w", root, err)
	}
	if !held {
		owner, _ := os.ReadFile(f.Name())
		f.Close()
		return nil, errs.New(errs.OptimizeInProgress, "another OPTIMIZE is rewriting %q (lock held by %s)",
			location, strings.TrimSpace(string(owner)))
	}
	if err := f.Truncate(0); err == nil {
		fmt.Fprintf(f, "pid %d started %s\n", os.Getpid(), processStart())
	}
	return &Lock{f: f}, nil
}

// TryAcquire is Acquire that reports a held lock as (nil, nil) rather than an error.
func TryAcquire(location string) (*Lock, error) {
	l, err := Acquire(location)
	if errs.CodeOf(err) == errs.OptimizeInProgress {
		return nil, nil
	}
	return l, err
}

// Release gives the lock up. The lock file stays: removing it could let two
// processes each lock a different file of the same name.
func (l *Lock) Release() {
	if l != nil && l.f != nil {
		unlock(l.f)
		l.f.Close()
		l.f = nil
	}
}

func writeSynced(path string, data []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return errs.New(errs.Internal, "cannot create %q: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return errs.New(errs.Internal, "cannot write %q: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return errs.New(errs.Internal, "cannot sync %q: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return errs.New(errs.Internal, "cannot close %q: %w", path, err)
	}
	return nil
}

func syncDirs(dirs map[string]bool) error {
	for d := range dirs {
		if err := syncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// syncDir makes a directory's entries (renames, new and removed files) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return errs.New(errs.Internal, "cannot open directory %q: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, fs.ErrInvalid) {
		return errs.New(errs.Internal, "cannot sync directory %q: %w", dir, err)
	}
	return nil
}
