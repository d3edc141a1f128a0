package lore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/gen"
)

// TestResultCache: the same query over the same source versions is answered from
// the result cache (mode cache, naming the query that computed it) with the same
// rows; a file that lands moves the version, and the next identical statement
// computes; so does a location read by path; result_cache = false, a setting that
// changes results, a catalog change and a statement that reads the clock all
// compute.
func TestResultCache(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	dir := filepath.Join(root, "events")
	write := func(files int) {
		t.Helper()
		if err := gen.Events(ctx, gen.EventsOptions{Rows: int64(files) * 500, Files: files, Out: dir, Seed: 9}); err != nil {
			t.Fatal(err)
		}
	}
	write(2)
	e := open(t, lore.Options{NoAutoRefresh: true})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	q := "SELECT status, count(*), sum(user_id) FROM ev GROUP BY status ORDER BY status"
	first := query(t, e, q)
	second := query(t, e, q)
	if m := second.Record.Execution; m.Mode != "cache" || m.CachedFrom != first.Record.ID {
		t.Fatalf("the same query again: %+v, want mode cache from %s", m, first.Record.ID)
	}
	if resultText(first) != resultText(second) {
		t.Fatal("the cached result differs from the computed one")
	}
	if m := run(t, e, q, map[string]string{"result_cache": "false"}).Record.Execution.Mode; m != "scan" {
		t.Fatalf("result_cache = false: mode %s", m)
	}
	if m := run(t, e, "SET SESSION approximate = true; "+q, nil).Record.Execution.Mode; m != "scan" {
		t.Fatalf("other settings: mode %s", m)
	}

	// A file lands: the table's version moved, the statement computes anew.
	write(3)
	third := query(t, e, q)
	if third.Record.Execution.Mode != "scan" || resultText(third) == resultText(first) {
		t.Fatalf("after a file landed: mode %s, same rows %v", third.Record.Execution.Mode, resultText(third) == resultText(first))
	}
	if m := query(t, e, q).Record.Execution.Mode; m != "cache" {
		t.Fatalf("the new version again: mode %s", m)
	}

	// By path too.
	pq := fmt.Sprintf("SELECT count(*) FROM '%s'", dir)
	query(t, e, pq)
	if m := query(t, e, pq).Record.Execution.Mode; m != "cache" {
		t.Fatalf("a path query again: mode %s", m)
	}
	write(4)
	if res := query(t, e, pq); res.Record.Execution.Mode != "scan" || cell(res, 0, 0) != "2000" {
		t.Fatalf("a path query after a file landed: mode %s, %s rows", res.Record.Execution.Mode, cell(res, 0, 0))
	}

	// A catalog change: the same name is another table now.
	other := filepath.Join(root, "other")
	if err := gen.Events(ctx, gen.EventsOptions{Rows: 100, Files: 1, Out: other, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	query(t, e, "SELECT count(*) FROM ev")
	query(t, e, "DROP TABLE ev")
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", other))
	if res := query(t, e, "SELECT count(*) FROM ev"); res.Record.Execution.Mode == "cache" || cell(res, 0, 0) != "100" {
		t.Fatalf("after the table was replaced: mode %s, %s rows", res.Record.Execution.Mode, cell(res, 0, 0))
	}

	// The clock: never kept.
	clock := "SELECT count(*), max(now()) FROM ev"
	query(t, e, clock)
	if m := query(t, e, clock).Record.Execution.Mode; m == "cache" {
		t.Fatal("a statement that reads the clock was answered from the cache")
	}
}
