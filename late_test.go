package lore_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/loredb/lore"
)

// writeLateFile writes one row group of rows: id (a shuffled permutation, so that no
// statistics exclude anything), k (an integer with NULLs), f (a float with NaN and
// NULLs), s (a short string), payload (text of about 8 × payload bytes) and g (twenty
// values, so many ties), in pages of about 4 KiB.
func writeLateFile(t *testing.T, path string, rows int, seed uint64, payload int) {
	t.Helper()
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "k", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "payload", Type: arrow.BinaryTypes.String},
		{Name: "g", Type: arrow.PrimitiveTypes.Int32},
	}, nil)
	r := rand.New(rand.NewPCG(seed, 3))
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for i, id := range r.Perm(rows) {
		b.Field(0).(*array.Int64Builder).Append(int64(id))
		if i%11 == 3 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.Int32Builder).Append(int32(r.IntN(5000)))
		}
		switch {
		case i%13 == 5:
			b.Field(2).AppendNull()
		case i%997 == 7:
			b.Field(2).(*array.Float64Builder).Append(math.NaN())
		default:
			b.Field(2).(*array.Float64Builder).Append(r.NormFloat64() * 100)
		}
		if i%17 == 2 {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("s%04d", r.IntN(3000)))
		}
		b.Field(4).(*array.StringBuilder).Append(fmt.Sprintf("%d:%s", id, strings.Repeat("payload ", payload+id%7)))
		b.Field(5).(*array.Int32Builder).Append(int32(r.IntN(20)))
	}
	writeRecord(t, path, b, pq.NewWriterProperties(pq.WithDataPageSize(4096), pq.WithBatchSize(256),
		pq.WithMaxRowGroupLength(int64(rows)), pq.WithStats(true)))
}

// writeRecord writes the rows built in b to a Parquet file at path, in one row group
// unless props says otherwise.
func writeRecord(t *testing.T, path string, b *array.RecordBuilder, props *pq.WriterProperties) {
	t.Helper()
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	if err := pqarrow.WriteTable(tbl, f, max(rec.NumRows(), 1), props, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
}

// TestLateColumnsAreNotRead runs a point lookup over a file whose long payload column
// takes most of its bytes: only the filter's column is read in full, the payload only
// where the row is, and the row comes back whole.
func TestLateColumnsAreNotRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "late.parquet")
	writeLateFile(t, path, 40_000, 1, 20)
	e := open(t, lore.Options{})
	log := &readLog{reads: map[string][][2]int64{}}
	lore.SetStore(e, log)
	registerStats(t, e, path)
	log.reads = map[string][][2]int64{}
	res := run(t, e, "SELECT id, payload FROM t WHERE id = 31337", nil)
	if res.NumRows() != 1 || cell(res, 0, 0) != "31337" || !strings.HasPrefix(cell(res, 0, 1), "31337:payload") {
		t.Fatalf("point lookup returned %d rows: %s", res.NumRows(), resultText(res))
	}
	var read int64
	for _, rg := range log.reads[path] {
		read += rg[1] - rg[0]
	}
	data := footerStart(t, path)
	if read*3 > data {
		t.Errorf("read %d bytes of %d bytes of pages: the payload was read where no row matched", read, data)
	}
	t.Logf("read %d of %d bytes of pages", read, data)
}

// TestTopNBoundMatchesFullSort compares ORDER BY … LIMIT n, where the top-N passes its
// worst kept key to the scan, with the first n rows of the full sort, over keys of
// every kind (with NULLs and NaN), both directions and both NULL placements, with and
// without a filter.
func TestTopNBoundMatchesFullSort(t *testing.T) {
	dir := t.TempDir()
	// Enough batches that the scan is still reading when the top-N first cuts.
	for i := 0; i < 3; i++ {
		writeLateFile(t, filepath.Join(dir, fmt.Sprintf("p%d.parquet", i)), 40_000+1_000*i, uint64(10+i), 0)
	}
	e := open(t, lore.Options{})
	registerStats(t, e, dir)
	for _, key := range []string{"k", "f", "s", "g"} {
		for _, dir := range []string{"ASC", "DESC"} {
			for _, nulls := range []string{"NULLS FIRST", "NULLS LAST"} {
				for _, where := range []string{"", "WHERE k < 2500 OR s > 's2000'"} {
					base := fmt.Sprintf("SELECT id, %s, payload FROM t %s ORDER BY %s %s %s, id", key, where, key, dir, nulls)
					full := run(t, e, base, nil)
					for _, n := range []int{7, 300} {
						got := run(t, e, fmt.Sprintf("%s LIMIT %d", base, n), nil)
						want := firstLines(resultText(full), n)
						if g := resultText(got); g != want {
							t.Fatalf("%s LIMIT %d:\n%s\nwant\n%s", base, n, g, want)
						}
					}
				}
			}
		}
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "")
}

// TestTopNBoundSkipsRowGroups orders data clustered by ts: once the top-N holds its
// rows, row groups whose statistics cannot beat the worst of them are not read.
func TestTopNBoundSkipsRowGroups(t *testing.T) {
	dir := events(t, 40_000, 2, 2_000, true)
	// One worker, which can run only a few batches ahead of the top-N: with more, a
	// loaded machine could let them read every row group before the first bound.
	e := open(t, lore.Options{Threads: 1})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	got := run(t, e, "SELECT ts, user_id FROM ev ORDER BY ts LIMIT 5", nil)
	want := run(t, e, "SELECT ts, user_id FROM ev ORDER BY ts", nil)
	if g, w := resultText(got), firstLines(resultText(want), 5); g != w {
		t.Fatalf("top 5 by ts:\n%s\nwant\n%s", g, w)
	}
	s := got.Record.Scans[0]
	if s.RowGroupsPruned == 0 || s.RowGroupsRead+s.RowGroupsPruned != s.RowGroupsConsidered {
		t.Errorf("row groups considered %d, pruned %d, read %d: the bound skipped none",
			s.RowGroupsConsidered, s.RowGroupsPruned, s.RowGroupsRead)
	}
}

// TestPageIndexSkipsPages filters a file sorted by id, written with a page index and
// small pages, to a narrow range: only the pages that may hold it are read, and the
// rows are those a filter the page index cannot see (an expression) returns.
func TestPageIndexSkipsPages(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sorted.parquet")
	const rows = 50_000
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for i := 0; i < rows; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%9 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("v%d", i%1234))
		}
	}
	writeRecord(t, path, b, pq.NewWriterProperties(pq.WithDataPageSize(2048), pq.WithBatchSize(100),
		pq.WithMaxRowGroupLength(rows), pq.WithStats(true), pq.WithPageIndexEnabled(true)))
	e := open(t, lore.Options{})
	registerStats(t, e, path)
	for _, pred := range []string{"id BETWEEN 20000 AND 20100", "id < 300", "id >= 49990", "id IN (5, 40000)", "id > 60000"} {
		got := run(t, e, "SELECT id, v FROM t WHERE "+pred+" ORDER BY id", nil)
		want := run(t, e, "SELECT id, v FROM t WHERE "+strings.ReplaceAll(pred, "id", "(id + 0)")+" ORDER BY id", nil)
		if g, w := resultText(got), resultText(want); g != w {
			t.Fatalf("%s:\n%s\nwant\n%s", pred, g, w)
		}
		if s := got.Record.Scans[0]; s.RowsScanned > rows/10 {
			t.Errorf("%s: %d of %d rows scanned", pred, s.RowsScanned, rows)
		}
	}
}

// TestMinMaxRunningBounds checks that an ungrouped MIN/MAX passes the values it has
// seen to its scan — row groups that cannot beat them are skipped — and still gives
// what the same aggregate of an expression (which takes no bound) gives, over floats
// with NaN and NULLs, with and without filters, and with several aggregates.
func TestMinMaxRunningBounds(t *testing.T) {
	dir := events(t, 60_000, 3, 2_000, true)
	ldir := t.TempDir()
	for i := 0; i < 2; i++ {
		writeLateFile(t, filepath.Join(ldir, fmt.Sprintf("p%d.parquet", i)), 30_000, uint64(40+i), 0)
	}
	// Whether a worker skips a row group depends on what the others have seen by
	// then; with one worker it is certain, and with two the results must agree.
	for _, threads := range []int{1, 2} {
		e := open(t, lore.Options{Threads: threads})
		query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
		query(t, e, fmt.Sprintf("CREATE TABLE lt WITH (location = '%s', format = 'parquet')", ldir))
		for _, c := range []struct{ got, want string }{
			{"SELECT min(ts), max(ts) FROM ev", "SELECT min(ts + INTERVAL '0' SECOND), max(ts + INTERVAL '0' SECOND) FROM ev"},
			{"SELECT max(ts) FROM ev", "SELECT max(ts + INTERVAL '0' SECOND) FROM ev"},
			{"SELECT min(ts) FROM ev WHERE status = 2", "SELECT min(ts + INTERVAL '0' SECOND) FROM ev WHERE status = 2"},
			{"SELECT max(user_id), min(amount) FROM ev", "SELECT max(user_id + 0), min(amount + 0) FROM ev"},
			{"SELECT max(f) FROM lt", "SELECT max(f + 0) FROM lt"},
			{"SELECT min(f) FROM lt", "SELECT min(f + 0) FROM lt"},
			{"SELECT max(k) FROM lt WHERE s < 's1000'", "SELECT max(k + 0) FROM lt WHERE s < 's1000'"},
			{"SELECT min(s), max(s) FROM lt", "SELECT min(s || ''), max(s || '') FROM lt"},
		} {
			got, want := run(t, e, c.got, scanned), run(t, e, c.want, scanned)
			if g, w := resultText(got), resultText(want); g != w {
				t.Fatalf("threads %d: %s:\n%s\nwant (%s)\n%s", threads, c.got, g, c.want, w)
			}
			if s := got.Record.Scans[0]; s.RowGroupsRead+s.RowGroupsPruned != s.RowGroupsConsidered {
				t.Errorf("threads %d: %s: row groups considered %d, pruned %d, read %d",
					threads, c.got, s.RowGroupsConsidered, s.RowGroupsPruned, s.RowGroupsRead)
			}
			if threads == 1 && strings.Contains(c.got, "(ts)") && !strings.Contains(c.got, "WHERE") {
				if s := got.Record.Scans[0]; s.RowGroupsPruned == 0 {
					t.Errorf("%s: row groups considered %d, pruned %d, read %d: the running bound skipped none",
						c.got, s.RowGroupsConsidered, s.RowGroupsPruned, s.RowGroupsRead)
				}
			}
		}
	}
}

// TestExpressionsSeeOnlyFilteredRows evaluates aggregate arguments, group keys and
// top-N keys that overflow on rows the filter removes: they must not fail, and give
// what the same computation in DECIMAL (which does not overflow) gives.
func TestExpressionsSeeOnlyFilteredRows(t *testing.T) {
	dir := events(t, 30_000, 2, 10_000, false)
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = '%s', format = 'parquet')", dir))
	// 40e15 * status fits in BIGINT for status 200, not for 400 or 503. The filter
	// keeps most rows (status 200), so batches reach the aggregate with a selection.
	const where = "WHERE status < 210"
	for _, c := range []struct{ got, want string }{
		{"SELECT max(40000000000000000 * status), count(*) FROM ev " + where,
			"SELECT max(CAST(status AS DECIMAL(38,0)) * 40000000000000000), count(*) FROM ev " + where},
		{"SELECT 40000000000000000 * status AS k, count(*) FROM ev " + where + " GROUP BY 1 ORDER BY 1",
			"SELECT CAST(status AS DECIMAL(38,0)) * 40000000000000000 AS k, count(*) FROM ev " + where + " GROUP BY 1 ORDER BY 1"},
		{"SELECT user_id FROM ev " + where + " ORDER BY 40000000000000000 * status DESC, user_id LIMIT 3",
			"SELECT user_id FROM ev " + where + " ORDER BY CAST(status AS DECIMAL(38,0)) * 40000000000000000 DESC, user_id LIMIT 3"},
	} {
		got, want := run(t, e, c.got, nil), run(t, e, c.want, nil)
		if g, w := resultText(got), resultText(want); g != w || got.NumRows() == 0 {
			t.Errorf("%s:\n%s\nwant\n%s", c.got, g, w)
		}
	}
}

// TestFilterWavesMatchUnpushedFilter runs filters of several conjuncts, each reading
// its own columns — decoded just before it runs, for the rows the conjuncts before it
// kept — and requires the rows the same filter keeps above a LIMIT, where it reads
// whole batches.
func TestFilterWavesMatchUnpushedFilter(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 2; i++ {
		writeLateFile(t, filepath.Join(dir, fmt.Sprintf("p%d.parquet", i)), 25_000, uint64(70+i), 0)
	}
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE t WITH (location = '%s', format = 'parquet')", dir))
	for _, pred := range []string{
		"id < 4000 AND k > 2500 AND s > 's1500'",
		"id % 9 = 1 AND f > 0 AND g < 5 AND k IS NULL",
		"id < 20000 AND k <> 0 AND 5000 // k > 2 AND s LIKE 's1%'",
		"g = 7 AND (k < 100 OR f < -50) AND s IS NOT NULL",
		"s > 's2990' AND id > 100",
	} {
		// Both files hold every id: the order needs every column.
		got := run(t, e, "SELECT id, k, f, s, g, payload FROM t WHERE "+pred+" ORDER BY 1, 2, 3, 4, 5, 6", nil)
		want := run(t, e, "SELECT id, k, f, s, g, payload FROM (SELECT * FROM t LIMIT 1000000) WHERE "+pred+" ORDER BY 1, 2, 3, 4, 5, 6", nil)
		if g, w := resultText(got), resultText(want); g != w {
			gl, wl := strings.Split(g, "\n"), strings.Split(w, "\n")
			for i := range min(len(gl), len(wl)) {
				if gl[i] != wl[i] {
					t.Fatalf("%s: %d rows, want %d: row %d:\n%s\nwant\n%s", pred, got.NumRows(), want.NumRows(), i, gl[i], wl[i])
				}
			}
			t.Fatalf("%s: %d rows, want %d", pred, got.NumRows(), want.NumRows())
		}
		if got.NumRows() == 0 {
			t.Errorf("%s: no rows", pred)
		}
	}
}

// TestFilterWavesWithPartitionColumns filters on a Hive partition column after a
// selective conjunct that compacts the batch: the partition column, there from the
// start, keeps the compacted rows.
func TestFilterWavesWithPartitionColumns(t *testing.T) {
	root := t.TempDir()
	for i, day := range []string{"a", "b"} {
		d := filepath.Join(root, "day="+day)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		writeLateFile(t, filepath.Join(d, "p.parquet"), 20_000, uint64(80+i), 0)
	}
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE h WITH (location = '%s', format = 'parquet')", root))
	for _, pred := range []string{"id < 1000 AND day <> 'zz' AND k > 10", "id < 40 AND day > 'a'", "id % 50 = 3 AND day = 'a' AND s > 's1000'"} {
		// Without ORDER BY the scan's own batches reach the result.
		got := run(t, e, "SELECT id, k, s, day FROM h WHERE "+pred, nil)
		want := run(t, e, "SELECT id, k, s, day FROM (SELECT * FROM h LIMIT 1000000) WHERE "+pred, nil)
		if g, w := sortedLines(resultText(got)), sortedLines(resultText(want)); g != w || got.NumRows() == 0 {
			t.Errorf("%s:\n%.400s\nwant\n%.400s", pred, g, w)
		}
		for _, b := range got.Batches {
			for c := 0; c < int(b.NumCols()); c++ {
				if int64(b.Column(c).Len()) != b.NumRows() {
					t.Errorf("%s: column %d has %d rows in a batch of %d", pred, c, b.Column(c).Len(), b.NumRows())
				}
			}
		}
	}
}

// sortedLines is text with its lines in order, for a result read without ORDER BY.
func sortedLines(text string) string {
	lines := strings.SplitAfter(text, "\n")
	sort.Strings(lines)
	return strings.Join(lines, "")
}
