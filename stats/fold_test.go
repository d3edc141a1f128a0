package stats

import (
	"encoding/hex"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
)

func foldListing(files ...storage.ObjectInfo) *source.Listing {
	l := &source.Listing{Schema: arrow.NewSchema([]arrow.Field{{Name: "x", Type: types.Int64}}, nil), Format: "parquet"}
	for _, f := range files {
		l.Files = append(l.Files, source.FileRef{Info: f})
	}
	return l
}

func fileInfo(path string, size int64, mtime int64) storage.ObjectInfo {
	return storage.ObjectInfo{Path: path, Size: size, ModTime: time.Unix(0, mtime)}
}

func recordOf(files ...storage.ObjectInfo) *Record {
	r := &Record{PerFileComplete: true, Files: len(files), Columns: []Column{{Name: "x", DataType: "BIGINT"}}}
	for _, f := range files {
		m, _ := source.ChangeMarker(f)
		r.PerFile = append(r.PerFile, File{Path: f.Path, Bytes: f.Size, Marker: hex.EncodeToString([]byte(m)),
			Columns: make([]ZoneColumn, 1)})
	}
	return r
}

func TestAddedOnlyWhenFilesWereOnlyAdded(t *testing.T) {
	a, b, c := fileInfo("/t/a", 10, 1), fileInfo("/t/b", 20, 2), fileInfo("/t/c", 30, 3)
	old := recordOf(a, b)
	if added, ok := Added(old, foldListing(a, b, c)); !ok || len(added) != 1 || added[0].Info.Path != "/t/c" {
		t.Fatalf("one file added: %v %v", added, ok)
	}
	if added, ok := Added(old, foldListing(a, b)); !ok || len(added) != 0 {
		t.Fatalf("nothing added: %v %v", added, ok)
	}
	for name, l := range map[string]*source.Listing{
		"removed":               foldListing(a, c),
		"rewritten, same size":  foldListing(a, fileInfo("/t/b", 20, 99), c),
		"rewritten, other size": foldListing(a, fileInfo("/t/b", 21, 2), c),
	} {
		if _, ok := Added(old, l); ok {
			t.Errorf("%s: folding allowed", name)
		}
	}
	// On local disk: a rewrite in place with the size and modification time restored
	// moves the inode change time; a replacement by rename has another inode.
	la, lb := fileInfo("/t/a", 10, 1), fileInfo("/t/b", 20, 2)
	la.ChangeTime, la.Inode, lb.ChangeTime, lb.Inode = time.Unix(0, 5), 7, time.Unix(0, 6), 8
	local := recordOf(la, lb)
	if added, ok := Added(local, foldListing(la, lb, c)); !ok || len(added) != 1 {
		t.Fatalf("one file added on local disk: %v %v", added, ok)
	}
	inPlace, renamed := lb, lb
	inPlace.ChangeTime, renamed.Inode = time.Unix(0, 9), 9
	for name, l := range map[string]*source.Listing{
		"rewritten in place, times restored": foldListing(la, inPlace, c),
		"replaced by a rename":               foldListing(la, renamed, c),
		// A record from before markers held the inode: not folded into, never an error.
		"recorded with the modification time alone": foldListing(la, lb, c),
	} {
		rec := local
		if name == "recorded with the modification time alone" {
			rec = old
		}
		if _, ok := Added(rec, l); ok {
			t.Errorf("%s: folding allowed", name)
		}
	}
	other := foldListing(a, b, c)
	other.Schema = arrow.NewSchema([]arrow.Field{{Name: "x", Type: types.Int32}}, nil)
	if _, ok := Added(old, other); ok {
		t.Error("a schema change allowed folding")
	}
	incomplete := recordOf(a, b)
	incomplete.PerFileComplete, incomplete.PerFile = false, nil
	if _, ok := Added(incomplete, foldListing(a, b, c)); ok {
		t.Error("a record without its file list allowed folding")
	}
}
