package lore_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/loredb/lore"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/shareddata"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage"
)

// The differential guarantee (SPEC §11): every statement statistics may answer gives,
// answered, what it gives scanned; every statement they may not answer is scanned.

// statsSchema is the test table: one column per kind of bound, plus columns with
// NULLs and with nothing but NULLs.
var statsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "dec", Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "some_null", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "all_null", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "empty_s", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// statsRecord makes n rows from r.
func statsRecord(r *rand.Rand, n int) arrow.Record {
	mem := memory.DefaultAllocator
	b := array.NewRecordBuilder(mem, statsSchema)
	defer b.Release()
	for i := 0; i < n; i++ {
		b.Field(0).(*array.Int64Builder).Append(r.Int64N(2_000_000) - 1_000_000)
		b.Field(1).(*array.Int32Builder).Append(int32(r.IntN(1000) - 500))
		b.Field(2).(*array.Date32Builder).Append(arrow.Date32(r.IntN(40_000) - 10_000))
		b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(r.Int64N(4e15) - 1e15))
		b.Field(4).(*array.Decimal128Builder).Append(decimal128.FromI64(r.Int64N(2e9) - 1e9))
		b.Field(5).(*array.StringBuilder).Append(fmt.Sprintf("s%05d", r.IntN(30_000)))
		b.Field(6).(*array.Float64Builder).Append(r.NormFloat64() * 100)
		b.Field(7).(*array.BooleanBuilder).Append(r.IntN(3) == 0)
		if r.IntN(4) == 0 {
			b.Field(8).AppendNull()
		} else {
			b.Field(8).(*array.Int64Builder).Append(r.Int64N(100))
		}
		b.Field(9).AppendNull()
		b.Field(10).(*array.StringBuilder).Append("")
	}
	return b.NewRecord()
}

// writeStatsFile writes rows rows in row groups of rg rows, dictionary-encoded or
// plain.
func writeStatsFile(t *testing.T, path string, seed uint64, rows, rg int, dictionary bool) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	props := pq.NewWriterProperties(pq.WithDictionaryDefault(dictionary), pq.WithStats(true), pq.WithMaxRowGroupLength(int64(max(rg, 1))))
	w, err := pqarrow.NewFileWriter(statsSchema, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 1))
	for left := rows; left > 0; left -= rg {
		rec := statsRecord(r, min(left, rg))
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// statsLayouts are the layouts the differential test covers, each a function writing
// a table under dir and returning its location.
var statsLayouts = []struct {
	name  string
	write func(t *testing.T, dir string) string
}{
	{"one file", func(t *testing.T, dir string) string {
		p := filepath.Join(dir, "one.parquet")
		writeStatsFile(t, p, 1, 3000, 3000, true)
		return p
	}},
	{"many files with an empty one", func(t *testing.T, dir string) string {
		for i := 0; i < 5; i++ {
			writeStatsFile(t, filepath.Join(dir, fmt.Sprintf("part-%d.parquet", i)), uint64(10+i), 2000+300*i, 700, true)
		}
		writeStatsFile(t, filepath.Join(dir, "part-9.parquet"), 99, 0, 100, true)
		return dir
	}},
	{"plain encoding", func(t *testing.T, dir string) string {
		for i := 0; i < 3; i++ {
			writeStatsFile(t, filepath.Join(dir, fmt.Sprintf("p%d.parquet", i)), uint64(20+i), 1500, 500, false)
		}
		return dir
	}},
	{"hive region/day", func(t *testing.T, dir string) string {
		for i, region := range []string{"eu", "us"} {
			for day := 1; day <= 2; day++ {
				p := filepath.Join(dir, "region="+region, fmt.Sprintf("day=%d", day), "data.parquet")
				writeStatsFile(t, p, uint64(30+2*i+day), 800, 300, true)
			}
		}
		return dir
	}},
	{"hive day/region", func(t *testing.T, dir string) string {
		for day := 1; day <= 2; day++ {
			for i, region := range []string{"eu", "us", "NULL"} {
				p := filepath.Join(dir, fmt.Sprintf("day=%d", day), "region="+region, "data.parquet")
				writeStatsFile(t, p, uint64(40+3*day+i), 600, 250, true)
			}
		}
		return dir
	}},
}

// answeredByMetadata are statements ANALYZE's metadata form answers.
var answeredByMetadata = []string{
	"SELECT count(*) FROM t",
	"SELECT count(*) AS n, count(i64), count(some_null), count(all_null) FROM t",
	"SELECT min(i64), max(i64), min(i32), max(i32) FROM t",
	"SELECT min(d), max(d), min(ts), max(ts) FROM t",
	"SELECT min(dec), max(dec), min(b), max(b) FROM t",
	"SELECT min(some_null), max(some_null), min(all_null), max(all_null), count(all_null) FROM t",
	"SELECT max(i64) - min(i64) AS spread, count(*) * 2 AS twice FROM t",
	"SELECT count(*) AS rows_in_t, min(d) AS first_day FROM t",
}

// answeredOnPartitions are answered over Hive layouts, from partition values.
var answeredOnPartitions = []string{
	"SELECT min(region), max(region), count(region), min(day), max(day) FROM t",
}

// neverAnswered must scan whatever the record holds.
var neverAnswered = []string{
	"SELECT count(*) FROM t WHERE i64 > 0",
	"SELECT i32 > 0 AS pos, count(*) FROM t GROUP BY i32 > 0 ORDER BY pos",
	"SELECT sum(i64) FROM t",
	"SELECT count(DISTINCT i32) FROM t",
	"SELECT count(*) FROM t AS a JOIN (SELECT 1 AS one) AS b ON true",
	"SELECT min(i64 + 1) FROM t",
	"SELECT min(s), max(s) FROM t", // the writer marks no string bound exact
	"SELECT min(f), max(f) FROM t", // float bounds from footers leave NaN out
	// The stored partials know nothing of a FILTER's rows.
	"SELECT count(*) FILTER (WHERE i64 > 0), min(i64) FILTER (WHERE i32 > 0), max(d) FILTER (WHERE i64 < 0) FROM t",
	"SELECT count_if(i64 > 0), arg_min(i32, i64), bool_or(i64 > 0), median(i32) FROM t",
}

func registerStats(t *testing.T, e *lore.Engine, location string) {
	t.Helper()
	query(t, e, fmt.Sprintf("CREATE TABLE t WITH (location = '%s', format = 'parquet')", location))
}

// resultText renders every row of a result, for comparing two results.
func resultText(res *lore.Result) string {
	var b strings.Builder
	for r := 0; r < int(res.NumRows()); r++ {
		for c := 0; c < res.Schema.NumFields(); c++ {
			b.WriteString(cell(res, r, c))
			b.WriteByte('|')
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func run(t *testing.T, e *lore.Engine, sql string, settings map[string]string) *lore.Result {
	t.Helper()
	res, err := e.Query(context.Background(), sql, settings)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return res
}

var scanned = map[string]string{"use_statistics": "false"}

// checkAnswered runs sql scanned and answered, and checks both results and records.
func checkAnswered(t *testing.T, e *lore.Engine, sql string) {
	t.Helper()
	want := run(t, e, sql, scanned)
	if want.Record.Execution.Mode != "scan" || !strings.HasSuffix(want.Record.Execution.Detail, "; statistics bypassed") {
		t.Errorf("%s with use_statistics = false: execution %+v", sql, want.Record.Execution)
	}
	got := run(t, e, sql, nil)
	x := got.Record.Execution
	if x.Mode != "context" || !strings.HasPrefix(x.Detail, "statistics at ") || len(got.Record.Scans) != 0 ||
		len(x.SourceVersion) == 0 || string(x.SourceVersion) != string(x.CurrentSourceVersion) {
		t.Errorf("%s: not answered from statistics: %+v, scans %+v", sql, x, got.Record.Scans)
		return
	}
	if w, g := resultText(want), resultText(got); w != g {
		t.Errorf("%s: answered\n%s\nscanned\n%s", sql, g, w)
	}
	if !equalFields(want.Schema, got.Schema) {
		t.Errorf("%s: answered schema %s, scanned %s", sql, got.Schema, want.Schema)
	}
}

func equalFields(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.Fields() {
		if a.Field(i).Name != b.Field(i).Name || !arrow.TypeEqual(a.Field(i).Type, b.Field(i).Type) {
			return false
		}
	}
	return true
}

// checkScanned runs sql and checks that it read the table and gave the scanned result.
func checkScanned(t *testing.T, e *lore.Engine, sql string) {
	t.Helper()
	want := run(t, e, sql, scanned)
	got := run(t, e, sql, map[string]string{"result_cache": "false"})
	if got.Record.Execution.Mode != "scan" || len(got.Record.Scans) == 0 {
		t.Errorf("%s: answered from statistics, which it must not be: %+v", sql, got.Record.Execution)
	}
	if w, g := resultText(want), resultText(got); w != g {
		t.Errorf("%s: got\n%s\nwant\n%s", sql, g, w)
	}
}

func TestStatisticsAnswerAsScansDo(t *testing.T) {
	for _, layout := range statsLayouts {
		t.Run(layout.name, func(t *testing.T) {
			e := open(t, lore.Options{})
			registerStats(t, e, layout.write(t, t.TempDir()))
			// Before ANALYZE everything scans.
			checkScanned(t, e, "SELECT count(*) FROM t")
			res := run(t, e, "ANALYZE t", nil)
			if got := cell(res, 0, 0); got != "t" {
				t.Fatalf("ANALYZE result table = %s", got)
			}
			for _, sql := range answeredByMetadata {
				checkAnswered(t, e, sql)
			}
			if strings.HasPrefix(layout.name, "hive") {
				for _, sql := range answeredOnPartitions {
					checkAnswered(t, e, sql)
				}
			}
			for _, sql := range neverAnswered {
				checkScanned(t, e, sql)
			}
		})
	}
}

// TestStaleRecordsNeverAnswer changes the source in every way that makes a record
// stale and checks that the next statement scans and sees the change.
func TestStaleRecordsNeverAnswer(t *testing.T) {
	changes := []struct {
		name   string
		change func(t *testing.T, dir string)
	}{
		{"a file added", func(t *testing.T, dir string) {
			writeStatsFile(t, filepath.Join(dir, "new.parquet"), 77, 100, 100, true)
		}},
		{"a file removed", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "a.parquet")); err != nil {
				t.Fatal(err)
			}
		}},
		{"a file rewritten with the same size", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "a.parquet")
			info, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			later := info.ModTime().Add(2 * time.Second)
			if err := os.Chtimes(p, later, later); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeStatsFile(t, filepath.Join(dir, "a.parquet"), 1, 1000, 400, true)
			writeStatsFile(t, filepath.Join(dir, "b.parquet"), 2, 1000, 400, true)
			// No background refresh: the stale record must stay to be checked.
			e := open(t, lore.Options{NoAutoRefresh: true})
			registerStats(t, e, dir)
			run(t, e, "ANALYZE t", nil)
			checkAnswered(t, e, "SELECT count(*), max(i64) FROM t")
			c.change(t, dir)
			checkScanned(t, e, "SELECT count(*), max(i64) FROM t")
			show := run(t, e, "SHOW STATS FOR t", nil)
			if stale := cell(show, 0, show.Schema.NumFields()-1); stale != "true" {
				t.Errorf("SHOW STATS stale = %s after %s", stale, c.name)
			}
			// ANALYZE again, and the record answers at the new version.
			run(t, e, "ANALYZE t", nil)
			checkAnswered(t, e, "SELECT count(*), max(i64) FROM t")
		})
	}
}

func TestAnalyzeOptionsAreCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	writeStatsFile(t, filepath.Join(dir, "a.parquet"), 1, 100, 100, true)
	e := open(t, lore.Options{})
	registerStats(t, e, dir)
	for _, sql := range []string{
		"ANALYZE t WITH (bogus = true)",
		"ANALYZE t WITH (distinct = true, columns = ARRAY['i64'])",
		"ANALYZE t WITH (columns = ARRAY['nope'])",
		"ANALYZE t WITH (sketches = 'yes')",
		"ANALYZE t WITH (columns = ARRAY['i64'], columns = ARRAY['i32'])",
	} {
		_, err := e.Query(context.Background(), sql, nil)
		if errs.CodeOf(err) != errs.Analysis {
			t.Errorf("%s: %v, want ANALYSIS_ERROR", sql, err)
		}
	}
	if _, err := e.Query(context.Background(), "SHOW STATS FOR t", nil); errs.CodeOf(err) != errs.StatisticsUnavailable {
		t.Fatalf("a refused ANALYZE left a record: %v", err)
	}
}

// readLog is a store that records every byte range read from each object.
type readLog struct {
	storage.Local
	mu    sync.Mutex
	reads map[string][][2]int64
}

type loggedReader struct {
	storage.Reader
	log  *readLog
	path string
}

func (s *readLog) Open(ctx context.Context, path string) (storage.Reader, error) {
	r, err := s.Local.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	return &loggedReader{r, s, path}, nil
}

func (r *loggedReader) ReadAt(p []byte, off int64) (int, error) {
	r.log.mu.Lock()
	r.log.reads[r.path] = append(r.log.reads[r.path], [2]int64{off, off + int64(len(p))})
	r.log.mu.Unlock()
	return r.Reader.ReadAt(p, off)
}

// footerStart is where a Parquet file's footer begins: everything before it is pages.
func footerStart(t *testing.T, path string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(binary.LittleEndian.Uint32(b[len(b)-8:]))
	return int64(len(b)) - 8 - n
}

func TestMetadataAnalyzeReadsNoDataPage(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 4; i++ {
		// Seeds no other test uses, so that no footer of these files is cached.
		writeStatsFile(t, filepath.Join(dir, fmt.Sprintf("f%d.parquet", i)), uint64(900+i), 2000, 500, true)
	}
	e := open(t, lore.Options{})
	log := &readLog{reads: map[string][][2]int64{}}
	lore.SetStore(e, log)
	registerStats(t, e, dir)
	log.reads = map[string][][2]int64{}
	run(t, e, "ANALYZE t", nil)
	files, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	for _, f := range files {
		start := footerStart(t, f)
		for _, r := range log.reads[f] {
			if r[0] < start {
				t.Errorf("ANALYZE read bytes %d-%d of %s, before its footer at %d", r[0], r[1], filepath.Base(f), start)
			}
		}
	}
	// A scan of the same files does read pages: the log sees them.
	log.reads = map[string][][2]int64{}
	run(t, e, "SELECT sum(i64) FROM t", nil)
	if len(log.reads) == 0 {
		t.Fatal("the scan read nothing through the logged store")
	}
}

func TestAnalyzeFailsWhenTheSourceMoves(t *testing.T) {
	dir := t.TempDir()
	writeStatsFile(t, filepath.Join(dir, "a.parquet"), 1, 500, 500, true)
	e := open(t, lore.Options{})
	registerStats(t, e, dir)
	run(t, e, "ANALYZE t", nil)
	before := run(t, e, "SHOW STATS FOR t", nil)
	lore.SetAnalyzeHook(func(string) {
		writeStatsFile(t, filepath.Join(dir, "b.parquet"), 2, 500, 500, true)
	})
	defer lore.SetAnalyzeHook(nil)
	_, err := e.Query(context.Background(), "ANALYZE t", nil)
	if errs.CodeOf(err) != errs.SourceChanged {
		t.Fatalf("ANALYZE while a file landed: %v, want SOURCE_CHANGED", err)
	}
	lore.SetAnalyzeHook(nil)
	after := run(t, e, "SHOW STATS FOR t", nil)
	// The same record, now stale: every row but its last column is unchanged.
	unstale := func(res *lore.Result) string { return strings.ReplaceAll(resultText(res), "|true|\n", "|false|\n") }
	if resultText(before) != unstale(after) {
		t.Fatalf("the previous record changed:\n%s\nthen\n%s", resultText(before), resultText(after))
	}
}

func TestExactDistinctCountsAnswerApproxCountDistinct(t *testing.T) {
	dir := t.TempDir()
	writeStatsFile(t, filepath.Join(dir, "a.parquet"), 5, 3000, 1000, true)
	writeStatsFile(t, filepath.Join(dir, "b.parquet"), 6, 2000, 1000, true)
	e := open(t, lore.Options{})
	registerStats(t, e, dir)
	const sql = "SELECT approx_count_distinct(i32) AS n FROM t"
	res := run(t, e, "ANALYZE t WITH (columns = ARRAY['i32', 'I32'])", nil)
	if got := cell(res, 0, 2); got != "1" {
		t.Fatalf("distinct_columns = %s", got)
	}
	exact := cell(run(t, e, "SELECT count(DISTINCT i32) FROM t", nil), 0, 0)
	check := func(what string) {
		t.Helper()
		got := run(t, e, sql, nil)
		if got.Record.Execution.Mode != "context" || cell(got, 0, 0) != exact {
			t.Fatalf("%s: %s = %s (%+v), want %s from statistics", what, sql, cell(got, 0, 0), got.Record.Execution, exact)
		}
		a := got.Record.Execution.Approximate
		if len(a) != 1 || a[0].Sketch != "exact count" || a[0].Error != 0 || a[0].Function != "APPROX_COUNT_DISTINCT" {
			t.Fatalf("%s: approximate = %+v", what, a)
		}
	}
	check("after ANALYZE … columns")
	show := run(t, e, "SHOW STATS FOR t", nil)
	if got := cell(show, 1, 4); got != exact+".0" {
		t.Fatalf("SHOW STATS distinct_values_count of i32 = %s, want %s", got, exact)
	}
	// approximate = true turns COUNT(DISTINCT) into the sketch function, which the
	// exact count answers; the record names COUNT.
	got := run(t, e, "SELECT count(DISTINCT i32) FROM t", map[string]string{"approximate": "true"})
	if got.Record.Execution.Mode != "context" || cell(got, 0, 0) != exact ||
		len(got.Record.Execution.Approximate) != 1 || got.Record.Execution.Approximate[0].Function != "COUNT" {
		t.Fatalf("approximate COUNT(DISTINCT): %s %+v", cell(got, 0, 0), got.Record.Execution)
	}
	// A metadata ANALYZE at the same version keeps the exact count.
	run(t, e, "ANALYZE t", nil)
	check("after a metadata ANALYZE at the same version")
	// A new version carries only what was measured under it.
	writeStatsFile(t, filepath.Join(dir, "c.parquet"), 7, 100, 100, true)
	run(t, e, "ANALYZE t", nil)
	checkScanned(t, e, sql)
}

func TestRecordsRefreshInTheBackground(t *testing.T) {
	dir := t.TempDir()
	writeStatsFile(t, filepath.Join(dir, "a.parquet"), 1, 1000, 500, true)
	e := open(t, lore.Options{})
	registerStats(t, e, dir)
	run(t, e, "ANALYZE t WITH (columns = ARRAY['i32'])", nil)
	const sql = "SELECT count(*), min(i64), max(d) FROM t"
	checkAnswered(t, e, sql)
	first := cell(run(t, e, "SHOW STATS FOR t", nil), 0, 9)

	writeStatsFile(t, filepath.Join(dir, "b.parquet"), 2, 700, 500, true)
	// The statement that sees the new file reads it, and starts the refresh.
	if res := run(t, e, sql, nil); res.Record.Execution.Mode != "scan" || cell(res, 0, 0) != "1700" {
		t.Fatalf("the first statement after a file landed: %s rows, %+v", cell(res, 0, 0), res.Record.Execution)
	}
	lore.WaitForRefreshes(e)
	checkAnswered(t, e, sql)
	show := run(t, e, "SHOW STATS FOR t", nil)
	if got := cell(show, 0, 9); got == first || !strings.HasPrefix(got, "listing of 2 files") {
		t.Fatalf("source version after the refresh: %s (before: %s)", got, first)
	}
	if got := cell(show, 1, 4); got != "NULL" {
		t.Fatalf("an exact distinct count survived the refresh: %s", got)
	}

	// A refresh that fails (a file that is not Parquet lands) keeps the old record.
	if err := os.WriteFile(filepath.Join(dir, "c.parquet"), []byte("not parquet at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Query(context.Background(), sql, nil); errs.CodeOf(err) != errs.CorruptSource {
		t.Fatalf("reading a broken file: %v", err)
	}
	lore.WaitForRefreshes(e)
	if got := cell(run(t, e, "SHOW STATS FOR t", nil), 0, 9); !strings.HasPrefix(got, "listing of 2 files") {
		t.Fatalf("a failed refresh replaced the record: %s", got)
	}
}

func TestAutoRefreshCanBeTurnedOff(t *testing.T) {
	t.Setenv("LORE_STATISTICS_AUTO_REFRESH", "false")
	dir := t.TempDir()
	writeStatsFile(t, filepath.Join(dir, "a.parquet"), 1, 1000, 500, true)
	e := open(t, lore.Options{})
	registerStats(t, e, dir)
	run(t, e, "ANALYZE t", nil)
	writeStatsFile(t, filepath.Join(dir, "b.parquet"), 2, 700, 500, true)
	checkScanned(t, e, "SELECT count(*) FROM t")
	lore.WaitForRefreshes(e)
	checkScanned(t, e, "SELECT count(*) FROM t")
}

// answeredByFullRead are statements ANALYZE … WITH (sketches = true) adds: exact
// bounds of every type, zone sums, and the sketches.
var answeredByFullRead = []string{
	"SELECT min(s), max(s), min(f), max(f) FROM t",
	"SELECT min(empty_s), max(empty_s), count(empty_s), approx_count_distinct(empty_s) FROM t",
	"SELECT sum(i64), sum(i32), sum(dec), avg(i32), avg(dec), sum(some_null), sum(all_null), avg(all_null) FROM t",
	"SELECT approx_count_distinct(i64), approx_count_distinct(s), approx_count_distinct(d), approx_count_distinct(all_null) FROM t",
	"SELECT count(*) AS n, sum(i64) / count(*) AS mean, max(s) AS last FROM t",
}

// approximatelyAnswered compare within a tolerance: float sums add in another order.
// Quantiles are answered from a sketch that depends on the order values arrived in,
// so they are checked by rank (TestAnsweredQuantilesHoldTheirRank), not by value.
var approximatelyAnswered = []string{
	"SELECT sum(f), avg(f) FROM t",
}

var answeredQuantiles = []string{
	"SELECT approx_percentile(i64, 0.5), approx_percentile(f, 0.9), approx_percentile(d, 0.1) FROM t",
	"SELECT approx_percentile(ts, ARRAY[0.25, 0.75]) FROM t",
}

func TestFullStatisticsAnswerAsScansDo(t *testing.T) {
	for _, layout := range statsLayouts {
		t.Run(layout.name, func(t *testing.T) {
			e := open(t, lore.Options{})
			registerStats(t, e, layout.write(t, t.TempDir()))
			res := run(t, e, "ANALYZE t WITH (sketches = true)", nil)
			if got := cell(res, 0, 3); got != "local" {
				t.Fatalf("full_read = %s", got)
			}
			for _, sql := range append(append([]string{}, answeredByMetadata...), answeredByFullRead...) {
				checkAnswered(t, e, sql)
			}
			for _, sql := range approximatelyAnswered {
				want := run(t, e, sql, scanned)
				got := run(t, e, sql, nil)
				if got.Record.Execution.Mode != "context" {
					t.Errorf("%s: not answered: %+v", sql, got.Record.Execution)
					continue
				}
				if !closeResults(resultText(want), resultText(got), 1e-9) {
					t.Errorf("%s: answered\n%s\nscanned\n%s", sql, resultText(got), resultText(want))
				}
			}
			for _, sql := range answeredQuantiles {
				got := run(t, e, sql, nil)
				a := got.Record.Execution.Approximate
				if got.Record.Execution.Mode != "context" || len(a) == 0 || a[0].Sketch != "kll k=200" || a[0].ErrorKind != "rank_error" {
					t.Errorf("%s: %+v", sql, got.Record.Execution)
				}
			}
			for _, sql := range []string{"SELECT count(*) FROM t WHERE i64 > 0", "SELECT count(DISTINCT s) FROM t"} {
				checkScanned(t, e, sql)
			}
		})
	}
}

// TestAnsweredQuantilesHoldTheirRank checks an answered quantile against the rows:
// the fraction of values at or below it is within the sketch's rank error.
func TestAnsweredQuantilesHoldTheirRank(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 4; i++ {
		writeStatsFile(t, filepath.Join(dir, fmt.Sprintf("q%d.parquet", i)), uint64(60+i), 5000, 2000, true)
	}
	e := open(t, lore.Options{})
	registerStats(t, e, dir)
	run(t, e, "ANALYZE t WITH (sketches = true)", nil)
	for _, p := range []float64{0.01, 0.25, 0.5, 0.9, 0.99} {
		res := run(t, e, fmt.Sprintf("SELECT approx_percentile(i64, %g) FROM t", p), nil)
		if res.Record.Execution.Mode != "context" {
			t.Fatalf("not answered: %+v", res.Record.Execution)
		}
		q := cell(res, 0, 0)
		rank := run(t, e, fmt.Sprintf("SELECT avg(CASE WHEN i64 <= %s THEN 1.0 ELSE 0.0 END) FROM t", q), nil)
		var r float64
		fmt.Sscan(cell(rank, 0, 0), &r)
		if diff := r - p; diff > 0.0165 || diff < -0.0165 {
			t.Errorf("p=%g: answered %s, whose rank is %.4f", p, q, r)
		}
	}
}

// closeResults compares two rendered results cell by cell, numbers within a
// relative tolerance.
func closeResults(a, b string, tol float64) bool {
	if a == b {
		return true
	}
	ca, cb := strings.FieldsFunc(a, isSep), strings.FieldsFunc(b, isSep)
	if len(ca) != len(cb) {
		return false
	}
	for i := range ca {
		if ca[i] == cb[i] {
			continue
		}
		var x, y float64
		if _, err := fmt.Sscan(ca[i], &x); err != nil {
			return false
		}
		if _, err := fmt.Sscan(cb[i], &y); err != nil {
			return false
		}
		if d := x - y; d > tol*max(abs(x), abs(y), 1) || -d > tol*max(abs(x), abs(y), 1) {
			return false
		}
	}
	return true
}

func isSep(r rune) bool { return r == '|' || r == '\n' || r == '[' || r == ']' || r == ',' || r == ' ' }

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestRefreshFoldsInAddedFiles checks that a background refresh of a full record
// after files land reads only the new files, and that the folded record answers as
// the scans do.
func TestRefreshFoldsInAddedFiles(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 3; i++ {
		writeStatsFile(t, filepath.Join(dir, fmt.Sprintf("old-%d.parquet", i)), uint64(200+i), 1500, 600, true)
	}
	e := open(t, lore.Options{})
	log := &readLog{reads: map[string][][2]int64{}}
	lore.SetStore(e, log)
	registerStats(t, e, dir)
	run(t, e, "ANALYZE t WITH (sketches = true)", nil)
	// A file that sorts between the old ones, so that zones must be renumbered.
	writeStatsFile(t, filepath.Join(dir, "old-1a.parquet"), 210, 900, 400, true)
	writeStatsFile(t, filepath.Join(dir, "zz-new.parquet"), 211, 700, 400, true)
	log.mu.Lock()
	log.reads = map[string][][2]int64{}
	log.mu.Unlock()
	if res := run(t, e, "SELECT count(*) FROM t", nil); res.Record.Execution.Mode != "scan" {
		t.Fatalf("the statement that saw new files: %+v", res.Record.Execution)
	}
	log.mu.Lock()
	log.reads = map[string][][2]int64{} // the scan read everything; watch the refresh only
	log.mu.Unlock()
	lore.WaitForRefreshes(e)
	for i := 0; i < 3; i++ {
		f := filepath.Join(dir, fmt.Sprintf("old-%d.parquet", i))
		start := footerStart(t, f)
		for _, r := range log.reads[f] {
			if r[0] < start {
				t.Errorf("the refresh read data of %s, which the record already described", filepath.Base(f))
			}
		}
	}
	for _, sql := range append(append([]string{}, answeredByMetadata...), answeredByFullRead...) {
		checkAnswered(t, e, sql)
	}
	if res := run(t, e, "SHOW STATS FOR t", nil); !strings.HasPrefix(cell(res, 0, 9), "listing of 5 files") {
		t.Fatalf("refreshed version: %s", cell(res, 0, 9))
	}
}

// TestStatisticsChooseTheBuildSide checks that a record's estimates, current or
// stale, decide which side of a join is built: without statistics an equality keeps
// a tenth of its input; with them, an equality on a column of about 9,000 distinct
// values keeps about one row.
func TestStatisticsChooseTheBuildSide(t *testing.T) {
	dir := t.TempDir()
	writeStatsFile(t, filepath.Join(dir, "big", "a.parquet"), 1, 9000, 3000, true)
	writeStatsFile(t, filepath.Join(dir, "small", "a.parquet"), 2, 500, 500, true)
	e := open(t, lore.Options{NoAutoRefresh: true})
	query(t, e, fmt.Sprintf("CREATE TABLE big WITH (location = '%s', format = 'parquet')", filepath.Join(dir, "big")))
	query(t, e, fmt.Sprintf("CREATE TABLE small WITH (location = '%s', format = 'parquet')", filepath.Join(dir, "small")))
	const sql = "SELECT count(*) FROM big JOIN small ON big.i32 = small.i32 WHERE big.i64 = 12345"
	plan := func() string {
		res := query(t, e, "EXPLAIN "+sql)
		return resultText(res)
	}
	if p := plan(); strings.Contains(p, "build=left") || !strings.Contains(p, "est_rows=900}") {
		t.Fatalf("without statistics the filtered big table (a tenth of 9000) should be probed:\n%s", p)
	}
	query(t, e, "ANALYZE big WITH (sketches = true)")
	if p := plan(); !strings.Contains(p, "build=left") {
		t.Fatalf("with statistics the filtered big table (about 9 rows) should be built:\n%s", p)
	}
	// A stale record still costs.
	writeStatsFile(t, filepath.Join(dir, "big", "b.parquet"), 3, 100, 100, true)
	if p := plan(); !strings.Contains(p, "build=left") {
		t.Fatalf("a stale record should still cost:\n%s", p)
	}
	want := query(t, e, "SET SESSION use_statistics = false; "+sql)
	if got := query(t, e, sql); resultText(got) != resultText(want) {
		t.Fatalf("the join's result changed with its plan: %s vs %s", resultText(got), resultText(want))
	}
}

// filterEstimate is the rows EXPLAIN estimates the filter of
// SELECT count(*) FROM t WHERE where keeps.
func filterEstimate(t *testing.T, e *lore.Engine, where string) float64 {
	t.Helper()
	p := resultText(query(t, e, "EXPLAIN SELECT count(*) FROM t WHERE "+where))
	m := regexp.MustCompile(`Filter .*est_rows=(\d+)`).FindStringSubmatch(p)
	if m == nil {
		t.Fatalf("no filter estimate in\n%s", p)
	}
	n, _ := strconv.ParseFloat(m[1], 64)
	return n
}

// TestStatisticsJudgeARangeAsOne: a lower and an upper bound on one column keep the
// rows between them, estimated from the record as one range (the difference of the
// two ranks), not as two independent conditions (their product), with and without
// NULLs in the column.
func TestStatisticsJudgeARangeAsOne(t *testing.T) {
	dir := t.TempDir()
	writeStatsFile(t, filepath.Join(dir, "t", "a.parquet"), 1, 9000, 3000, true)
	e := open(t, lore.Options{NoAutoRefresh: true})
	query(t, e, fmt.Sprintf("CREATE TABLE t WITH (location = '%s', format = 'parquet')", filepath.Join(dir, "t")))
	query(t, e, "ANALYZE t WITH (sketches = true)")
	for _, c := range []struct {
		where    string
		lo, high float64 // the rows kept: 9000 uniform values times the range's share
	}{
		{"i64 >= 0 AND i64 < 100000", 300, 600},                       // 5 %: 450
		{"i64 BETWEEN -100000 AND 100000 AND i64 > -50000", 500, 900}, // 7.5 %: 675
		{"some_null >= 20 AND some_null < 40", 1000, 1700},            // 20 % of the 75 % not NULL: 1350
		{"i64 >= 500000", 2000, 2500},                                 // one bound alone: 2250
	} {
		if got := filterEstimate(t, e, c.where); got < c.lo || got > c.high {
			t.Errorf("%s: estimated %.0f rows, want %.0f to %.0f", c.where, got, c.lo, c.high)
		}
	}
}

// TestFootersJudgeRangesWithoutARecord: before any ANALYZE, a range on a column is
// judged by the bounds the files' footers give (uniform between them), the other
// conditions guessed as before; the footers never answer the query.
func TestFootersJudgeRangesWithoutARecord(t *testing.T) {
	dir := t.TempDir()
	writeStatsFile(t, filepath.Join(dir, "t", "a.parquet"), 1, 9000, 3000, true)
	home := t.TempDir()
	e := open(t, lore.Options{Home: home, NoAutoRefresh: true})
	query(t, e, fmt.Sprintf("CREATE TABLE t WITH (location = '%s', format = 'parquet')", filepath.Join(dir, "t")))
	for _, c := range []struct {
		where    string
		lo, high float64
	}{
		{"i64 >= 0 AND i64 < 100000", 350, 550},           // 5 % of 9000 between the footers' bounds
		{"i64 >= 0 AND i64 < 100000 AND i32 = 7", 35, 55}, // and a tenth for the equality, guessed
		{"i32 = 7", 899, 901},                             // no range: a tenth, as without footers
		{"i64 >= 2000000", 1, 10},                         // above the bounds: about nothing
	} {
		if got := filterEstimate(t, e, c.where); got < c.lo || got > c.high {
			t.Errorf("%s: estimated %.0f rows, want %.0f to %.0f", c.where, got, c.lo, c.high)
		}
	}
	res := query(t, e, "SELECT count(*) FROM t WHERE i64 >= 0")
	if res.Record.Execution.Mode != "scan" {
		t.Errorf("a table without a record was answered by %q", res.Record.Execution.Mode)
	}
	// A fresh engine knows the table's rows from its home and has no estimate kept:
	// with no footer cached, a small table's footers are read for the estimate.
	e.Close()
	e = open(t, lore.Options{Home: home, NoAutoRefresh: true})
	source.DropCachedFooters()
	if got := filterEstimate(t, e, "i64 >= 0 AND i64 < 100000"); got < 350 || got > 550 {
		t.Errorf("with no footer cached, estimated %.0f rows, want 350 to 550", got)
	}
}

// TestWritersDistinctCountsJudgeEqualities: DuckDB states each row group's distinct
// values in its footer; an equality is judged by the most any row group has (a
// floor on the column's), without a record — where it was guessed at a tenth — and
// with a record of metadata depth, where it was not judged at all.
func TestWritersDistinctCountsJudgeEqualities(t *testing.T) {
	// 100,000 rows in 10 row groups, each stating 11 or 12 distinct values of r_string
	// and r_int32 (100 in all, clustered: r is sorted, r_string is "string_" and r).
	file := filepath.Join(shareddata.Dir(t), "parquet-testing", "duckdb", "bloom_filter_bad_length_range.parquet")
	dir := filepath.Join(t.TempDir(), "t")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, filepath.Join(dir, "a.parquet")); err != nil {
		t.Fatal(err)
	}
	e := open(t, lore.Options{NoAutoRefresh: true})
	query(t, e, fmt.Sprintf("CREATE TABLE t WITH (location = '%s', format = 'parquet')", dir))
	check := func(when string) {
		t.Helper()
		for _, c := range []struct {
			where    string
			lo, high float64
		}{
			{"r_string = 'string_500'", 8000, 8700},           // 1/12 of the rows
			{"r_int32 IN (100, 200)", 16000, 17400},           // 2/12
			{"r_string = 'string_500' AND r = 500", 650, 750}, // 1/12 of 1/12
		} {
			if got := filterEstimate(t, e, c.where); got < c.lo || got > c.high {
				t.Errorf("%s, %s: estimated %.0f rows, want %.0f to %.0f", when, c.where, got, c.lo, c.high)
			}
		}
	}
	check("without a record")
	query(t, e, "ANALYZE t")
	check("with a metadata record")
	// A full read's sketch knows better: 100 values, so 1,000 rows.
	query(t, e, "ANALYZE t WITH (sketches = true)")
	if got := filterEstimate(t, e, "r_string = 'string_500'"); got < 900 || got > 1100 {
		t.Errorf("with sketches: estimated %.0f rows, want about 1,000", got)
	}
}

// TestFootersOfALargeTableAreNotReadToPlan: a table of more files than planning
// reads footers of is judged by its footers only once the process holds them all
// (here after a scan); before, its ranges are guessed.
func TestFootersOfALargeTableAreNotReadToPlan(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	for i := range 65 {
		writeStatsFile(t, filepath.Join(dir, fmt.Sprintf("f%02d.parquet", i)), uint64(i+1), 200, 200, true)
	}
	e := open(t, lore.Options{NoAutoRefresh: true})
	query(t, e, fmt.Sprintf("CREATE TABLE t WITH (location = '%s', format = 'parquet')", dir))
	const where = "i64 >= 0 AND i64 < 100000" // about 5 % of 13,000 rows between the bounds
	source.DropCachedFooters()
	if got := filterEstimate(t, e, where); got >= 450 && got <= 850 {
		t.Errorf("with no footer cached, estimated %.0f rows: the footers were read to plan", got)
	}
	query(t, e, "SELECT count(*) FROM t WHERE i64 >= 0") // the scan opens every footer
	if got := filterEstimate(t, e, where); got < 450 || got > 850 {
		t.Errorf("with every footer cached, estimated %.0f rows, want 450 to 850", got)
	}
	// The record made for the table's version is kept: later statements judge by it
	// without the footers.
	source.DropCachedFooters()
	if got := filterEstimate(t, e, where); got < 450 || got > 850 {
		t.Errorf("with the record kept, estimated %.0f rows, want 450 to 850", got)
	}
}

// TestAnalyzeWhileQuerying runs ANALYZE over and over while other goroutines query
// the table: every answer, from statistics or not, is the same.
func TestAnalyzeWhileQuerying(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 3; i++ {
		writeStatsFile(t, filepath.Join(dir, fmt.Sprintf("c%d.parquet", i)), uint64(300+i), 1000, 500, true)
	}
	e := open(t, lore.Options{})
	registerStats(t, e, dir)
	const sql = "SELECT count(*), min(i64), max(d), sum(i32) FROM t"
	want := resultText(run(t, e, sql, scanned))
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				res, err := e.Query(context.Background(), sql, nil)
				if err != nil {
					errc <- err
					return
				}
				if got := resultText(res); got != want {
					errc <- fmt.Errorf("mode %s gave %q, want %q", res.Record.Execution.Mode, got, want)
					return
				}
			}
		}()
	}
	for i := 0; i < 5; i++ {
		form := []string{"ANALYZE t", "ANALYZE t WITH (sketches = true)"}[i%2]
		if _, err := e.Query(context.Background(), form, nil); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
}

func TestAnalyzeOfAVanishedSource(t *testing.T) {
	dir := t.TempDir()
	writeStatsFile(t, filepath.Join(dir, "a.parquet"), 1, 100, 100, true)
	e := open(t, lore.Options{})
	registerStats(t, e, dir)
	run(t, e, "ANALYZE t", nil)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Query(context.Background(), "ANALYZE t", nil); errs.CodeOf(err) != errs.SourceUnavailable {
		t.Fatalf("ANALYZE of a removed directory: %v", err)
	}
	if _, err := e.Query(context.Background(), "DESCRIBE DETAIL t", nil); errs.CodeOf(err) != errs.DescribeFailed {
		t.Fatalf("DESCRIBE DETAIL of a removed directory: %v", err)
	}
	// The record stays, stale.
	res := run(t, e, "SHOW STATS FOR t", nil)
	if got := cell(res, 0, res.Schema.NumFields()-1); got != "true" {
		t.Fatalf("stale = %s", got)
	}
}

// TestAnsweredUnderSortAndLimit: an ORDER BY or LIMIT above the one-row aggregate
// does not stop statistics from answering it.
func TestAnsweredUnderSortAndLimit(t *testing.T) {
	dir := t.TempDir()
	writeStatsFile(t, filepath.Join(dir, "a.parquet"), 1, 500, 500, true)
	e := open(t, lore.Options{})
	registerStats(t, e, dir)
	run(t, e, "ANALYZE t", nil)
	checkAnswered(t, e, "SELECT count(*) AS n, max(i64) FROM t ORDER BY n LIMIT 1")
}
