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
)

// skipFiles is the number of files of the file-skipping table: the most a record
// keeps per-file bounds for (SPEC §3).
const skipFiles = 10_000

// tenThousandFiles writes an events table of skipFiles files of 3 rows each,
// clustered by ts (so that each file holds its own slice of time), registers it in
// an engine under home and analyzes it. It returns the engine (closed with tb) and a
// point query on ts that one file answers.
func tenThousandFiles(tb testing.TB) (*lore.Engine, string) {
	tb.Helper()
	ctx := context.Background()
	dir := filepath.Join(tb.TempDir(), "events")
	if err := gen.Events(ctx, gen.EventsOptions{Rows: 3 * skipFiles, Files: skipFiles, Out: dir, Seed: 5, ClusteredBy: "ts"}); err != nil {
		tb.Fatal(err)
	}
	e, err := lore.Open(ctx, lore.Options{Home: tb.TempDir(), NoAutoRefresh: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	for _, sql := range []string{
		fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir),
		"ANALYZE ev",
	} {
		if _, err := e.Query(ctx, sql, nil); err != nil {
			tb.Fatal(err)
		}
	}
	res, err := e.Query(ctx, "SELECT ts::VARCHAR FROM ev ORDER BY ts LIMIT 1 OFFSET 15001", nil)
	if err != nil {
		tb.Fatal(err)
	}
	return e, "SELECT count(*), sum(amount) FROM ev WHERE ts = '" + cell(res, 0, 0) + "'"
}

// TestFileSkipping10k: a point query on a table of 10,000 files with a record opens
// at most three footers, the others skipped by their recorded bounds.
func TestFileSkipping10k(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 10,000 files")
	}
	e, lookup := tenThousandFiles(t)
	source.DropCachedFooters()
	res, err := e.Query(context.Background(), lookup, map[string]string{"result_cache": "false"})
	if err != nil {
		t.Fatal(err)
	}
	if got := cell(res, 0, 0); got != "1" {
		t.Errorf("count = %s, want 1", got)
	}
	s := res.Record.Scans[0].Snapshot
	if s.FilesConsidered != skipFiles || s.FilesOpened > 3 || s.FilesSkipped < skipFiles-3 {
		t.Errorf("counters %+v", s)
	}
}

// BenchmarkFileSkipping10k is a point query on a table of 10,000 files with a record
// ("query": the one file left holds 3 rows, so this is mostly planning) and its
// planning alone ("plan": a dry run, which plans the scan and reads nothing). Both
// report the footers opened per statement.
func BenchmarkFileSkipping10k(b *testing.B) {
	e, lookup := tenThousandFiles(b)
	ctx := context.Background()
	for _, bc := range []struct {
		name     string
		settings map[string]string
	}{
		{"query", map[string]string{"result_cache": "false"}},
		{"plan", map[string]string{"result_cache": "false", "dry_run": "true"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var opened int64
			for b.Loop() {
				res, err := e.Query(ctx, lookup, bc.settings)
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Record.Scans) > 0 {
					opened += res.Record.Scans[0].FilesOpened
				}
			}
			b.ReportMetric(float64(opened)/float64(b.N), "files_opened/op")
		})
	}
}

// TestFileSkippingStaleRewrite: on a table of 1,200 files a point query opens only
// the file that holds the value; after one file is rewritten to hold it too (the
// record is stale and still has the old file's bounds) that file is read as well — a
// changed file is never skipped by bounds it no longer has — and the others stay
// skipped.
func TestFileSkippingStaleRewrite(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 1,200 files")
	}
	ctx := context.Background()
	const files = 1200
	dir := filepath.Join(t.TempDir(), "events")
	if err := gen.Events(ctx, gen.EventsOptions{Rows: 2 * files, Files: files, Out: dir, Seed: 9, ClusteredBy: "ts"}); err != nil {
		t.Fatal(err)
	}
	e := open(t, lore.Options{Home: t.TempDir(), NoAutoRefresh: true})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	query(t, e, "ANALYZE ev")
	ts := cell(run(t, e, "SELECT ts::VARCHAR FROM ev ORDER BY ts LIMIT 1 OFFSET 1201", noCache), 0, 0)
	lookup := "SELECT count(*) FROM ev WHERE ts = '" + ts + "'"
	settings := map[string]string{"result_cache": "false"}
	res := run(t, e, lookup, settings)
	s := res.Record.Scans[0].Snapshot
	if got := cell(res, 0, 0); got != "1" || s.FilesConsidered != files || s.FilesOpened > 2 {
		t.Fatalf("lookup: count %s, counters %+v", got, s)
	}
	// File 0 becomes a copy of file 600, which holds ts.
	b, err := os.ReadFile(filepath.Join(dir, gen.EventsFileName(600)))
	if err != nil {
		t.Fatal(err)
	}
	f0 := filepath.Join(dir, gen.EventsFileName(0))
	if err := os.WriteFile(f0+".tmp", b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(f0+".tmp", f0); err != nil {
		t.Fatal(err)
	}
	res = run(t, e, lookup, settings)
	s = res.Record.Scans[0].Snapshot
	if got := cell(res, 0, 0); got != "2" || s.FilesOpened > 3 || s.FilesSkipped < files-3 {
		t.Fatalf("after rewriting file 0: count %s (want 2), counters %+v", got, s)
	}
}
