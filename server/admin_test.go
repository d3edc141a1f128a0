package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/loredb/lore/gen"
)

// land writes a small events file into dir under name: a file that lands in a
// table's source and moves its version.
func land(t *testing.T, dir, name string) {
	t.Helper()
	more := filepath.Join(t.TempDir(), "more")
	if err := gen.Events(context.Background(), gen.EventsOptions{Rows: 100, Out: more, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(more, gen.EventsFileName(0)), filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// mode is the execution mode of a json statement reply's record.
func mode(m map[string]any) string {
	return m["record"].(map[string]any)["execution"].(map[string]any)["mode"].(string)
}

func TestClearCache(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	const q = "SELECT count(*) FROM ev WHERE user_id > 10"
	f.ok(f.reader, q)
	if m := f.ok(f.reader, q); mode(m) != "cache" {
		t.Fatalf("the second run is not a cache hit: %s", mode(m))
	}
	if r := f.do("DELETE", "/v1/cache", f.reader, nil); r.status != 403 || r.code(t) != "FORBIDDEN" {
		t.Fatalf("reader: %d %s", r.status, r.body)
	}
	for _, ep := range [][2]string{{"DELETE", "/v1/cache"}, {"GET", "/v1/statistics"}} {
		if r := f.do(ep[0], ep[1], "", nil); r.status != 401 || r.code(t) != "UNAUTHENTICATED" {
			t.Errorf("%s %s without a token: %d %s", ep[0], ep[1], r.status, r.body)
		}
	}
	r := f.do("DELETE", "/v1/cache", f.admin, nil)
	if m := r.json(t); r.status != 200 || m["results_dropped"] != 1.0 || m["bytes_dropped"].(float64) <= 0 {
		t.Fatalf("DELETE /v1/cache: %d %s", r.status, r.body)
	}
	if m := f.ok(f.reader, q); mode(m) != "scan" {
		t.Fatalf("after the cache was emptied: %s", mode(m))
	}
	if m := f.do("DELETE", "/v1/cache", f.admin, nil).json(t); m["results_dropped"] != 1.0 {
		t.Fatalf("the result computed again is kept again: %v", m)
	}
}

func TestAllStatistics(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	gone := filepath.Join(t.TempDir(), "gone")
	if err := gen.Events(context.Background(), gen.EventsOptions{Rows: 100, Out: gone, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	f.ok(f.admin, fmt.Sprintf("CREATE TABLE gone WITH (location = '%s', format = 'parquet')", gone))
	f.ok(f.admin, fmt.Sprintf("CREATE TABLE bare WITH (location = '%s', format = 'parquet')", f.dir))
	f.ok(f.admin, "ANALYZE ev")
	f.ok(f.admin, "ANALYZE gone")
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	if r := f.do("GET", "/v1/statistics", f.reader, nil); r.status != 403 || r.code(t) != "FORBIDDEN" {
		t.Fatalf("reader: %d %s", r.status, r.body)
	}
	get := func() map[string]map[string]any {
		r := f.do("GET", "/v1/statistics", f.admin, nil)
		if r.status != 200 {
			t.Fatalf("GET /v1/statistics: %d %s", r.status, r.body)
		}
		out := map[string]map[string]any{}
		for _, x := range r.json(t)["tables"].([]any) {
			out[x.(map[string]any)["table"].(string)] = x.(map[string]any)
		}
		return out
	}
	all := get()
	ev := all["ev"]
	if len(all) != 3 || ev["stale"] != false || ev["rows"] != 20_000.0 || ev["zones"].(float64) < 2 || ev["computed_at_ms"].(float64) <= 0 ||
		ev["source_version"] == nil || ev["error"] != nil {
		t.Fatalf("ev: %v", ev)
	}
	if e, _ := all["gone"]["error"].(map[string]any); e == nil || e["code"] != "SOURCE_UNAVAILABLE" {
		t.Errorf("a table whose source is gone: %v", all["gone"])
	}
	if e, _ := all["bare"]["error"].(map[string]any); e == nil || e["code"] != "STATISTICS_UNAVAILABLE" {
		t.Errorf("a table never analyzed: %v", all["bare"])
	}
	land(t, f.dir, "landed.parquet")
	if ev := get()["ev"]; ev["stale"] != true {
		t.Errorf("after a file landed: %v", ev)
	}
}
