package lore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/gen"
	"github.com/loredb/lore/source"
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
		b.Run(q.name, func(b *testing.B) {
			res, err := e.Query(context.Background(), q.sql, nil)
			if err != nil || res.Record.Execution.Mode != "context" {
				b.Fatalf("not answered from statistics: %v %+v", err, res)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Query(context.Background(), q.sql, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
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
