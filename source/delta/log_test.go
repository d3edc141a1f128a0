package delta

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage"
)

// otherStore is the local disk seen as any store: the log is listed with List.
type otherStore struct{ storage.Store }

// TestLocalListingByNames reads every fixture at every version the facts list, with
// the local disk's listing by names, the listing of any store, and the listing from
// the checkpoint _last_checkpoint names: the same snapshots, or the same errors.
func TestLocalListingByNames(t *testing.T) {
	dir, fs := facts(t)
	ctx := context.Background()
	for _, f := range fs {
		ats := []source.AsOf{{}}
		for _, rv := range f.RowsPerVersion {
			ats = append(ats, source.AsOf{Version: int64(rv[0].(float64)), HasVersion: true})
		}
		for _, at := range ats {
			stores := []storage.Store{storage.Local{}, otherStore{storage.Local{}}, rangeStore{storage.Local{}, new(int)}}
			ls := make([]*source.Listing, len(stores))
			es := make([]error, len(stores))
			for i, store := range stores {
				DropCachedSnapshots()
				ls[i], es[i] = Open(ctx, store, filepath.Join(dir, f.Table), at)
			}
			for i := 1; i < len(stores); i++ {
				if (es[0] == nil) != (es[i] == nil) || errs.CodeOf(es[0]) != errs.CodeOf(es[i]) {
					t.Errorf("%s %+v, store %d: errors %v and %v", f.Table, at, i, es[0], es[i])
					continue
				}
				if es[0] != nil {
					continue
				}
				if len(ls[0].Files) != len(ls[i].Files) || !bytes.Equal(ls[0].Lake.Identity, ls[i].Lake.Identity) || ls[0].Lake.Version != ls[i].Lake.Version {
					t.Errorf("%s %+v, store %d: %d files at %+v, and %d at %+v", f.Table, at, i, len(ls[0].Files), ls[0].Lake, len(ls[i].Files), ls[i].Lake)
				}
			}
		}
	}
}

// rangeStore is the local disk seen as an object store that lists from a start key,
// counting the entries its list requests return.
type rangeStore struct {
	storage.Store
	listed *int
}

func (s rangeStore) List(ctx context.Context, dir string) ([]storage.ObjectInfo, error) {
	out, err := s.Store.List(ctx, dir)
	*s.listed += len(out)
	return out, err
}

func (s rangeStore) ListFrom(ctx context.Context, dir, after string) ([]storage.ObjectInfo, error) {
	all, err := s.Store.List(ctx, dir)
	if err != nil {
		return nil, err
	}
	var out []storage.ObjectInfo
	for _, o := range all {
		if o.Path > dir+"/"+after {
			out = append(out, o)
		}
	}
	*s.listed += len(out)
	return out, nil
}

// TestListingFromTheLastCheckpoint lists a log from the checkpoint _last_checkpoint
// names, and reads the same snapshot whatever the hint says: right, stale, naming a
// checkpoint that is not there, unparsable or missing.
func TestListingFromTheLastCheckpoint(t *testing.T) {
	dir, _ := facts(t)
	ctx := context.Background()
	root := copyTable(t, filepath.Join(dir, "delta-rs/simple_table_with_checkpoint"))
	hint := filepath.Join(root, "_delta_log", "_last_checkpoint")
	right, err := os.ReadFile(hint)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(root, "_delta_log"))
	if err != nil {
		t.Fatal(err)
	}
	DropCachedSnapshots()
	want, err := Open(ctx, storage.Local{}, root, source.AsOf{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, hint string
		at         source.AsOf
		whole      bool // the whole log is listed
	}{
		{"right", string(right), source.AsOf{}, false},
		{"right, a version after it", string(right), source.AsOf{Version: 10, HasVersion: true}, false},
		{"right, a version before it", string(right), source.AsOf{Version: 3, HasVersion: true}, true},
		{"no such checkpoint", `{"version":0,"size":1}`, source.AsOf{}, true},
		{"no such checkpoint either", `{"version":9,"size":1}`, source.AsOf{}, true},
		{"beyond the log", `{"version":99,"size":1}`, source.AsOf{}, true},
		{"unparsable", `{"vers`, source.AsOf{}, true},
		{"missing", "", source.AsOf{}, true},
	} {
		if c.hint == "" {
			os.Remove(hint)
		} else if err := os.WriteFile(hint, []byte(c.hint), 0o644); err != nil {
			t.Fatal(err)
		}
		listed := 0
		DropCachedSnapshots()
		got, err := Open(ctx, rangeStore{storage.Local{}, &listed}, root, c.at)
		if whole := listed >= len(entries)-1; whole != c.whole {
			t.Errorf("%s: %d entries listed of %d", c.name, listed, len(entries))
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !c.at.HasVersion && (!bytes.Equal(got.Lake.Identity, want.Lake.Identity) || len(got.Files) != len(want.Files)) {
			t.Errorf("%s: snapshot %+v of %d files, want %+v of %d", c.name, got.Lake, len(got.Files), want.Lake, len(want.Files))
		}
		if c.at.HasVersion && got.Lake.Version != c.at.Version {
			t.Errorf("%s: version %d", c.name, got.Lake.Version)
		}
	}
}

// TestFilePathOfURIs: a log's paths are URIs: a relative one is decoded under the
// root, a file: one is its local path, and another store's keeps its scheme and
// bucket with its key decoded (a space written %20 is a space in the key).
func TestFilePathOfURIs(t *testing.T) {
	for _, c := range []struct{ root, p, want string }{
		{"s3://b/t", "part-0.parquet", "s3://b/t/part-0.parquet"},
		{"s3://b/t", "x=a%2Fb/part%200.parquet", "s3://b/t/x=a/b/part 0.parquet"},
		{"/t", "file:///data/t/a%20b.parquet", "/data/t/a b.parquet"},
		{"/t", "s3://other/t/a%20b.parquet", "s3://other/t/a b.parquet"},
		{"/t", "s3a://other/t/p.parquet", "s3a://other/t/p.parquet"},
	} {
		got, err := filePath(c.root, c.p)
		if err != nil || got != c.want {
			t.Errorf("filePath(%q, %q) = %q, %v; want %q", c.root, c.p, got, err, c.want)
		}
	}
}
