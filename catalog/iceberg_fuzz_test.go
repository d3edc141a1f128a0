package catalog

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/shareddata"
)

// FuzzParseIcebergLocation checks that any location parses without panicking, that a
// location of neither form is left alone, and that one that parses renders back to
// itself.
func FuzzParseIcebergLocation(f *testing.F) {
	for _, s := range []string{"sqlite:/a/cat.db#default.t", "sqlite:c.db?catalog=x#a.b.t", "lore:ns.t",
		"lore:?catalog=x#ns.t", "/a/b", "sqlite:#", "lore:", "sqlite:a?catalog=b#c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, loc string) {
		ref, ok, err := ParseIcebergLocation(loc)
		if !ok {
			if err != nil {
				t.Fatalf("%q: not a catalog location, yet an error: %v", loc, err)
			}
			return
		}
		if err != nil {
			if errs.CodeOf(err) != errs.Analysis {
				t.Fatalf("%q: %v, want an ANALYSIS_ERROR", loc, err)
			}
			return
		}
		back, ok, err := ParseIcebergLocation(ref.String())
		if !ok || err != nil || back != ref {
			t.Fatalf("%q parses as %+v, renders as %q, which parses as %+v (%v, %v)", loc, ref, ref.String(), back, ok, err)
		}
	})
}

// FuzzIcebergCatalogFile reads a table's metadata location from arbitrary bytes as a
// catalog file, seeded with pyiceberg's catalog and Lore's own: the answer is a
// location or an error with a code, never a panic or a hang. Coverage instrumentation
// of the SQLite driver (C translated to Go) makes guided fuzzing crawl; a binary built
// with go test -c and run with -test.fuzz mutates unguided at a few hundred inputs a
// second.
func FuzzIcebergCatalogFile(f *testing.F) {
	if d, err := shareddata.Find(); err == nil {
		if b, err := os.ReadFile(filepath.Join(d, "iceberg", "duckdb-iceberg", "data", "persistent", "column_mapping", "catalog.sqlite")); err == nil {
			f.Add(b)
		}
	}
	dir := f.TempDir()
	ctx := context.Background()
	lore := filepath.Join(dir, "lore.db")
	c, err := Open(ctx, lore)
	if err != nil {
		f.Fatal(err)
	}
	if _, _, err := c.CreateTable(ctx, Table{Name: "my_table", Location: "/w", Format: "iceberg", Columns: []Column{{Name: "a", Type: "BIGINT"}},
		Iceberg: &IcebergEntry{Namespace: "default", MetadataLocation: "/w/metadata/v1.metadata.json"}}, false); err != nil {
		f.Fatal(err)
	}
	if err := c.Close(); err != nil {
		f.Fatal(err)
	}
	// Into one file, without a WAL beside it.
	db, err := sql.Open("sqlite3", dsn(lore))
	if err != nil {
		f.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "PRAGMA journal_mode = DELETE"); err != nil {
		f.Fatal(err)
	}
	db.Close()
	if b, err := os.ReadFile(lore); err == nil {
		f.Add(b)
	}
	f.Add([]byte("SQLite format 3\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "cat.db")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, ref := range []IcebergRef{{File: p, Namespace: "default", Table: "my_table"}, {File: p, Catalog: "my_catalog", Namespace: "default", Table: "x"}} {
			loc, err := IcebergMetadataLocation(ctx, ref)
			switch errs.CodeOf(err) {
			case "":
				if loc == "" {
					t.Fatalf("an empty metadata location without an error")
				}
			case errs.SourceUnavailable, errs.CorruptSource, errs.Analysis:
			default:
				t.Fatalf("%v: unexpected code %s", err, errs.CodeOf(err))
			}
		}
	})
}
