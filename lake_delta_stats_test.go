package lore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"

	"github.com/loredb/lore"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/source/deletes"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
)

// openLog is a local store that records which data files were opened: a file of a
// table outside its _delta_log.
type openLog struct {
	storage.Local
	mu     sync.Mutex
	opened []string
}

func (s *openLog) Open(ctx context.Context, path string) (storage.Reader, error) {
	if strings.HasSuffix(path, ".parquet") && !strings.Contains(filepath.ToSlash(path), "/_delta_log/") {
		s.mu.Lock()
		s.opened = append(s.opened, path)
		s.mu.Unlock()
	}
	return s.Local.Open(ctx, path)
}

func (s *openLog) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.opened
	s.opened = nil
	return out
}

// openLogged opens an engine whose store logs the data files opened, with the Delta
// table at dir (unless dir is empty) defined as t.
func openLogged(t *testing.T, opts lore.Options, dir string) (*lore.Engine, *openLog) {
	t.Helper()
	e := open(t, opts)
	log := &openLog{}
	lore.SetStore(e, log)
	if dir != "" {
		query(t, e, fmt.Sprintf("CREATE TABLE t WITH (location = %s, format = 'delta')", types.QuoteString(dir)))
	}
	return e, log
}

// analyzeOpened runs ANALYZE on table name with no footer cached, and returns the
// data files it opened and the footers its query record says it used.
func analyzeOpened(t *testing.T, e *lore.Engine, log *openLog, name string) ([]string, int64) {
	t.Helper()
	source.DropCachedFooters()
	log.take()
	res := query(t, e, "ANALYZE "+name)
	if len(res.Record.Scans) != 1 {
		t.Fatalf("ANALYZE %s: %d scans in its record, want 1", name, len(res.Record.Scans))
	}
	return log.take(), res.Record.Scans[0].FilesOpened
}

// TestDeltaAnalyzeReadsTheLogAlone: over the real Delta tables, ANALYZE of a table
// whose every add action carries statistics opens no data file, and the record it
// builds gives the facts an independent reader found: the rows, each column's
// non-NULL count where the record has it, and whatever the record answers. A table
// whose adds lack statistics is learnt from its footers.
func TestDeltaAnalyzeReadsTheLogAlone(t *testing.T) {
	dir, facts := deltaFacts(t)
	e, log := openLogged(t, lore.Options{NoAutoRefresh: true}, "")
	fromLog, fromFooters, answered := 0, 0, 0
	for i, f := range facts {
		if strings.HasPrefix(f.Note, "LOG-ONLY") {
			continue
		}
		t.Run(f.Table, func(t *testing.T) {
			name := fmt.Sprintf("s%d", i)
			query(t, e, fmt.Sprintf("CREATE TABLE %s WITH (location = %s, format = 'delta')", name, types.QuoteString(filepath.Join(dir, f.Table))))
			opened, footers := analyzeOpened(t, e, log, name)
			switch {
			case footers == 0 && len(opened) > 0:
				t.Fatalf("its record says no footer was used, yet %d data files were opened", len(opened))
			case footers == 0:
				fromLog++
			default:
				fromFooters++
			}
			stats := query(t, e, "SHOW STATS FOR "+name)
			last := int(stats.NumRows()) - 1
			var rowsOnRecord float64
			fmt.Sscan(cell(stats, last, 7), &rowsOnRecord)
			if got := cell(stats, last, 7); rowsOnRecord != float64(f.Rows) {
				t.Errorf("record rows %s, want %d", got, f.Rows)
			}
			for _, s := range f.ColumnFacts {
				cf := parseColumnFact(t, s)
				for r := 0; r < last; r++ {
					if cell(stats, r, 0) != cf.name || cell(stats, r, 3) == "NULL" {
						continue
					}
					var frac float64
					fmt.Sscan(cell(stats, r, 3), &frac)
					if nulls := int64(math.Round(frac * float64(f.Rows))); fmt.Sprint(f.Rows-nulls) != cf.nonNull {
						t.Errorf("%s: the record counts %d NULLs, the facts %s non-NULL values of %d rows", cf.name, nulls, cf.nonNull, f.Rows)
					}
				}
				col := types.QuoteIdent(cf.name)
				res := query(t, e, fmt.Sprintf("SELECT CAST(min(%s) AS VARCHAR), CAST(max(%s) AS VARCHAR), count(%s) FROM %s", col, col, col, name))
				if got := [3]string{text(res, 0, 0), text(res, 0, 1), text(res, 0, 2)}; got != [3]string{cf.min, cf.max, cf.nonNull} {
					t.Errorf("%s: min, max, non-null = %q (mode %s), want %q", cf.name, got, res.Record.Execution.Mode, [3]string{cf.min, cf.max, cf.nonNull})
				}
				if res.Record.Execution.Mode == "context" && footers == 0 {
					answered++
				}
			}
		})
	}
	t.Logf("%d tables learnt from the log alone, %d from footers; %d column facts answered from log records", fromLog, fromFooters, answered)
	if fromLog < 10 || fromFooters == 0 || answered == 0 {
		t.Errorf("%d tables learnt from the log, %d from footers, %d facts answered from log records: want both paths taken and answers", fromLog, fromFooters, answered)
	}
}

// smallTable writes the Parquet files of a little Delta table under dir: file k holds
// ids k*100 … k*100+rows-1, a name per id (long where long is set) and a score that
// is NULL for every tenth id. It returns the files' paths relative to dir.
type smallFile struct {
	rows int
	long bool // names of 40 characters
}

func writeSmallFiles(t *testing.T, dir string, files []smallFile) []string {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "score", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)
	var paths []string
	for k, f := range files {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for i := 0; i < f.rows; i++ {
			id := int64(k*100 + i)
			b.Field(0).(*array.Int64Builder).Append(id)
			name := fmt.Sprintf("n%03d", id)
			if f.long {
				name += strings.Repeat("x", 36)
			}
			b.Field(1).(*array.StringBuilder).Append(name)
			if id%10 == 0 {
				b.Field(2).AppendNull()
			} else {
				b.Field(2).(*array.Int32Builder).Append(int32(id % 37))
			}
		}
		rel := fmt.Sprintf("part-%05d.parquet", k)
		writeRecord(t, filepath.Join(dir, rel), b, pq.NewWriterProperties(pq.WithStats(true), pq.WithMaxRowGroupLength(25)))
		b.Release()
		paths = append(paths, rel)
	}
	return paths
}

var smallSchema = [][2]string{{"id", "long"}, {"name", "string"}, {"score", "integer"}}

// smallStats is what a Delta writer states of small file k of rows rows: tight
// statistics of every column, unless the caller changes them.
func smallStats(k, rows int, long bool) map[string]any {
	lo, hi := k*100, k*100+rows-1
	name := func(id int) string {
		s := fmt.Sprintf("n%03d", id)
		if long {
			s += strings.Repeat("x", 36)
		}
		return s
	}
	nulls := 0
	slo, shi := math.MaxInt, 0
	for id := lo; id <= hi; id++ {
		if id%10 == 0 {
			nulls++
			continue
		}
		slo, shi = min(slo, id%37), max(shi, id%37)
	}
	return map[string]any{
		"numRecords": rows,
		"minValues":  map[string]any{"id": lo, "name": name(lo), "score": slo},
		"maxValues":  map[string]any{"id": hi, "name": name(hi), "score": shi},
		"nullCount":  map[string]any{"id": 0, "name": 0, "score": nulls},
	}
}

func statsJSON(t *testing.T, m map[string]any) string {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDeltaAnalyzeFallsBackToFooters: one add without statistics is enough for
// ANALYZE to read every footer, and the record is the same either way.
func TestDeltaAnalyzeFallsBackToFooters(t *testing.T) {
	for _, lacking := range []int{-1, 1} {
		t.Run(fmt.Sprintf("lacking=%d", lacking), func(t *testing.T) {
			dir := t.TempDir()
			paths := writeSmallFiles(t, dir, []smallFile{{rows: 60}, {rows: 50}, {rows: 70}})
			var files []deltaFile
			for k, p := range paths {
				f := deltaFile{path: p, stats: statsJSON(t, smallStats(k, []int{60, 50, 70}[k], false))}
				if k == lacking {
					f.stats = ""
				}
				files = append(files, f)
			}
			deltaCommit(t, dir, 0, smallSchema, nil, nil, files)
			e, log := openLogged(t, lore.Options{NoAutoRefresh: true}, dir)
			opened, footers := analyzeOpened(t, e, log, "t")
			want := 0
			if lacking >= 0 {
				want = len(paths)
			}
			if len(opened) != want || footers != int64(want) {
				t.Fatalf("ANALYZE opened %d data files and used %d footers, want %d", len(opened), footers, want)
			}
			for _, sql := range []string{
				"SELECT count(*)", "SELECT count(score)", "SELECT min(id), max(id)", "SELECT min(score), max(score)", "SELECT min(name), max(name)",
				"SELECT count(*), min(score) FROM t WHERE id >= 150",
				"SELECT count(score), max(name) FROM t WHERE id < 100 OR id >= 200",
			} {
				if !strings.Contains(sql, "FROM") {
					sql += " FROM t"
				}
				want, got := run(t, e, sql, scanned), run(t, e, sql, nil)
				if w, g := resultText(want), resultText(got); w != g {
					t.Errorf("%s: answered %s, scanned %s", sql, g, w)
				}
				// The footers this writer wrote do not say that their string bounds
				// are whole; the log's short strings are.
				if got.Record.Execution.Mode != "context" && (lacking < 0 || !strings.Contains(sql, "name")) {
					t.Errorf("%s: mode %s (%s), want an answer from the record", sql, got.Record.Execution.Mode, got.Record.Execution.Detail)
				}
			}
		})
	}
}

// TestDeltaLogBoundsThatAreNotValues: bounds the log states are values only when no
// writer could have changed them. A string of 32 bytes or more may be a cut prefix;
// wide bounds (tightBounds false) and a file with a deletion vector bound values that
// may be gone. MIN and MAX over such columns are then computed, and right, while what
// stays exact is still answered from the record. Wide bounds without a deletion
// vector leave a null count that carries no information: the footers are read.
func TestDeltaLogBoundsThatAreNotValues(t *testing.T) {
	dv := func(f *deltaFile) {
		// The file's first rows, which held its smallest id, are deleted.
		p, err := deletes.FromSorted([]int64{0, 1, 2})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(deletes.InlineDV(p))
		if err != nil {
			t.Fatal(err)
		}
		f.dv = string(b)
	}
	wide := func(st map[string]any) {
		st["tightBounds"] = false
		st["minValues"].(map[string]any)["score"] = -5 // still a bound, not a value
	}
	cases := []struct {
		name     string
		long     bool
		change   func(st map[string]any, f *deltaFile)
		footers  bool     // the log does not suffice
		computed string   // a column whose MIN and MAX must be computed
		answered []string // statements the record still answers
	}{
		{name: "long strings", long: true, computed: "name",
			answered: []string{"SELECT count(*), count(score), min(id), max(score) FROM t"}},
		{name: "deletion vector", computed: "id", change: func(_ map[string]any, f *deltaFile) { dv(f) },
			answered: []string{"SELECT count(*) FROM t"}},
		{name: "wide bounds and a deletion vector", computed: "score", change: func(st map[string]any, f *deltaFile) { wide(st); dv(f) },
			answered: []string{"SELECT count(*) FROM t"}},
		{name: "wide bounds alone", computed: "score", footers: true, change: func(st map[string]any, _ *deltaFile) { wide(st) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			rows := []int{40, 30}
			paths := writeSmallFiles(t, dir, []smallFile{{rows: rows[0], long: c.long}, {rows: rows[1], long: c.long}})
			var files []deltaFile
			for k, p := range paths {
				st := smallStats(k, rows[k], c.long)
				f := deltaFile{path: p}
				if k == 0 && c.change != nil {
					c.change(st, &f)
				}
				f.stats = statsJSON(t, st)
				files = append(files, f)
			}
			deltaCommit(t, dir, 0, smallSchema, nil, nil, files)
			e, log := openLogged(t, lore.Options{NoAutoRefresh: true}, dir)
			opened, footers := analyzeOpened(t, e, log, "t")
			if want := 0; c.footers {
				want = len(paths)
				if len(opened) != want || footers != int64(want) {
					t.Fatalf("ANALYZE opened %d data files, %d footers, want %d", len(opened), footers, want)
				}
			} else if len(opened) != 0 || footers != 0 {
				t.Fatalf("ANALYZE opened %d data files, %d footers: the log states everything", len(opened), footers)
			}
			check := func(sql, mode string) {
				t.Helper()
				want, got := run(t, e, sql, scanned), run(t, e, sql, nil)
				if w, g := resultText(want), resultText(got); w != g {
					t.Errorf("%s: answered %s, scanned %s", sql, g, w)
				}
				if mode != "" && got.Record.Execution.Mode != mode {
					t.Errorf("%s: mode %s (%s), want %s", sql, got.Record.Execution.Mode, got.Record.Execution.Detail, mode)
				}
			}
			mode := "scan"
			if c.footers {
				mode = "" // the footers state what they state
			}
			check(fmt.Sprintf("SELECT min(%s) FROM t", c.computed), mode)
			check(fmt.Sprintf("SELECT max(%s) FROM t", c.computed), mode)
			check(fmt.Sprintf("SELECT count(*), min(%s) FROM t WHERE id >= 30", c.computed), "")
			for _, sql := range c.answered {
				check(sql, "context")
			}
		})
	}
}

// TestDeltaLogRecordRefreshes: a record learnt from the log is refreshed after an
// append by folding in the new files, learnt the same way, or from footers when the
// new add lacks statistics; either way the refreshed record answers, and zones of
// whole files settle filtered statements file by file.
func TestDeltaLogRecordRefreshes(t *testing.T) {
	dir := t.TempDir()
	rows := []int{50, 50, 50, 50}
	paths := writeSmallFiles(t, dir, []smallFile{{rows: 50}, {rows: 50}, {rows: 50}, {rows: 50}})
	file := func(k int, withStats bool) deltaFile {
		f := deltaFile{path: paths[k]}
		if withStats {
			f.stats = statsJSON(t, smallStats(k, rows[k], false))
		}
		return f
	}
	deltaCommit(t, dir, 0, smallSchema, nil, nil, []deltaFile{file(0, true), file(1, true)})
	e, log := openLogged(t, lore.Options{}, dir)
	if opened, _ := analyzeOpened(t, e, log, "t"); len(opened) != 0 {
		t.Fatalf("ANALYZE opened %v", opened)
	}
	countIn(t, e, "SELECT count(*) FROM t", 100, "context")

	for v, f := range []deltaFile{file(2, true), file(3, false)} {
		deltaCommit(t, dir, v+1, nil, nil, nil, []deltaFile{f})
		want := 150 + 50*v
		countIn(t, e, "SELECT count(*) FROM t", want, "scan")
		lore.WaitForRefreshes(e)
		countIn(t, e, "SELECT count(*) FROM t", want, "context")
		for _, sql := range []string{
			"SELECT count(*), count(score), min(id), max(id), min(score), max(score) FROM t",
			"SELECT count(*), max(id) FROM t WHERE id >= 100",
			"SELECT count(*), count(score), min(score) FROM t WHERE id >= 120 AND id < 300",
		} {
			want, got := run(t, e, sql, scanned), run(t, e, sql, nil)
			if w, g := resultText(want), resultText(got); w != g {
				t.Errorf("v%d %s: answered %s, scanned %s", v+1, sql, g, w)
			}
			if strings.Contains(sql, "120") {
				// Only file 1 (ids 100-149) straddles: it is read, file 2 is
				// answered, files 0 and 3 are skipped.
				sc := got.Record.Scans
				if got.Record.Execution.Mode != "scan" || len(sc) != 1 || sc[0].RowGroupsRead != 2 || sc[0].RowGroupsAnswered < 2 {
					t.Errorf("v%d %s: mode %s, scans %+v: want file 1's two row groups read, file 2's answered", v+1, sql, got.Record.Execution.Mode, sc)
				}
			} else if got.Record.Execution.Mode != "context" {
				t.Errorf("v%d %s: mode %s (%s), want an answer from the record", v+1, sql, got.Record.Execution.Mode, got.Record.Execution.Detail)
			}
		}
	}
}
