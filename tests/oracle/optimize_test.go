package oracle

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/gen"
	"github.com/loredb/lore/types"
)

// TestOptimizedFilesReadByDuckDB checks that the files OPTIMIZE writes are read by
// DuckDB as Lore reads them: the same rows, each file sorted by the clustering
// column, the footer's sorting and key-value metadata visible.
func TestOptimizedFilesReadByDuckDB(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "ev")
	if err := gen.Events(ctx, gen.EventsOptions{Rows: 30_000, Files: 3, Out: dir, Seed: 5, RowGroupRows: 4_000}); err != nil {
		t.Fatal(err)
	}
	e, err := lore.Open(ctx, lore.Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	run := func(q string) [][]string {
		t.Helper()
		res, err := e.Query(ctx, q, nil)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return renderResult(res)
	}
	run("CREATE TABLE ev WITH (location = " + types.QuoteString(dir) + ", clustered_by = ARRAY['user_id', 'ts'])")
	run("OPTIMIZE ev WITH (row_group_rows = 5000, file_bytes = 300000)")
	db, err := Open(ctx)
	if err != nil {
		t.Skipf("DuckDB is not available: %v", err)
	}
	defer db.Close()
	glob := types.QuoteString(filepath.Join(dir, "*.parquet"))
	const agg = "SELECT count(*), sum(user_id), count(DISTINCT category), sum(status), count(amount) FROM "
	want := run(agg + "ev")
	_, got, err := db.Query(ctx, agg+"read_parquet("+glob+")")
	if err != nil {
		t.Fatal(err)
	}
	if msg := compareBags(got, want); msg != "" {
		t.Fatalf("DuckDB reads other rows: %s", msg)
	}
	// Within each file, (user_id, ts) never goes down.
	_, bad, err := db.Query(ctx, `SELECT count(*) FROM (
		SELECT (user_id, ts) < lag((user_id, ts)) OVER (PARTITION BY filename ORDER BY file_row_number) AS down
		FROM read_parquet(`+glob+`, filename = true, file_row_number = true)) WHERE down`)
	if err != nil {
		t.Fatal(err)
	}
	if bad[0][0] != "0" {
		t.Fatalf("%s rows out of order", bad[0][0])
	}
	_, kv, err := db.Query(ctx, "SELECT DISTINCT decode(value) FROM parquet_kv_metadata("+glob+") WHERE decode(key) = 'lore.layout.clustered_by'")
	if err != nil {
		t.Fatal(err)
	}
	if len(kv) != 1 || kv[0][0] != "user_id,ts" {
		t.Fatalf("clustered_by metadata %v", kv)
	}
}
