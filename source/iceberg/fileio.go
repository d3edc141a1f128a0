package iceberg

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"time"

	iceio "github.com/apache/iceberg-go/io"

	"github.com/loredb/lore/storage"
)

// fileIO is iceberg-go's file system over Lore's store: every manifest list and
// manifest iceberg-go reads comes through it, its path first mapped by the table's
// resolver. It only reads.
type fileIO struct {
	ctx   context.Context
	store storage.Store
	paths *resolver
}

var _ iceio.IO = (*fileIO)(nil)

// Open opens the object a metadata path names.
func (f *fileIO) Open(name string) (iceio.File, error) {
	p := f.paths.resolve(name)
	r, err := f.store.Open(f.ctx, p)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	return &file{r: r, name: p, ctx: f.ctx}, nil
}

// Remove is refused: Lore never changes a table.
func (f *fileIO) Remove(name string) error {
	return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrPermission}
}

// file is one object open for iceberg-go: a reader at offsets with a cursor.
type file struct {
	r    storage.Reader
	name string
	off  int64
	ctx  context.Context
}

func (f *file) Stat() (fs.FileInfo, error) { return fileInfo{f}, nil }

func (f *file) Read(b []byte) (int, error) {
	if err := f.ctx.Err(); err != nil {
		return 0, err
	}
	if f.off >= f.r.Size() {
		return 0, io.EOF
	}
	n, err := f.r.ReadAt(b, f.off)
	f.off += int64(n)
	if errors.Is(err, io.EOF) && n > 0 {
		err = nil
	}
	return n, err
}

func (f *file) ReadAt(b []byte, off int64) (int, error) { return f.r.ReadAt(b, off) }

func (f *file) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += f.off
	case io.SeekEnd:
		offset += f.r.Size()
	default:
		return 0, errors.New("invalid whence")
	}
	if offset < 0 {
		return 0, errors.New("negative position")
	}
	f.off = offset
	return offset, nil
}

func (f *file) Close() error { return f.r.Close() }

type fileInfo struct{ f *file }

func (i fileInfo) Name() string       { return i.f.name }
func (i fileInfo) Size() int64        { return i.f.r.Size() }
func (i fileInfo) Mode() fs.FileMode  { return 0o444 }
func (i fileInfo) ModTime() time.Time { return time.Time{} }
func (i fileInfo) IsDir() bool        { return false }
func (i fileInfo) Sys() any           { return nil }
