package lore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loredb/lore"
	"github.com/loredb/lore/gen"
	"github.com/loredb/lore/internal/shareddata"
	"github.com/loredb/lore/source/deletes"
	"github.com/loredb/lore/types"
)

// deltaFact is one table of the Delta fixtures' facts.json: what an independent
// reader found in it.
type deltaFact struct {
	Table          string   `json:"table"`
	Version        int64    `json:"version"`
	Rows           int64    `json:"rows"`
	Note           string   `json:"note"`
	ColumnFacts    []string `json:"column_facts"`
	LiveFiles      int      `json:"live_files"`
	RowsPerVersion [][]any  `json:"rows_per_version"`
}

func deltaFacts(t *testing.T) (string, []deltaFact) {
	t.Helper()
	dir := filepath.Join(shareddata.Dir(t), "delta")
	b, err := os.ReadFile(filepath.Join(dir, "facts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var facts []deltaFact
	if err := json.Unmarshal(b, &facts); err != nil {
		t.Fatal(err)
	}
	return dir, facts
}

// columnFact is "name: min=X max=Y non-null=N" of facts.json.
type columnFact struct{ name, min, max, nonNull string }

func parseColumnFact(t *testing.T, s string) columnFact {
	t.Helper()
	i := strings.LastIndex(s, ": min=")
	j := strings.LastIndex(s, " max=")
	k := strings.LastIndex(s, " non-null=")
	if i < 0 || j < i || k < j {
		t.Fatalf("unreadable fact %q", s)
	}
	return columnFact{name: s[:i], min: s[i+len(": min=") : j], max: s[j+len(" max=") : k], nonNull: s[k+len(" non-null="):]}
}

// text renders a result cell as the facts print values: NULL as None.
func text(res *lore.Result, r, c int) string {
	for _, b := range res.Batches {
		if r < int(b.NumRows()) {
			v := types.ValueAt(b.Column(c), r)
			if v.Null {
				return "None"
			}
			return v.String()
		}
		r -= int(b.NumRows())
	}
	return "<no row>"
}

// TestDeltaTablesMatchTheirFacts reads every Delta fixture at its latest version and
// checks the rows, and per column the bounds and non-NULL counts, against what an
// independent reader of the protocol found (facts.json).
func TestDeltaTablesMatchTheirFacts(t *testing.T) {
	dir, facts := deltaFacts(t)
	e := open(t, lore.Options{})
	for i, f := range facts {
		t.Run(f.Table, func(t *testing.T) {
			name := fmt.Sprintf("d%d", i)
			loc := filepath.Join(dir, f.Table)
			query(t, e, fmt.Sprintf("CREATE TABLE %s WITH (location = %s, format = 'delta')", name, types.QuoteString(loc)))
			if strings.HasPrefix(f.Note, "LOG-ONLY") {
				// Its data files were never there: the log alone is read (by CREATE
				// TABLE above and source/delta's TestLogOnlyTables).
				return
			}
			res := query(t, e, "SELECT count(*) FROM "+name)
			if got := cell(res, 0, 0); got != fmt.Sprint(f.Rows) {
				t.Errorf("count(*) = %s, want %d", got, f.Rows)
			}
			for _, s := range f.ColumnFacts {
				cf := parseColumnFact(t, s)
				col := types.QuoteIdent(cf.name)
				res := query(t, e, fmt.Sprintf("SELECT CAST(min(%s) AS VARCHAR), CAST(max(%s) AS VARCHAR), count(%s) FROM %s", col, col, col, name))
				if got := [3]string{text(res, 0, 0), text(res, 0, 1), text(res, 0, 2)}; got != [3]string{cf.min, cf.max, cf.nonNull} {
					t.Errorf("%s: min, max, non-null = %q, want %q", cf.name, got, [3]string{cf.min, cf.max, cf.nonNull})
				}
			}
		})
	}
}

// TestDeltaCommitsMakeTheRecordStale lands real commits between statements: an
// append, then a delete by deletion vector. The statement after each scans (a stale
// record never answers), the refresh brings the record to the new version, and the
// statement after that is answered from it again; an older version never is.
func TestDeltaCommitsMakeTheRecordStale(t *testing.T) {
	dir := t.TempDir()
	if err := gen.Events(context.Background(), gen.EventsOptions{Rows: 9_000, Files: 3, Out: dir, Seed: 3, RowGroupRows: 1_000}); err != nil {
		t.Fatal(err)
	}
	var schema [][2]string
	for _, f := range gen.EventsSchema.Fields() {
		schema = append(schema, [2]string{f.Name, deltaType(t, f.Type)})
	}
	file := func(k int) deltaFile { return deltaFile{path: gen.EventsFileName(k)} }
	deltaCommit(t, dir, 0, schema, nil, nil, []deltaFile{file(0), file(1)})
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = %s, format = 'delta')", types.QuoteString(dir)))
	query(t, e, "ANALYZE ev")
	count := func(sql string, rows int, mode string) { t.Helper(); countIn(t, e, sql, rows, mode) }
	count("SELECT count(*) FROM ev", 6_000, "context")

	deltaCommit(t, dir, 1, nil, nil, nil, []deltaFile{file(2)})
	count("SELECT count(*) FROM ev", 9_000, "scan")
	lore.WaitForRefreshes(e)
	count("SELECT count(*) FROM ev", 9_000, "context")

	p, err := deletes.FromSorted([]int64{0, 1, 2, 500, 999})
	if err != nil {
		t.Fatal(err)
	}
	dv, err := json.Marshal(deletes.InlineDV(p))
	if err != nil {
		t.Fatal(err)
	}
	renewed := file(1)
	renewed.dv = string(dv)
	deltaCommit(t, dir, 2, nil, nil, []deltaFile{file(1)}, []deltaFile{renewed})
	count("SELECT count(*) FROM ev", 8_995, "scan")
	lore.WaitForRefreshes(e)
	count("SELECT count(*) FROM ev", 8_995, "context")
	count("SELECT count(*) FROM ev VERSION AS OF 1", 9_000, "scan")
	count("SELECT count(*) FROM ev VERSION AS OF 0", 6_000, "scan")
}

// TestDeltaStatsSkipFiles: add-action statistics (JSON in commits, stats_parsed in a
// checkpoint) rule out files before their footers are read, and the answer is the
// one every row gives.
func TestDeltaStatsSkipFiles(t *testing.T) {
	dir, _ := deltaFacts(t)
	e := open(t, lore.Options{})
	for _, c := range []struct {
		table, where string
		skipped      int64 // at least
	}{
		{"kernel-rs/parsed-stats", "id > 550", 5},
		{"kernel-rs/parsed-stats", "name = 'name_99' OR id < 3", 0},
		{"kernel-rs/v2-checkpoints-json-with-sidecars", "id = 777", 30}, // files of one append span the range
		{"kernel-rs/v2-checkpoints-parquet-with-sidecars", "id BETWEEN 10 AND 12", 50},
		{"golden/data-skipping-basic-stats-all-types-checkpoint", "as_int > 0", 1},
		{"delta-rs/checkpoint-v2-table", "created_at < TIMESTAMPTZ '2025-08-09 14:44:19+00'", 1},
	} {
		loc := types.QuoteString(filepath.Join(dir, c.table))
		res := query(t, e, fmt.Sprintf("SELECT count(*) FROM delta_scan(%s) WHERE %s", loc, c.where))
		want := query(t, e, fmt.Sprintf("SELECT sum(CASE WHEN %s THEN 1 ELSE 0 END) FROM delta_scan(%s)", c.where, loc))
		if got, w := cell(res, 0, 0), cell(want, 0, 0); got != w && !(got == "0" && w == "NULL") {
			t.Errorf("%s WHERE %s: %s rows, every row says %s", c.table, c.where, got, w)
		}
		var skipped, opened int64
		for _, s := range res.Record.Scans {
			skipped += s.FilesSkipped
			opened += s.FilesOpened
		}
		if skipped < c.skipped {
			t.Errorf("%s WHERE %s: %d files skipped (%d opened), want at least %d", c.table, c.where, skipped, opened, c.skipped)
		}
	}
}

// TestDeltaAnswersFromTheRecordEqualTheScan is the differential guarantee over the
// real Delta tables: after each ANALYZE form, every aggregate shape the record might
// answer gives what the scan gives.
func TestDeltaAnswersFromTheRecordEqualTheScan(t *testing.T) {
	dir, facts := deltaFacts(t)
	e := open(t, lore.Options{NoAutoRefresh: true})
	answered := 0
	for i, f := range facts {
		if strings.HasPrefix(f.Note, "LOG-ONLY") {
			continue
		}
		name := fmt.Sprintf("r%d", i)
		query(t, e, fmt.Sprintf("CREATE TABLE %s WITH (location = %s, format = 'delta')", name, types.QuoteString(filepath.Join(dir, f.Table))))
		var shapes []string
		shapes = append(shapes, "SELECT count(*) FROM "+name)
		for _, s := range f.ColumnFacts {
			c := types.QuoteIdent(parseColumnFact(t, s).name)
			shapes = append(shapes,
				fmt.Sprintf("SELECT count(*), count(%s), min(%s), max(%s) FROM %s", c, c, c, name),
				fmt.Sprintf("SELECT count(*), max(%s) FROM %s WHERE %s IS NOT NULL", c, name, c),
				fmt.Sprintf("SELECT count(%s) FROM %s WHERE %s IS NULL", c, name, c))
		}
		for _, form := range []string{"ANALYZE " + name, "ANALYZE " + name + " WITH (sketches = true)"} {
			query(t, e, form)
			for _, sql := range shapes {
				want := run(t, e, sql, scanned)
				got := run(t, e, sql, nil)
				if w, g := resultText(want), resultText(got); w != g {
					t.Errorf("%s: %s after %s: answered %s, scanned %s", f.Table, sql, form, g, w)
				}
				if got.Record.Execution.Mode == "context" {
					answered++
				}
			}
		}
	}
	if answered == 0 {
		t.Error("no statement was answered from a record")
	}
	t.Logf("%d statements answered from records", answered)
}
