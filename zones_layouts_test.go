package lore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/loredb/lore"
	"github.com/loredb/lore/gen"
	"github.com/loredb/lore/source/deletes"
)

// zoneLayout is one physical layout of the events table the zone differential test
// covers. Every layout's files carry, besides the events columns, `none` (NULL in
// every row) and `sparse` (user_id in February, NULL otherwise: whole zones of
// NULLs next to zones without one).
type zoneLayout struct {
	name      string
	rows      int64
	files     int
	clustered bool
	rowGroup  int  // rows per row group
	plain     bool // no dictionary encoding
	hiveByDay bool // one file per day under day=YYYY-MM-DD/ (clustered, 91 files; the last 3 under day=NULL)
	nan       bool // amount is NaN in some rows of early March
	delta     bool // a Delta table: a log adding every file, with stats; day is a partition column of the log
	fewStats  bool // the log's stats describe ts and none alone, so ANALYZE reads the footers (Iceberg's always do)
	deletes   bool // a second commit gives every other file a deletion vector
	iceberg   bool // an Iceberg table: a manifest stating every file; day is an identity partition held by the manifest alone
}

var zoneLayouts = []zoneLayout{
	{name: "clustered by ts", rows: 24_000, files: 3, clustered: true, rowGroup: 2_000},
	{name: "unclustered", rows: 24_000, files: 3, rowGroup: 2_000},
	{name: "many small row groups", rows: 20_000, files: 2, clustered: true, rowGroup: 500},
	{name: "plain encoding", rows: 24_000, files: 3, clustered: true, rowGroup: 2_000, plain: true},
	{name: "hive by day", rows: 91 * 150, files: 91, clustered: true, rowGroup: 50, hiveByDay: true},
	{name: "NaN in amount", rows: 24_000, files: 3, clustered: true, rowGroup: 1_000, nan: true},
	{name: "delta", rows: 24_000, files: 4, clustered: true, rowGroup: 2_000, delta: true},
	{name: "delta with stats of two columns", rows: 24_000, files: 4, clustered: true, rowGroup: 2_000, delta: true, fewStats: true},
	{name: "delta with deletion vectors", rows: 24_000, files: 4, clustered: true, rowGroup: 2_000, delta: true, deletes: true},
	{name: "delta partitioned by day", rows: 91 * 150, files: 91, clustered: true, rowGroup: 50, hiveByDay: true, delta: true},
	{name: "iceberg", rows: 24_000, files: 4, clustered: true, rowGroup: 2_000, iceberg: true},
	{name: "iceberg partitioned by day", rows: 91 * 150, files: 91, clustered: true, rowGroup: 50, hiveByDay: true, iceberg: true},
}

// eventsPlusSchema is the events schema with the two extra columns.
var eventsPlusSchema = arrow.NewSchema(append(append([]arrow.Field{}, gen.EventsSchema.Fields()...),
	arrow.Field{Name: "none", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	arrow.Field{Name: "sparse", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
), nil)

// write generates the layout under dir and returns its location.
func (l zoneLayout) write(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "src")
	opts := gen.EventsOptions{Rows: l.rows, Files: l.files, Out: src, Seed: 7, RowGroupRows: l.rowGroup}
	if l.clustered {
		opts.ClusteredBy = "ts"
	}
	if err := gen.Events(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "t")
	if l.iceberg {
		out = filepath.Join(dir, "t", "data") // the table is t, its files under data/
	}
	day0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var files []deltaFile
	for k := 0; k < l.files; k++ {
		rel := gen.EventsFileName(k)
		var parts map[string]*string
		if l.hiveByDay {
			// Clustered files split the 91 days of the range evenly: file k is day k.
			day := day0.AddDate(0, 0, k).Format("2006-01-02")
			parts = map[string]*string{"day": &day}
			if k >= l.files-3 {
				day, parts["day"] = "NULL", nil // the last days' files fall in the NULL partition
			}
			rel = filepath.Join("day="+day, gen.EventsFileName(k))
		}
		st := l.rewrite(t, filepath.Join(src, gen.EventsFileName(k)), filepath.Join(out, rel))
		files = append(files, deltaFile{path: rel, parts: parts, stats: st})
	}
	if l.iceberg {
		out = filepath.Join(dir, "t")
		icebergCommit(t, out, eventsPlusSchema.Fields(), l.hiveByDay, files)
		return out
	}
	if l.delta {
		var schema [][2]string
		for _, f := range eventsPlusSchema.Fields() {
			schema = append(schema, [2]string{f.Name, deltaType(t, f.Type)})
		}
		var partitions []string
		if l.hiveByDay {
			schema, partitions = append(schema, [2]string{"day", "date"}), []string{"day"}
		}
		deltaCommit(t, out, 0, schema, partitions, nil, files)
		if l.deletes {
			// Every other file loses every seventh row, and the first loses a whole
			// row group besides.
			var old, renewed []deltaFile
			for k := 0; k < len(files); k += 2 {
				p, err := deletes.FromSorted(l.deleted(k))
				if err != nil {
					t.Fatal(err)
				}
				dv, err := json.Marshal(deletes.InlineDV(p))
				if err != nil {
					t.Fatal(err)
				}
				f := files[k]
				old = append(old, f)
				f.dv = string(dv)
				renewed = append(renewed, f)
			}
			deltaCommit(t, out, 1, nil, nil, old, renewed)
		}
	}
	return out
}

// deleted are the rows a layout with deletes deletes from file k.
func (l zoneLayout) deleted(k int) []int64 {
	var pos []int64
	for i := int64(0); l.deletes && k%2 == 0 && i < l.rows/int64(l.files); i++ {
		if i%7 == 3 || (k == 0 && i >= int64(l.rowGroup) && i < 2*int64(l.rowGroup)) {
			pos = append(pos, i)
		}
	}
	return pos
}

// rewrite copies one events file with the extra columns, in the layout's row groups
// and encoding, and returns its statistics as a Delta writer states them: the row
// count, null counts, and bounds (ts cut to the millisecond) of every column but the
// boolean — or, for fewStats and Iceberg, of ts and none alone.
func (l zoneLayout) rewrite(t *testing.T, src, dst string) string {
	t.Helper()
	in, err := file.OpenParquetFile(src, false)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	fr, err := pqarrow.NewFileReader(in, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	cols := make([]arrow.Array, 0, eventsPlusSchema.NumFields())
	for i := 0; i < int(tbl.NumCols()); i++ {
		arr, err := array.Concatenate(tbl.Column(i).Data().Chunks(), memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		cols = append(cols, arr)
	}
	rows := int(tbl.NumRows())
	ts := cols[0].(*array.Timestamp)
	users := cols[1].(*array.Int64)
	feb := time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	mar := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	none := array.NewInt64Builder(memory.DefaultAllocator)
	sparse := array.NewInt64Builder(memory.DefaultAllocator)
	for i := 0; i < rows; i++ {
		none.AppendNull()
		if v := int64(ts.Value(i)); v >= feb && v < mar {
			sparse.Append(users.Value(i))
		} else {
			sparse.AppendNull()
		}
	}
	cols = append(cols, none.NewArray(), sparse.NewArray())
	if l.nan {
		// NaN in a few rows of the first days of March.
		amount := cols[3].(*array.Float64)
		b := array.NewFloat64Builder(memory.DefaultAllocator)
		for i := 0; i < rows; i++ {
			v := int64(ts.Value(i))
			switch {
			case amount.IsNull(i):
				b.AppendNull()
			case v >= mar && v < mar+3*86_400_000_000 && i%50 == 0:
				b.Append(math.NaN())
			default:
				b.Append(amount.Value(i))
			}
		}
		cols[3] = b.NewArray()
	}
	rec := array.NewRecord(eventsPlusSchema, cols, int64(rows))
	defer rec.Release()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	props := pq.NewWriterProperties(pq.WithDictionaryDefault(!l.plain), pq.WithStats(true),
		pq.WithMaxRowGroupLength(int64(l.rowGroup)))
	w, err := pqarrow.NewFileWriter(eventsPlusSchema, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lo, hi := ts.Value(0), ts.Value(0)
	for i := 0; i < rows; i++ {
		lo, hi = min(lo, ts.Value(i)), max(hi, ts.Value(i))
	}
	ms := func(v arrow.Timestamp) string {
		return time.UnixMicro(int64(v)).UTC().Truncate(time.Millisecond).Format("2006-01-02T15:04:05.000")
	}
	if l.fewStats || !l.delta {
		return fmt.Sprintf(`{"numRecords":%d,"minValues":{"ts":%q},"maxValues":{"ts":%q},"nullCount":{"none":%d,"ts":0}}`, rows, ms(lo), ms(hi), rows)
	}
	// As a Delta writer states every column: null counts, and bounds of all but
	// booleans, timestamps cut to the millisecond.
	st := map[string]any{"numRecords": rows}
	mins, maxs, nulls := map[string]any{}, map[string]any{}, map[string]any{}
	for i, f := range eventsPlusSchema.Fields() {
		a := cols[i]
		nulls[f.Name] = a.NullN()
		var lo, hi any
		for j := 0; j < rows; j++ {
			if a.IsNull(j) {
				continue
			}
			var v any
			switch x := a.(type) {
			case *array.Timestamp:
				v = int64(x.Value(j))
			case *array.Int64:
				v = x.Value(j)
			case *array.Int32:
				v = int64(x.Value(j))
			case *array.Float64:
				if math.IsNaN(x.Value(j)) {
					continue // writers leave NaN out of bounds
				}
				v = x.Value(j)
			case *array.String:
				v = x.Value(j)
			default:
				continue
			}
			if lo == nil || lessAny(v, lo) {
				lo = v
			}
			if hi == nil || lessAny(hi, v) {
				hi = v
			}
		}
		if lo == nil {
			continue
		}
		if f.Type.ID() == arrow.TIMESTAMP {
			lo, hi = ms(arrow.Timestamp(lo.(int64))), ms(arrow.Timestamp(hi.(int64)))
		}
		mins[f.Name], maxs[f.Name] = lo, hi
	}
	st["minValues"], st["maxValues"], st["nullCount"] = mins, maxs, nulls
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lessAny orders two values of one column's Go type.
func lessAny(a, b any) bool {
	switch x := a.(type) {
	case int64:
		return x < b.(int64)
	case float64:
		return x < b.(float64)
	case string:
		return x < b.(string)
	}
	return false
}

// layoutPredicate draws a filter over the layout's columns: the events filters of
// randomPredicate, plus the all-NULL and sparse columns, strings, and the partition
// column of a Hive layout.
func layoutPredicate(r *rand.Rand, l zoneLayout) string {
	leaf := func() string {
		switch r.IntN(10) {
		case 0:
			return []string{"none IS NULL", "none IS NOT NULL", "none > 5", "NOT (none < 5)"}[r.IntN(4)]
		case 1:
			return []string{"sparse IS NULL", "sparse IS NOT NULL",
				fmt.Sprintf("sparse > %d", r.IntN(1000)), fmt.Sprintf("sparse <= %d", r.IntN(50))}[r.IntN(4)]
		case 2:
			return []string{"country = 'US'", "country >= 'M'", "category < 'cat_10'", "country IN ('DE', 'FR')"}[r.IntN(4)]
		case 3:
			if l.hiveByDay {
				d := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, r.IntN(91))
				lit := d.Format("2006-01-02")
				switch r.IntN(5) {
				case 0:
					return fmt.Sprintf("day = DATE '%s'", lit)
				case 4:
					return []string{"day IS NULL", "day IS NOT NULL"}[r.IntN(2)]
				case 1:
					return fmt.Sprintf("day >= DATE '%s'", lit)
				case 2:
					return fmt.Sprintf("day BETWEEN DATE '%s' AND DATE '%s'", lit, d.AddDate(0, 0, r.IntN(20)).Format("2006-01-02"))
				}
				return fmt.Sprintf("day IN (DATE '%s', DATE '2024-02-29')", lit)
			}
		}
		return randomPredicate(r)
	}
	return predicateTree(r, 2, leaf)
}

var layoutAggregates = []string{
	"count(*)", "count(amount)", "count(none)", "count(sparse)", "count(flag)",
	"min(ts)", "max(ts)", "min(status)", "max(status)", "min(amount)", "max(amount)",
	"min(country)", "max(category)", "min(none)", "max(none)", "min(sparse)", "max(sparse)", "max(flag)",
	"sum(status)", "sum(user_id)", "sum(amount)", "sum(none)", "sum(sparse)",
	"avg(status)", "avg(latency_ms)", "avg(none)", "avg(sparse)",
}

// TestZoneAnswersEqualScansOverLayouts is the zone differential test over every
// layout: random filtered aggregates, grouped by the partition column where there is
// one, answered zone by zone give what a full scan gives, after a metadata ANALYZE
// and after a full one.
func TestZoneAnswersEqualScansOverLayouts(t *testing.T) {
	const statements = 40
	for li, l := range zoneLayouts {
		t.Run(l.name, func(t *testing.T) {
			loc := l.write(t, t.TempDir())
			e := open(t, lore.Options{NoAutoRefresh: true})
			format := "parquet"
			switch {
			case l.delta:
				format = "delta"
			case l.iceberg:
				format = "iceberg"
			}
			query(t, e, fmt.Sprintf("CREATE TABLE t WITH (location = '%s', format = '%s')", loc, format))
			if l.deletes {
				want := l.rows
				for k := 0; k < l.files; k++ {
					want -= int64(len(l.deleted(k)))
				}
				if got := cell(query(t, e, "SELECT count(*) FROM t"), 0, 0); got != fmt.Sprint(want) {
					t.Fatalf("%s rows after deletes, want %d", got, want)
				}
			}
			r := rand.New(rand.NewPCG(uint64(li), 21))
			for _, depth := range []string{"ANALYZE t", "ANALYZE t WITH (sketches = true)"} {
				res := query(t, e, depth)
				// A Delta log stating every column is the record, one zone per file.
				if n := res.Record.Scans[0].FilesOpened; l.delta && !l.fewStats && depth == "ANALYZE t" && n != 0 {
					t.Fatalf("%s opened %d footers; the log states everything", depth, n)
				}
				answered, skipped, contexts := 0, 0, 0
				for n := 0; n < statements; n++ {
					k := 1 + r.IntN(4)
					var sel []string
					for i := 0; i < k; i++ {
						sel = append(sel, layoutAggregates[r.IntN(len(layoutAggregates))])
					}
					var sql string
					switch {
					case l.hiveByDay && n%3 == 2:
						sql = fmt.Sprintf("SELECT day, %s FROM t GROUP BY day ORDER BY day NULLS FIRST", strings.Join(sel, ", "))
					case l.hiveByDay && n%3 == 1:
						sql = fmt.Sprintf("SELECT day, %s FROM t WHERE %s GROUP BY day ORDER BY day NULLS FIRST", strings.Join(sel, ", "), layoutPredicate(r, l))
					default:
						sql = fmt.Sprintf("SELECT %s FROM t WHERE %s", strings.Join(sel, ", "), layoutPredicate(r, l))
					}
					want := run(t, e, sql, scanned)
					got := run(t, e, sql, nil)
					if w, g := resultText(want), resultText(got); w != g && !closeResults(w, g, 1e-9) {
						t.Fatalf("%s after %s:\nanswered %s\nscanned  %s\nrecord %+v", sql, depth, g, w, got.Record.Execution)
					}
					if got.Record.Execution.Mode == "context" {
						contexts++
					}
					for _, s := range got.Record.Scans {
						answered += int(s.RowGroupsAnswered)
						skipped += int(s.RowGroupsPruned)
					}
				}
				t.Logf("%s: %d row groups answered, %d pruned, %d of %d statements without reading", depth, answered, skipped, contexts, statements)
				if l.clustered && answered+contexts == 0 {
					t.Errorf("%s: nothing was answered from statistics", depth)
				}
			}
			if l.hiveByDay {
				if got := cell(query(t, e, "SELECT count(*) FROM t WHERE day IS NULL"), 0, 0); got != "450" {
					t.Errorf("the NULL partition holds %s rows, want 450", got)
				}
				// Per partition, an exact distinct count still reads its zones.
				checkNotFromZones(t, e, "SELECT day, count(DISTINCT country), count(*) FROM t WHERE day >= DATE '2024-03-20' GROUP BY day ORDER BY day NULLS FIRST", "aggregate needs rows")
			}
		})
	}
}

// checkNotFromZones runs sql, which every zone's verdict would let statistics answer
// but its partials must not: it reads every zone it does not skip, gives the scanned
// result, and EXPLAIN names why.
func checkNotFromZones(t *testing.T, e *lore.Engine, sql, reason string) {
	t.Helper()
	want := run(t, e, sql, scanned)
	got := run(t, e, sql, nil)
	answered := 0
	for _, s := range got.Record.Scans {
		answered += int(s.RowGroupsAnswered)
	}
	if got.Record.Execution.Mode != "scan" || answered != 0 || len(got.Record.Scans) == 0 {
		t.Errorf("%s: answered from partials, which it must not be: %+v, scans %+v", sql, got.Record.Execution, got.Record.Scans)
	}
	if w, g := resultText(want), resultText(got); w != g && !closeResults(w, g, 1e-9) {
		t.Errorf("%s: got\n%s\nwant\n%s", sql, g, w)
	}
	if p := explain(t, e, sql, nil); !strings.Contains(p, reason) {
		t.Errorf("%s: EXPLAIN does not say %q:\n%s", sql, reason, p)
	}
}

// TestZonesThatMustNotAnswer: zones every row of which matches are still read when
// their partials are not exact (bounds only), not on record (sums of a metadata
// record), of a record gone stale, or of no use to the aggregate (an exact
// COUNT(DISTINCT) has no partial, though a sketch is on record).
func TestZonesThatMustNotAnswer(t *testing.T) {
	l := zoneLayout{name: "clustered", rows: 16_000, files: 2, clustered: true, rowGroup: 2_000}
	dir := t.TempDir()
	loc := l.write(t, dir)
	e := open(t, lore.Options{NoAutoRefresh: true})
	query(t, e, fmt.Sprintf("CREATE TABLE t WITH (location = '%s', format = 'parquet')", loc))
	query(t, e, "ANALYZE t")
	edge := cell(query(t, e, "SELECT max(ts) FROM (SELECT ts FROM t ORDER BY ts LIMIT 2000)"), 0, 0)
	where := fmt.Sprintf(" FROM t WHERE ts > TIMESTAMP '%s'", edge)
	// The aligned filter alone is answered: every zone is none or all.
	if res := run(t, e, "SELECT count(*)"+where, nil); res.Record.Execution.Mode != "context" {
		t.Fatalf("the aligned count was not answered: %+v", res.Record.Execution)
	}
	// A metadata record: string bounds from footers are not values, float bounds leave
	// NaN out, and there are no sums.
	checkNotFromZones(t, e, "SELECT count(*), min(country), max(category)"+where, "bounds inexact")
	checkNotFromZones(t, e, "SELECT max(amount)"+where, "bounds inexact")
	checkNotFromZones(t, e, "SELECT count(*), sum(status)"+where, "partials missing")
	checkNotFromZones(t, e, "SELECT avg(latency_ms)"+where, "partials missing")

	query(t, e, "ANALYZE t WITH (sketches = true)")
	checkNotFromZones(t, e, "SELECT count(DISTINCT status)"+where, "aggregate needs rows")
	checkNotFromZones(t, e, "SELECT count(*), count(DISTINCT country)"+where, "aggregate needs rows")
	checkNotFromZones(t, e, "SELECT approx_count_distinct(user_id)"+where, "aggregate needs rows")
	checkNotFromZones(t, e, "SELECT sum(status * 2)"+where, "aggregate needs rows")
	if res := run(t, e, "SELECT count(*), sum(status), max(country), max(amount)"+where, nil); res.Record.Execution.Mode != "context" {
		t.Fatalf("the full record did not answer: %+v", res.Record.Execution)
	}

	// A file lands: the record is stale, and the new rows are counted.
	l.rewrite(t, filepath.Join(dir, "src", gen.EventsFileName(1)), filepath.Join(loc, "zz-late.parquet"))
	checkNotFromZones(t, e, "SELECT count(*), sum(status), max(country), max(amount)"+where, "record stale")
}

// TestZonesWithTruncatedStringBounds reads a file whose writer truncated its string
// bounds to 256 bytes (raising the maximum) and marked them inexact
// (tests/testdata/longstr.parquet, written by DuckDB): the metadata record keeps them
// as bounds only, so they skip and classify zones but never answer MIN or MAX; the
// full record's exact bounds do. Either way the results are the scanned ones.
func TestZonesWithTruncatedStringBounds(t *testing.T) {
	path, err := filepath.Abs(filepath.Join("tests", "testdata", "longstr.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the fixture is missing (tests/oracle/cmd/mkdata writes it): %v", err)
	}
	e := open(t, lore.Options{NoAutoRefresh: true})
	registerStats(t, e, path)
	query(t, e, "ANALYZE t")
	// The record's string bounds are not values: MIN(s) of the table reads.
	checkScanned(t, e, "SELECT min(s) FROM t")
	const aligned = " FROM t WHERE s >= 'b'"
	if res := run(t, e, "SELECT count(*), max(k)"+aligned, nil); res.Record.Execution.Mode != "context" {
		t.Errorf("count(*) and an exact bound over truncated bounds that classify: %+v", res.Record.Execution)
	}
	checkNotFromZones(t, e, "SELECT count(*), max(s)"+aligned, "bounds inexact")
	p := explain(t, e, "SELECT count(*), max(s)"+aligned, nil)
	if z := parseZones(t, p); z.considered != 3 || z.by["skipped"]["bounds exclude"] != 1 || z.by["read"]["bounds inexact"] != 2 {
		t.Errorf("zones %+v\n%s", z, p)
	}
	// Literals at and around the truncated bounds, and the values themselves.
	lits := []string{"'a'", "'b'", "'c'", "'d'", "rpad('a', 256, 'y')", "rpad('a', 255, 'y') || 'z'",
		"rpad('b', 256, 'y')", "rpad('b', 301, 'y') || '02048'", "rpad('a', 301, 'y') || '02047'", "rpad('c', 257, 'y')"}
	ops := []string{"=", "<", "<=", ">", ">=", "<>"}
	aggs := []string{"count(*), min(id), max(id)", "count(n), max(s)", "min(s), count(*)", "max(n), min(k)"}
	for _, depth := range []string{"ANALYZE t", "ANALYZE t WITH (sketches = true)"} {
		query(t, e, depth)
		r := rand.New(rand.NewPCG(3, 4))
		for n := 0; n < 40; n++ {
			pred := fmt.Sprintf("s %s %s", ops[r.IntN(len(ops))], lits[r.IntN(len(lits))])
			switch r.IntN(4) {
			case 0:
				pred += fmt.Sprintf(" AND n %s rpad('', 280, 'q') || '%d'", ops[r.IntN(len(ops))], r.IntN(40))
			case 1:
				pred = fmt.Sprintf("NOT (%s) OR k = 'k%d'", pred, r.IntN(3))
			}
			sql := fmt.Sprintf("SELECT %s FROM t WHERE %s", aggs[r.IntN(len(aggs))], pred)
			want := run(t, e, sql, scanned)
			got := run(t, e, sql, nil)
			if resultText(got) != resultText(want) {
				t.Fatalf("%s after %s:\nanswered %s\nscanned  %s", sql, depth, resultText(got), resultText(want))
			}
		}
	}
	if res := run(t, e, "SELECT count(*), max(s)"+aligned, nil); res.Record.Execution.Mode != "context" {
		t.Errorf("the full record's exact bounds did not answer: %+v", res.Record.Execution)
	}
}

// statsPredicate draws a filter over statsSchema: every kind of bound (integers,
// dates, timestamps, decimals, strings, floats, booleans), the column with some NULLs
// and the one with nothing else, and the partition columns of the Hive layouts.
// Literals lean to the ends of each range, where zones are wholly in or out.
func statsPredicate(r *rand.Rand, hive bool) string {
	op := func() string { return []string{"=", "<>", "<", "<=", ">", ">="}[r.IntN(6)] }
	edge := func(lo, hi int64) int64 {
		span := hi - lo
		switch r.IntN(3) {
		case 0:
			return lo + r.Int64N(span/50+1)
		case 1:
			return hi - r.Int64N(span/50+1)
		}
		return lo + r.Int64N(span)
	}
	leaf := func() string {
		switch r.IntN(12) {
		case 0:
			return fmt.Sprintf("i64 %s %d", op(), edge(-1_000_000, 1_000_000))
		case 1:
			return fmt.Sprintf("i32 %s %d", op(), edge(-500, 500))
		case 2:
			return fmt.Sprintf("d %s DATE '%s'", op(), time.Unix(edge(-10_000, 30_000)*86_400, 0).UTC().Format("2006-01-02"))
		case 3:
			return fmt.Sprintf("ts %s TIMESTAMP '%s'", op(), time.UnixMicro(edge(-1e15, 3e15)).UTC().Format("2006-01-02 15:04:05"))
		case 4:
			return fmt.Sprintf("dec %s %d.%02d", op(), edge(-10_000_000, 10_000_000), r.IntN(100))
		case 5:
			return fmt.Sprintf("s %s 's%05d'", op(), edge(0, 30_000))
		case 6:
			return fmt.Sprintf("f %s %d", op(), edge(-400, 400))
		case 7:
			return []string{"b", "NOT b", "b IS NULL", "b = false"}[r.IntN(4)]
		case 8:
			return []string{"some_null IS NULL", "some_null IS NOT NULL", fmt.Sprintf("some_null %s %d", op(), r.IntN(110))}[r.IntN(3)]
		case 9:
			return []string{"all_null IS NULL", "all_null IS NOT NULL", fmt.Sprintf("all_null %s 3", op()), "empty_s = ''", "empty_s <> ''"}[r.IntN(5)]
		}
		if hive {
			return []string{"region = 'eu'", "region <> 'us'", "region IS NULL", "region IS NOT NULL", "day = 1", "day > 1", "day IN (2, 5)"}[r.IntN(7)]
		}
		return fmt.Sprintf("i64 BETWEEN %d AND %d", edge(-1_000_000, 0), edge(0, 1_000_000))
	}
	return predicateTree(r, 2, leaf)
}

var statsAggregates = []string{
	"count(*)", "count(some_null)", "count(all_null)", "count(s)",
	"min(i64)", "max(i32)", "min(d)", "max(ts)", "min(dec)", "max(dec)", "min(s)", "max(s)", "min(f)", "max(f)",
	"min(b)", "max(b)", "min(some_null)", "max(all_null)", "min(empty_s)",
	"sum(i64)", "sum(i32)", "sum(dec)", "sum(some_null)", "sum(all_null)", "sum(f)",
	"avg(i32)", "avg(dec)", "avg(some_null)", "avg(all_null)",
}

// TestZoneAnswersEqualScansOverStatsLayouts runs random filtered aggregates over the
// statistics test's layouts (several files with an empty one, plain encoding, Hive
// partitions with a NULL one) and every type of bound.
func TestZoneAnswersEqualScansOverStatsLayouts(t *testing.T) {
	const statements = 25
	for li, layout := range statsLayouts {
		t.Run(layout.name, func(t *testing.T) {
			e := open(t, lore.Options{NoAutoRefresh: true})
			registerStats(t, e, layout.write(t, t.TempDir()))
			hive := strings.HasPrefix(layout.name, "hive")
			r := rand.New(rand.NewPCG(uint64(li), 77))
			for _, depth := range []string{"ANALYZE t", "ANALYZE t WITH (sketches = true)"} {
				query(t, e, depth)
				answered := 0
				for n := 0; n < statements; n++ {
					k := 1 + r.IntN(4)
					var sel []string
					for i := 0; i < k; i++ {
						sel = append(sel, statsAggregates[r.IntN(len(statsAggregates))])
					}
					sql := fmt.Sprintf("SELECT %s FROM t WHERE %s", strings.Join(sel, ", "), statsPredicate(r, hive))
					if hive && n%2 == 0 {
						sql = fmt.Sprintf("SELECT region, %s FROM t WHERE %s GROUP BY region ORDER BY region NULLS FIRST",
							strings.Join(sel, ", "), statsPredicate(r, hive))
					}
					want := run(t, e, sql, scanned)
					got := run(t, e, sql, nil)
					if w, g := resultText(want), resultText(got); w != g && !closeResults(w, g, 1e-9) {
						t.Fatalf("%s after %s:\nanswered %s\nscanned  %s\nrecord %+v", sql, depth, g, w, got.Record.Execution)
					}
					for _, s := range got.Record.Scans {
						answered += int(s.RowGroupsAnswered)
					}
					if got.Record.Execution.Mode == "context" {
						answered++
					}
				}
				t.Logf("%s: %d row groups or statements answered", depth, answered)
			}
		})
	}
}
