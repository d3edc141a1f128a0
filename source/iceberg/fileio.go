package iceberg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/storage"
)

// objects reads the files a table's metadata names (manifest lists and manifests)
// through Lore's store, each path first mapped by the table's resolver. It only
// reads.
type objects struct {
	ctx   context.Context
	store storage.Store
	paths *resolver
}

// read reads the whole object a metadata path names. An object that does not exist
// is an error matching fs.ErrNotExist; one of more than limit bytes is refused
// before it is read.
func (o *objects) read(name string, limit int64) ([]byte, error) {
	if err := o.ctx.Err(); err != nil {
		return nil, err
	}
	p := o.paths.resolve(name)
	r, err := o.store.Open(o.ctx, p)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	defer r.Close()
	if r.Size() > limit {
		return nil, fmt.Errorf("a file of %d bytes is larger than Lore reads (%d)", r.Size(), limit)
	}
	b := make([]byte, r.Size())
	if _, err := r.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, errs.New(errs.SourceUnavailable, "cannot read %q: %w", p, err)
	}
	return b, nil
}
