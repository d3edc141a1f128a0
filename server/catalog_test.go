package server_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/loredb/lore/gen"
)

func TestCatalogAndFreshness(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	tables := f.do("GET", "/v1/catalog/tables", f.reader, nil).json(t)["tables"].([]any)
	if len(tables) != 1 || tables[0].(map[string]any)["table"] != "ev" || len(tables[0].(map[string]any)["columns"].([]any)) != 8 {
		t.Fatalf("tables: %v", tables)
	}
	// No statistics yet: 404 STATISTICS_UNAVAILABLE.
	if r := f.do("GET", "/v1/catalog/tables/ev/statistics", f.reader, nil); r.status != 404 || r.code(t) != "STATISTICS_UNAVAILABLE" {
		t.Fatalf("statistics before ANALYZE: %d %s", r.status, r.body)
	}
	v := f.do("GET", "/v1/catalog/tables/ev/version", f.reader, nil)
	etag := v.header.Get("ETag")
	sv := v.json(t)["source_version"].(map[string]any)
	if v.status != 200 || etag != `"`+sv["identity_sha256"].(string)+`"` || sv["files"] != 2.0 {
		t.Fatalf("version: %d %s %s", v.status, etag, v.body)
	}
	if r := f.do("GET", "/v1/catalog/tables/ev/version", f.reader, nil, "If-None-Match", etag); r.status != 304 || len(r.body) != 0 {
		t.Fatalf("If-None-Match: %d", r.status)
	}
	f.ok(f.admin, "ANALYZE ev")
	st := f.do("GET", "/v1/catalog/tables/ev/statistics", f.reader, nil)
	m := st.json(t)
	if st.status != 200 || m["stale"] != false || m["statistics"].(map[string]any)["row_count"] == nil && m["statistics"] == nil {
		t.Fatalf("statistics: %d %s", st.status, st.body)
	}
	stTag := st.header.Get("ETag")
	if r := f.do("GET", "/v1/catalog/tables/ev/statistics", f.reader, nil, "If-None-Match", stTag); r.status != 304 {
		t.Fatalf("statistics If-None-Match: %d", r.status)
	}
	// A file lands: the version moves, the old ETag no longer matches, the record is stale.
	more := filepath.Join(t.TempDir(), "more")
	if err := gen.Events(context.Background(), gen.EventsOptions{Rows: 100, Out: more, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(more, gen.EventsFileName(0)), filepath.Join(f.dir, "landed.parquet")); err != nil {
		t.Fatal(err)
	}
	if r := f.do("GET", "/v1/catalog/tables/ev/version", f.reader, nil, "If-None-Match", etag); r.status != 200 || r.header.Get("ETag") == etag {
		t.Fatalf("version after a landing: %d %s", r.status, r.header.Get("ETag"))
	}
	if m := f.do("GET", "/v1/catalog/tables/ev/statistics", f.reader, nil, "If-None-Match", stTag).json(t); m["stale"] != true {
		t.Fatalf("statistics after a landing: %v", m["stale"])
	}
	// The source is gone: 502 SOURCE_UNAVAILABLE.
	if err := os.RemoveAll(f.dir); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/v1/catalog/tables/ev/version", "/v1/catalog/tables/ev/statistics"} {
		if r := f.do("GET", p, f.reader, nil); r.status != 502 || r.code(t) != "SOURCE_UNAVAILABLE" {
			t.Errorf("%s of a missing source: %d %s", p, r.status, r.body)
		}
	}
	if r := f.do("GET", "/v1/catalog/tables/nope/statistics", f.reader, nil); r.status != 404 || r.code(t) != "TABLE_NOT_FOUND" {
		t.Errorf("unknown table: %d %s", r.status, r.body)
	}
}
