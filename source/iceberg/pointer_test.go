package iceberg

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage"
)

// TestOpenPointer opens a table by the metadata file a pointer names: relative to the
// catalog's directory (under it, and where its segments overlap the directory's), then
// moved to a later metadata file, which changes the snapshot and the identity.
func TestOpenPointer(t *testing.T) {
	tab := writeTable(t)
	ctx := context.Background()
	store := storage.Local{}
	// v1: the same table before snapshot 3 was committed.
	v3, err := os.ReadFile(filepath.Join(tab.dir, "metadata", "v3.metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	v1 := bytes.Replace(v3, []byte(`"current-snapshot-id": 3`), []byte(`"current-snapshot-id": 1`), 1)
	if err := os.WriteFile(filepath.Join(tab.dir, "metadata", "v1.metadata.json"), v1, 0o644); err != nil {
		t.Fatal(err)
	}
	current := "metadata/v1.metadata.json"
	pointer := func(context.Context) (string, error) { return current, nil }
	open := func(base string) *source.Listing {
		t.Helper()
		l, err := OpenPointer(ctx, store, "sqlite:cat.db#ns.t", base, pointer, source.AsOf{})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	l1 := open(tab.dir)
	if l1.Lake.SnapshotID == 0 || len(readAll(t, l1)) != 8 {
		t.Fatalf("v1: snapshot %d, rows %q", l1.Lake.SnapshotID, readAll(t, l1))
	}
	// A pointer relative to an ancestor of the catalog's directory, sharing segments.
	current = filepath.Join(filepath.Base(tab.dir), "metadata", "v1.metadata.json")
	if l := open(tab.dir); l.Lake.SnapshotID != l1.Lake.SnapshotID {
		t.Errorf("overlapping relative pointer: snapshot %d, want %d", l.Lake.SnapshotID, l1.Lake.SnapshotID)
	}
	// The commit: the pointer moves to v3, absolute.
	current = filepath.Join(tab.dir, "metadata", "v3.metadata.json")
	l3 := open(filepath.Join(t.TempDir(), "elsewhere"))
	if l3.Lake.SnapshotID == l1.Lake.SnapshotID || bytes.Equal(l3.Lake.Identity, l1.Lake.Identity) {
		t.Errorf("after the commit: snapshot %d, identity unchanged %v", l3.Lake.SnapshotID, bytes.Equal(l3.Lake.Identity, l1.Lake.Identity))
	}
	if got, want := readAll(t, l3), []string{"x 2 b", "x 4 d", "x 5 e", "x 6 f", "y 1 a", "y 2 b"}; !slices.Equal(got, want) {
		t.Errorf("v3 rows %q, want %q", got, want)
	}

	// A pointer's error is the table's; a metadata file that is gone is unavailable.
	sentinel := errs.New(errs.SourceUnavailable, "no such table")
	if _, err := OpenPointer(ctx, store, "x", tab.dir, func(context.Context) (string, error) { return "", sentinel }, source.AsOf{}); !errors.Is(err, sentinel) {
		t.Errorf("pointer error: %v", err)
	}
	current = "metadata/v9.metadata.json"
	if _, err := OpenPointer(ctx, store, "x", tab.dir, pointer, source.AsOf{}); errs.CodeOf(err) != errs.SourceUnavailable {
		t.Errorf("missing metadata file: %v", err)
	}
	// A pointer to a file that is not metadata is corrupt.
	junk := filepath.Join(tab.dir, "metadata", "junk.metadata.json")
	if err := os.WriteFile(junk, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	current = junk
	if _, err := OpenPointer(ctx, store, "x", tab.dir, pointer, source.AsOf{}); errs.CodeOf(err) != errs.CorruptSource {
		t.Errorf("junk metadata: %v", err)
	}
}
