package storage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/loredb/lore/errs"
)

// Local is the local file system. Its paths are operating-system paths.
type Local struct{}

var _ Store = Local{}

// Stat describes the file at path. Directories are reported with Size 0; callers that
// need a file check with List.
func (Local) Stat(ctx context.Context, path string) (ObjectInfo, error) {
	if err := ctx.Err(); err != nil {
		return ObjectInfo{}, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return ObjectInfo{}, localError("stat", path, err)
	}
	return infoOf(path, fi), nil
}

// List walks dir recursively and returns its regular files sorted by path. Symbolic
// links to files are followed; links to directories are not walked, so a link cycle
// cannot make listing endless.
func (Local) List(ctx context.Context, dir string) ([]ObjectInfo, error) {
	var out []ObjectInfo
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		// The entry's own information (one fstatat beside the directory) serves a
		// regular file; a link is followed with a full stat.
		var fi fs.FileInfo
		if d.Type().IsRegular() {
			fi, err = d.Info()
		} else {
			fi, err = os.Stat(p)
		}
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // a dangling link or a file removed while listing
			}
			return err
		}
		if fi.Mode().IsRegular() {
			out = append(out, infoOf(p, fi))
		}
		return nil
	})
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, localError("list", dir, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// Open opens the file at path.
func (Local) Open(ctx context.Context, path string) (Reader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, localError("open", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, localError("stat", path, err)
	}
	if fi.IsDir() {
		f.Close()
		return nil, errs.New(errs.SourceUnavailable, "cannot open %q: is a directory", path)
	}
	return &localFile{File: f, size: fi.Size()}, nil
}

type localFile struct {
	*os.File
	size int64
}

func (f *localFile) Size() int64 { return f.size }

func infoOf(path string, fi fs.FileInfo) ObjectInfo {
	size := fi.Size()
	if fi.IsDir() {
		size = 0
	}
	return ObjectInfo{Path: path, Size: size, ModTime: fi.ModTime()}
}

func localError(op, path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return errs.New(errs.SourceUnavailable, "cannot %s %q: no such file or directory: %w", op, path, fs.ErrNotExist)
	}
	return errs.New(errs.SourceUnavailable, "cannot %s %q: %w", op, path, err)
}
