package lore_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/gen"
)

// TestBoundsIndexAnswersScans: with a current record, a filtered scan asks the
// catalog's bounds index which files can match and opens only those (here on forty
// files: the engine asks it from a thousand, and the test lowers that). Every predicate
// shape the index answers (and ones it does not, beside them) gives the answer the
// scan gives without statistics; a point on the clustered column opens one or two
// files of forty.
func TestBoundsIndexAnswersScans(t *testing.T) {
	ctx := context.Background()
	defer lore.SetBoundsIndexMinFiles(lore.SetBoundsIndexMinFiles(1))
	dir := filepath.Join(t.TempDir(), "events")
	if err := gen.Events(ctx, gen.EventsOptions{Rows: 4000, Files: 40, Out: dir, Seed: 11, RowGroupRows: 100, ClusteredBy: "ts"}); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	e := open(t, lore.Options{Home: home, NoAutoRefresh: true})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	query(t, e, "ANALYZE ev")
	tsAt := func(k int) string {
		return "TIMESTAMP '" + cell(run(t, e, fmt.Sprintf("SELECT ts::VARCHAR FROM ev ORDER BY ts LIMIT 1 OFFSET %d", k), noCache), 0, 0) + "'"
	}
	a, b := tsAt(1010), tsAt(2990)
	withStats := map[string]string{"result_cache": "false"}
	for _, tc := range []struct {
		where    string
		maxFiles int64
	}{
		{"ts = " + a, 2},
		{"ts IN (" + a + ", " + b + ")", 40},
		{"ts < " + a, 40},
		{"ts >= " + b, 40},
		{"ts > " + a + " AND ts <= " + b, 40},
		{"ts BETWEEN " + a + " AND " + a, 2},
		{"ts = " + a + " AND user_id > 0", 2},
		{"ts = " + a + " AND amount IS NULL", 2},
		{"country = 'DE' AND ts < " + b, 40},
		{"status IN (1, 2) OR ts = " + a, 40},
	} {
		// sum(user_id % 7) is no statistic: the rows are read.
		q := "SELECT count(*), sum(user_id % 7) FROM ev WHERE " + tc.where
		want := run(t, e, q, noCache)
		got := run(t, e, q, withStats)
		if cell(got, 0, 0) != cell(want, 0, 0) || cell(got, 0, 1) != cell(want, 0, 1) {
			t.Errorf("%s: %s %s, without statistics %s %s", tc.where, cell(got, 0, 0), cell(got, 0, 1),
				cell(want, 0, 0), cell(want, 0, 1))
		}
		if len(got.Record.Scans) != 1 {
			t.Fatalf("%s: %d scans", tc.where, len(got.Record.Scans))
		}
		if s := got.Record.Scans[0].Snapshot; s.FilesOpened > tc.maxFiles || s.FilesConsidered != 40 ||
			s.FilesOpened+s.FilesSkipped != 40 {
			t.Errorf("%s: counters %+v", tc.where, s)
		}
	}

	// The files skipped are the ones the index rules out, not the record's document:
	// an index whose ts bounds (column 0) are made to exclude every value rules every
	// file out, though the document still holds the true bounds.
	// The engine writes the catalog too (the query log): wait for its lock.
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(home, "catalog.db")+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `UPDATE file_column_stats SET min = x'00', max = x'00', level = 0
		WHERE column_id = 0`); err != nil {
		t.Fatal(err)
	}
	got := run(t, e, "SELECT count(*), sum(user_id % 7) FROM ev WHERE ts = "+a, withStats)
	if len(got.Record.Scans) != 1 {
		t.Fatalf("%d scans", len(got.Record.Scans))
	}
	if s := got.Record.Scans[0].Snapshot; cell(got, 0, 0) != "0" || s.FilesOpened != 0 {
		t.Errorf("the scan did not take the index's answer: %s rows, %+v", cell(got, 0, 0), s)
	}
}
