package delta

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage"
)

// otherStore is the local disk seen as any store: the log is listed with List.
type otherStore struct{ storage.Store }

// TestLocalListingByNames reads every fixture at every version the facts list, with
// the local disk's listing by names and with the listing of any store: the same
// snapshots, or the same errors.
func TestLocalListingByNames(t *testing.T) {
	dir, fs := facts(t)
	ctx := context.Background()
	for _, f := range fs {
		ats := []source.AsOf{{}}
		for _, rv := range f.RowsPerVersion {
			ats = append(ats, source.AsOf{Version: int64(rv[0].(float64)), HasVersion: true})
		}
		for _, at := range ats {
			var ls [2]*source.Listing
			var es [2]error
			for i, store := range []storage.Store{storage.Local{}, otherStore{storage.Local{}}} {
				DropCachedSnapshots()
				ls[i], es[i] = Open(ctx, store, filepath.Join(dir, f.Table), at)
			}
			if (es[0] == nil) != (es[1] == nil) || errs.CodeOf(es[0]) != errs.CodeOf(es[1]) {
				t.Errorf("%s %+v: errors %v and %v", f.Table, at, es[0], es[1])
				continue
			}
			if es[0] != nil {
				continue
			}
			if len(ls[0].Files) != len(ls[1].Files) || !bytes.Equal(ls[0].Lake.Identity, ls[1].Lake.Identity) || ls[0].Lake.Version != ls[1].Lake.Version {
				t.Errorf("%s %+v: %d files at %+v, and %d at %+v", f.Table, at, len(ls[0].Files), ls[0].Lake, len(ls[1].Files), ls[1].Lake)
			}
		}
	}
}
