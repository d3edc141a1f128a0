package storage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
	err := listLocal(ctx, dir, &out)
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

// listLocal appends the regular files at or under root to out. root itself may be a
// file, or a link to a file or a directory; links below it are followed to files,
// never into directories.
func listLocal(ctx context.Context, root string, out *[]ObjectInfo) error {
	fi, err := os.Stat(root)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return addFile(root, fi, out)
	}
	return listDir(ctx, root, out)
}

// listDir lists one directory, a regular file's size and time taken relative to the
// directory (statAt) rather than by walking its whole path again, and recurses.
func listDir(ctx context.Context, dir string, out *[]ObjectInfo) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return err
	}
	*out = slices.Grow(*out, len(entries))
	for _, d := range entries {
		p := filepath.Join(dir, d.Name())
		switch {
		case d.IsDir():
			if err := listDir(ctx, p, out); err != nil {
				return err
			}
		case d.Type().IsRegular():
			info, err := statAt(f, d, p)
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed while listing
			}
			if err != nil {
				return err
			}
			*out = append(*out, info)
		default:
			if err := addFile(p, nil, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// addFile appends the file at p when it is, or links to, a regular file. fi is p's
// own (unfollowed) information, or nil.
func addFile(p string, fi fs.FileInfo, out *[]ObjectInfo) error {
	if fi == nil || fi.Mode()&fs.ModeSymlink != 0 {
		var err error
		if fi, err = os.Stat(p); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // a dangling link, or a file removed while listing
			}
			return err
		}
	}
	if fi.Mode().IsRegular() {
		*out = append(*out, infoOf(p, fi))
	}
	return nil
}

func infoOf(path string, fi fs.FileInfo) ObjectInfo {
	size := fi.Size()
	if fi.IsDir() {
		size = 0
	}
	info := ObjectInfo{Path: path, Size: size, ModTime: fi.ModTime()}
	fileID(&info, fi)
	return info
}

func localError(op, path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return errs.New(errs.SourceUnavailable, "cannot %s %q: no such file or directory: %w", op, path, fs.ErrNotExist)
	}
	return errs.New(errs.SourceUnavailable, "cannot %s %q: %w", op, path, err)
}
