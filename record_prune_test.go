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

// TestRecordBoundsSkipFilesBeforeFooters: once ANALYZE has recorded a table's
// per-file bounds, a filtered scan opens only the files they admit, with no footer in
// memory (a new process): the others are skipped unopened. A record that is
// stale keeps the bounds of the files that have not changed since; use_statistics =
// false skips nothing that way; every answer is the same.
func TestRecordBoundsSkipFilesBeforeFooters(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "events")
	if err := gen.Events(ctx, gen.EventsOptions{Rows: 4000, Files: 20, Out: dir, Seed: 3, RowGroupRows: 100, ClusteredBy: "ts"}); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	e := open(t, lore.Options{Home: home, NoAutoRefresh: true})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	query(t, e, "ANALYZE ev")
	ts := cell(run(t, e, "SELECT ts::VARCHAR FROM ev ORDER BY ts LIMIT 1 OFFSET 1010", noCache), 0, 0)
	lookup := "SELECT count(*), min(user_id) FROM ev WHERE ts = '" + ts + "'"
	want := cell(run(t, e, lookup, noCache), 0, 0)
	e.Close()

	scanOf := func(settings map[string]string) (source.Snapshot, string) {
		t.Helper()
		source.DropCachedFooters()
		e := open(t, lore.Options{Home: home, NoAutoRefresh: true})
		defer e.Close()
		res, err := e.Query(ctx, lookup, settings)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Record.Scans) != 1 {
			t.Fatalf("%d scans", len(res.Record.Scans))
		}
		return res.Record.Scans[0].Snapshot, cell(res, 0, 0)
	}
	s, got := scanOf(map[string]string{"result_cache": "false"})
	if got != want || s.FilesOpened > 2 || s.FilesSkipped < 18 {
		t.Fatalf("with a current record: %s (want %s), %+v", got, want, s)
	}
	s, got = scanOf(noCache)
	if got != want || s.FilesOpened != 20 {
		t.Fatalf("with use_statistics = false: %s (want %s), %+v", got, want, s)
	}
	// Rewrite one file: the record is stale, and rules out every other file still
	// (their change markers are those it measured); the rewritten one is opened.
	f := filepath.Join(dir, gen.EventsFileName(0))
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f+".tmp", b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(f+".tmp", f); err != nil {
		t.Fatal(err)
	}
	s, got = scanOf(map[string]string{"result_cache": "false"})
	if got != want || s.FilesOpened > 3 || s.FilesSkipped < 17 {
		t.Fatalf("with a stale record: %s (want %s), %+v", got, want, s)
	}
}
