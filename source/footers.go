package source

import (
	"context"
	"runtime"

	"golang.org/x/sync/errgroup"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/storage"
)

// Footers opens the footer of every file of the listing, in the order of Files,
// several at a time and through the footer cache. It reads no data page.
func (l *Listing) Footers(ctx context.Context, store storage.Store) ([]*parquet.File, error) {
	out := make([]*parquet.File, len(l.Files))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(4 * runtime.GOMAXPROCS(0)) // footer reads wait on storage more than on CPU
	for i, f := range l.Files {
		g.Go(errs.Safe(func() error {
			footer, err := loadFooter(ctx, store, f.Info)
			out[i] = footer
			return err
		}))
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// CachedFooters returns the footer of every file of the listing, in the order of
// Files, when the footer cache holds them all, and nil otherwise. It reads nothing:
// planning may use what counting the rows or an earlier scan opened, never pay for
// a read of its own.
func (l *Listing) CachedFooters() []*parquet.File {
	out := make([]*parquet.File, len(l.Files))
	for i, f := range l.Files {
		if out[i] = footers.get(identityOf(f.Info)); out[i] == nil {
			return nil
		}
	}
	return out
}
