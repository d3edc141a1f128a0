package lore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/gen"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/types"
)

// benchEvents writes an events table of rows rows in files files (before the timer
// starts).
func benchEvents(b *testing.B, rows int64, files int) string {
	return benchEventsIn(b, rows, files, "ts")
}

// benchEventsIn is benchEvents with the clustering given ("" for none).
func benchEventsIn(b *testing.B, rows int64, files int, clusteredBy string) string {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "events")
	if err := gen.Events(context.Background(), gen.EventsOptions{Rows: rows, Files: files, Out: dir, Seed: 3, ClusteredBy: clusteredBy}); err != nil {
		b.Fatal(err)
	}
	return dir
}

func benchEngine(b *testing.B, dir string) *lore.Engine {
	b.Helper()
	e, err := lore.Open(context.Background(), lore.Options{Home: b.TempDir(), NoAutoRefresh: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	if _, err := e.Query(context.Background(), fmt.Sprintf("CREATE TABLE events WITH (location = '%s', format = 'parquet')", dir), nil); err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkAnalyzeMetadata is ANALYZE's metadata form over 1,000 files with cold
// footers: every footer is read again in each iteration.
func BenchmarkAnalyzeMetadata(b *testing.B) {
	dir := benchEvents(b, 1_000_000, 1000)
	e := benchEngine(b, dir)
	b.ReportAllocs()
	for b.Loop() {
		source.DropCachedFooters()
		if _, err := e.Query(context.Background(), "ANALYZE events", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkContextAnswer is a statement answered from statistics, end to end
// through Engine.Query (parse, pin the version, decide, answer, log the record),
// over 100 files.
// "aligned" is a filtered aggregate whose predicate falls on row-group boundaries:
// every zone is skipped or answered from its partials (ANALYZE with sketches, for
// the sums).
func BenchmarkContextAnswer(b *testing.B) {
	dir := benchEvents(b, 1_000_000, 100)
	e := benchEngine(b, dir)
	if _, err := e.Query(context.Background(), "ANALYZE events WITH (sketches = true)", nil); err != nil {
		b.Fatal(err)
	}
	for _, q := range []struct{ name, sql string }{
		{"table", "SELECT count(*), min(ts), max(ts), min(user_id), max(status) FROM events"},
		// File 50 of 100 starts the second half of the time range.
		{"aligned", "SELECT count(*), min(amount), max(amount), sum(amount), avg(amount) FROM events WHERE ts >= TIMESTAMP '2024-02-15 12:00:00'"},
	} {
		for _, mode := range []string{"context", "cache"} {
			// context: answered from the record every time; cache: from the result
			// the first answer left in the result cache.
			settings := map[string]string{"result_cache": fmt.Sprint(mode == "cache")}
			b.Run(q.name+"/"+mode, func(b *testing.B) {
				if _, err := e.Query(context.Background(), q.sql, settings); err != nil {
					b.Fatal(err)
				}
				res, err := e.Query(context.Background(), q.sql, settings)
				if err != nil || res.Record.Execution.Mode != mode {
					b.Fatalf("not answered in mode %s: %v %+v", mode, err, res)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := e.Query(context.Background(), q.sql, settings); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkZonesUnclustered is a filtered aggregate over data in random time order,
// where no zone can be skipped or answered, with the zone planner (statistics on)
// and without it: planning zones must not cost more than it saves.
func BenchmarkZonesUnclustered(b *testing.B) {
	dir := benchEventsIn(b, 2_000_000, 8, "")
	e := benchEngine(b, dir)
	if _, err := e.Query(context.Background(), "ANALYZE events WITH (sketches = true)", nil); err != nil {
		b.Fatal(err)
	}
	const sql = "SELECT count(*), min(amount), max(amount), sum(amount), avg(amount) FROM events WHERE ts >= TIMESTAMP '2024-03-20'"
	for _, use := range []string{"true", "false"} {
		b.Run("use_statistics="+use, func(b *testing.B) {
			settings := map[string]string{"use_statistics": use}
			for b.Loop() {
				if _, err := e.Query(context.Background(), sql, settings); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchDeltaTable is the 10,000-file Delta table source/delta's benchmarks write and
// cache (1,000 commits and a checkpoint; file i holds the ids i*100 … i*100+99),
// defined as t in a fresh engine. The table is not written here: the benchmarks of
// source/delta build it, and these skip until they have.
func benchDeltaTable(b *testing.B) *lore.Engine {
	b.Helper()
	dir := filepath.Join(os.TempDir(), "lore-bench-delta-10k-v1")
	if _, err := os.Stat(filepath.Join(dir, "_delta_log", "_last_checkpoint")); err != nil {
		b.Skipf("no Delta table at %s: write it with go test ./source/delta -run TestBigTableReads", dir)
	}
	e, err := lore.Open(context.Background(), lore.Options{Home: b.TempDir(), NoAutoRefresh: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	if _, err := e.Query(context.Background(), fmt.Sprintf("CREATE TABLE t WITH (location = %s, format = 'delta')", types.QuoteString(dir)), nil); err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkDeltaPointQuery is a point query on the 10,000-file Delta table, end to
// end: the add actions' bounds must leave one file to open.
func BenchmarkDeltaPointQuery(b *testing.B) {
	e := benchDeltaTable(b)
	ctx := context.Background()
	const sql = "SELECT * FROM t WHERE id = 654321"
	settings := map[string]string{"result_cache": "false"}
	var opened, skipped int64
	b.ReportAllocs()
	for b.Loop() {
		res, err := e.Query(ctx, sql, settings)
		if err != nil {
			b.Fatal(err)
		}
		if res.NumRows() != 1 || len(res.Record.Scans) != 1 {
			b.Fatalf("%d rows, %d scans", res.NumRows(), len(res.Record.Scans))
		}
		opened += res.Record.Scans[0].FilesOpened
		skipped += res.Record.Scans[0].FilesSkipped
	}
	b.ReportMetric(float64(opened)/float64(b.N), "files_opened/op")
	b.ReportMetric(float64(skipped)/float64(b.N), "files_skipped/op")
}

// BenchmarkDeltaAnalyze is ANALYZE's metadata form over the 10,000-file Delta table,
// with no footer cached: every add states its statistics, so the record comes from
// the log alone (footers_opened/op says whether any footer was read).
func BenchmarkDeltaAnalyze(b *testing.B) {
	e := benchDeltaTable(b)
	ctx := context.Background()
	var opened int64
	b.ReportAllocs()
	for b.Loop() {
		source.DropCachedFooters()
		res, err := e.Query(ctx, "ANALYZE t", nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range res.Record.Scans {
			opened += s.FilesOpened
		}
	}
	b.ReportMetric(float64(opened)/float64(b.N), "footers_opened/op")
}

// BenchmarkDeltaContextAnswer is count/min/max of the 10,000-file Delta table after
// ANALYZE: answered from the record, with the log listed to find the version.
func BenchmarkDeltaContextAnswer(b *testing.B) {
	e := benchDeltaTable(b)
	ctx := context.Background()
	if _, err := e.Query(ctx, "ANALYZE t", nil); err != nil {
		b.Fatal(err)
	}
	benchContextAnswer(b, e, nil)
}

// BenchmarkIcebergContextAnswer is count/min/max of the 10,000-file Iceberg table
// after ANALYZE: answered from the record, with the metadata found through the
// version hint to know the snapshot.
func BenchmarkIcebergContextAnswer(b *testing.B) {
	dir := filepath.Join(os.TempDir(), "lore-bench-iceberg-10k-v1")
	if _, err := os.Stat(filepath.Join(dir, "metadata", "version-hint.text")); err != nil {
		b.Skipf("no Iceberg table at %s: write it with go test ./source/iceberg -run TestBigTableReads", dir)
	}
	ctx := context.Background()
	e, err := lore.Open(ctx, lore.Options{Home: b.TempDir(), NoAutoRefresh: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	for _, q := range []string{fmt.Sprintf("CREATE TABLE t WITH (location = %s, format = 'iceberg')", types.QuoteString(dir)), "ANALYZE t"} {
		if _, err := e.Query(ctx, q, nil); err != nil {
			b.Fatal(err)
		}
	}
	benchContextAnswer(b, e, func(res *lore.Result) {
		if got := fmt.Sprint(types.ValueAt(res.Batches[0].Column(0), 0), types.ValueAt(res.Batches[0].Column(2), 0)); got != "1000000 999999" {
			b.Fatalf("count(*), max(id) = %s, want 1000000 999999", got)
		}
	})
}

// benchContextAnswer times count/min/max of table t of e, which must be answered from
// its record (and pass check, when given).
func benchContextAnswer(b *testing.B, e *lore.Engine, check func(*lore.Result)) {
	ctx := context.Background()
	const sql = "SELECT count(*), min(id), max(id) FROM t"
	settings := map[string]string{"result_cache": "false"}
	res, err := e.Query(ctx, sql, settings)
	if err != nil {
		b.Fatal(err)
	}
	if res.Record.Execution.Mode != "context" {
		b.Fatalf("answered in mode %q (%s), want context", res.Record.Execution.Mode, res.Record.Execution.Detail)
	}
	if check != nil {
		check(res)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Query(ctx, sql, settings); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDryRun is a dry run of a pruned aggregate over 1M rows in 10 files next to
// the run itself: the estimate costs the plan (footers cached) and the record, no
// reads; with the guardrails set, the run shows what the row breaker and result
// limits cost.
func BenchmarkDryRun(b *testing.B) {
	dir := benchEvents(b, 1_000_000, 10)
	e := benchEngine(b, dir)
	sql := "SELECT category, sum(amount) FROM events WHERE ts >= TIMESTAMP '2024-03-01' GROUP BY category"
	for _, c := range []struct {
		name     string
		settings map[string]string
	}{
		{"estimate", map[string]string{"use_statistics": "false", "dry_run": "true"}},
		{"run", map[string]string{"use_statistics": "false"}},
		{"run,guardrails", map[string]string{"use_statistics": "false", "max_rows_scanned": "100000000",
			"max_result_rows": "1000000", "max_result_bytes": "1GiB", "max_execution_ms": "600000"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Query(context.Background(), sql, c.settings); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
