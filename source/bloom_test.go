package source

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/loredb/lore/internal/shareddata"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
)

// bloomRows is the number of rows per row group of bloomTable's file.
const bloomRows = 500

// bloomTable writes one file of two row groups whose statistics overlap but whose
// values do not: row group 0 holds the even keys 0, 2, …, 998, row group 1 the odd
// keys 1, 3, …, 999, each as int32, int64, double, string, date and decimal(9,2),
// with every tenth row NULL. Bloom filters are on for every column when bloom is
// set; decimals are stored as integers when asInt is.
func bloomTable(t *testing.T, bloom, asInt bool) *Listing {
	t.Helper()
	dir := t.TempDir()
	mem := memory.DefaultAllocator
	dec := &arrow.Decimal128Type{Precision: 9, Scale: 2}
	fields := []arrow.Field{
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "dec", Type: dec, Nullable: true},
	}
	sch := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(mem, sch)
	defer b.Release()
	for g := range 2 {
		for i := range bloomRows {
			k := 2*i + g
			if i%10 == 9 {
				for _, fb := range b.Fields() {
					fb.AppendNull()
				}
				continue
			}
			b.Field(0).(*array.Int32Builder).Append(int32(k))
			b.Field(1).(*array.Int64Builder).Append(int64(k) * 1_000_000_007)
			b.Field(2).(*array.Float64Builder).Append(float64(k) + 0.5)
			b.Field(3).(*array.StringBuilder).Append(bloomKey(k))
			b.Field(4).(*array.Date32Builder).Append(arrow.Date32(18000 + k))
			b.Field(5).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(k)*100 + 25))
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	f, err := os.Create(filepath.Join(dir, "t.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	props := pq.NewWriterProperties(pq.WithStats(true), pq.WithMaxRowGroupLength(bloomRows),
		pq.WithBloomFilterEnabled(bloom), pq.WithBloomFilterFPP(0.001), pq.WithBloomFilterNDV(bloomRows), pq.WithStoreDecimalAsInteger(asInt))
	w, err := pqarrow.NewFileWriter(sch, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return resolve(t, dir)
}

func bloomKey(k int) string { return "key-" + string(rune('a'+k%26)) + "-" + itoa(k) }

func itoa(k int) string {
	if k == 0 {
		return "0"
	}
	var b []byte
	for ; k > 0; k /= 10 {
		b = append([]byte{byte('0' + k%10)}, b...)
	}
	return string(b)
}

// bloomValue is key k as a value of column name of bloomTable.
func bloomValue(name string, k int) types.Value {
	switch name {
	case "i32":
		return types.Value{Type: types.Int32, I: int64(k)}
	case "i64":
		return types.IntValue(int64(k) * 1_000_000_007)
	case "f64":
		return types.FloatValue(float64(k) + 0.5)
	case "s":
		return types.StringValue(bloomKey(k))
	case "d":
		return types.DateValue(int32(18000 + k))
	case "dec":
		return types.Value{Type: &arrow.Decimal128Type{Precision: 9, Scale: 2}, D: decimal128.FromI64(int64(k)*100 + 25)}
	}
	panic(name)
}

// planBloom plans a scan of two columns of l under filters, returning the row groups
// neither the statistics nor the bloom filters rule out, and the counters.
func planBloom(t *testing.T, l *Listing, filters ...Predicate) ([]int, Snapshot) {
	t.Helper()
	var c Counters
	p, err := l.Plan(context.Background(), storage.Local{}, ScanSpec{Columns: []string{"i32", "s"}, Filters: filters}, &c)
	if err != nil {
		t.Fatal(err)
	}
	var kept []int
	for _, m := range p.Morsels {
		// Asked twice, as the parts of a divided row group would: read once.
		if !p.BloomExcludes(context.Background(), m) && !p.BloomExcludes(context.Background(), m) {
			kept = append(kept, m.RowGroup)
		}
	}
	return kept, c.Snapshot()
}

func TestBloomPrunesRowGroups(t *testing.T) {
	for _, asInt := range []bool{false, true} {
		l := bloomTable(t, true, asInt)
		for _, name := range []string{"i32", "i64", "f64", "s", "d", "dec"} {
			// An even key lies in row group 0 only, an odd one in row group 1 only;
			// a NULL key (every tenth row) is in neither filter.
			for _, k := range []int{4, 7, 500, 995} {
				kept, s := planBloom(t, l, Predicate{Column: name, Op: "=", Values: []types.Value{bloomValue(name, k)}})
				want := k % 2
				if len(kept) != 1 || kept[0] != want {
					t.Errorf("asInt=%v %s = key %d: kept row groups %v, want [%d]", asInt, name, k, kept, want)
				}
				if s.RowGroupsPrunedByBloom != 1 || s.RowGroupsPruned != 1 || s.BloomFiltersRead != 2 || s.BloomFilterBytesRead <= 0 {
					t.Errorf("asInt=%v %s = key %d: counters %+v", asInt, name, k, s)
				}
			}
			// IN: a key of each row group keeps both; keys of NULL rows (and a NULL)
			// are in neither filter.
			kept, _ := planBloom(t, l, Predicate{Column: name, Op: "in", Values: []types.Value{bloomValue(name, 10), bloomValue(name, 21)}})
			if len(kept) != 2 {
				t.Errorf("asInt=%v %s IN (10, 21): kept %v, want both", asInt, name, kept)
			}
			kept, s := planBloom(t, l, Predicate{Column: name, Op: "in", Values: []types.Value{bloomValue(name, 19), bloomValue(name, 39), types.NullOf(bloomValue(name, 0).Type)}})
			if len(kept) != 0 || s.RowGroupsPrunedByBloom != 2 {
				t.Errorf("asInt=%v %s IN (NULL keys, NULL): kept %v, counters %+v", asInt, name, kept, s)
			}
		}
	}
}

func TestBloomNeverPrunesAPresentValue(t *testing.T) {
	l := bloomTable(t, true, false)
	for _, name := range []string{"i32", "i64", "f64", "s", "d", "dec"} {
		for k := 0; k < 2*bloomRows; k++ {
			if (k/2)%10 == 9 {
				continue // a NULL row
			}
			// A false positive may keep the other group too; the value's own is
			// never pruned.
			kept, _ := planBloom(t, l, Predicate{Column: name, Op: "=", Values: []types.Value{bloomValue(name, k)}})
			if !slices.Contains(kept, k%2) {
				t.Fatalf("%s = key %d: kept %v, want %d among them", name, k, kept, k%2)
			}
		}
	}
}

func TestBloomNotUsed(t *testing.T) {
	// Without filters nothing is read or pruned.
	l := bloomTable(t, false, false)
	kept, s := planBloom(t, l, Predicate{Column: "i32", Op: "=", Values: []types.Value{bloomValue("i32", 4)}})
	if len(kept) != 2 || s.BloomFiltersRead != 0 || s.BloomFilterBytesRead != 0 {
		t.Errorf("no filters: kept %v, counters %+v", kept, s)
	}
	l = bloomTable(t, true, false)
	for _, p := range []Predicate{
		// Only = and IN use the filters.
		{Column: "i32", Op: "<>", Values: []types.Value{bloomValue("i32", 4)}},
		{Column: "i32", Op: ">=", Values: []types.Value{bloomValue("i32", 4)}},
		// A value with no exact counterpart in the column's physical type.
		{Column: "f64", Op: "=", Values: []types.Value{types.FloatValue(nan)}},
	} {
		_, s := planBloom(t, l, p)
		if s.BloomFiltersRead != 0 || s.RowGroupsPrunedByBloom != 0 {
			t.Errorf("%v: counters %+v", p, s)
		}
	}
	// Row groups the statistics already pruned have their filters left unread.
	kept, s = planBloom(t, l, Predicate{Column: "i32", Op: "=", Values: []types.Value{bloomValue("i32", 5000)}})
	if len(kept) != 0 || s.BloomFiltersRead != 0 || s.RowGroupsPruned != 2 {
		t.Errorf("out of bounds: kept %v, counters %+v", kept, s)
	}
}

func TestBloomFloatZero(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "z.parquet")
	props := []pq.WriterProperty{pq.WithBloomFilterEnabled(true), pq.WithBloomFilterNDV(10)}
	writeBloomFloats(t, path, []float64{-1.5, negZero(), 3.25}, props)
	l := resolve(t, dir)
	kept, s := planBloom(t, l, Predicate{Column: "x", Op: "=", Values: []types.Value{types.FloatValue(0)}})
	if len(kept) != 1 || s.BloomFiltersRead != 1 {
		t.Errorf("x = 0 with a -0 row: kept %v, counters %+v", kept, s)
	}
	kept, s = planBloom(t, l, Predicate{Column: "x", Op: "=", Values: []types.Value{types.FloatValue(1)}})
	if len(kept) != 0 || s.RowGroupsPrunedByBloom != 1 {
		t.Errorf("x = 1: kept %v, counters %+v", kept, s)
	}
}

// TestBloomTooBigToRead: a writer's default sizes a filter for a million values; on
// a row group of three rows reading it would cost far more than reading the rows,
// and it is left unread.
func TestBloomTooBigToRead(t *testing.T) {
	dir := t.TempDir()
	writeBloomFloats(t, filepath.Join(dir, "big.parquet"), []float64{-1.5, 2, 3.25}, []pq.WriterProperty{pq.WithBloomFilterEnabled(true)})
	kept, s := planBloom(t, resolve(t, dir), Predicate{Column: "x", Op: "=", Values: []types.Value{types.FloatValue(1)}})
	if len(kept) != 1 || s.BloomFiltersRead != 0 || s.BloomFilterBytesRead != 0 {
		t.Errorf("a 1 MiB filter over 3 rows: kept %v, counters %+v", kept, s)
	}
}

func negZero() float64 { z := 0.0; return -z }

func writeBloomFloats(t *testing.T, path string, vals []float64, opts []pq.WriterProperty) {
	t.Helper()
	sch := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64}, {Name: "i32", Type: arrow.PrimitiveTypes.Int32}, {Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for i, v := range vals {
		b.Field(0).(*array.Float64Builder).Append(v)
		b.Field(1).(*array.Int32Builder).Append(int32(i))
		b.Field(2).(*array.StringBuilder).Append("v")
	}
	rec := b.NewRecord()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(sch, f, pq.NewWriterProperties(opts...), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// bloomCase is a probe of a file written by another engine: whether a bloom filter
// rules out the value.
type bloomCase struct {
	file, column string
	value        types.Value
	pruned       bool
}

// TestBloomOtherWriters checks the filters of files written by parquet-mr,
// parquet-rs and DuckDB, including malformed ones, which must prune nothing rather
// than fail.
func TestBloomOtherWriters(t *testing.T) {
	dir := filepath.Join(shareddata.Dir(t), "parquet-testing")
	str := types.StringValue
	cases := []bloomCase{
		{"apache/data_index_bloom_encoding_stats.parquet", "String", str("Hello"), false},
		{"apache/data_index_bloom_encoding_stats.parquet", "String", str("dog"), false},
		{"apache/data_index_bloom_encoding_stats.parquet", "String", str("the lazy"), false},
		{"apache/data_index_bloom_encoding_stats.parquet", "String", str("foo"), true},
		{"apache/data_index_bloom_encoding_stats.parquet", "String", str("Hellox"), true},
		{"apache/data_index_bloom_encoding_with_length.parquet", "String", str("dog"), false},
		{"apache/data_index_bloom_encoding_with_length.parquet", "String", str("foo"), true},
		{"apache/data_index_bloom_encoding_with_length.parquet", "String", str("Hellox"), true},
		{"duckdb/multi_bloom_a.parquet", "a", types.Value{Type: types.Int32, I: 1}, false},
		{"duckdb/bloom_filter_bad_length_range.parquet", "r", types.Value{Type: types.Int32, I: 990}, false},
		{"duckdb/bloom_filter_short_numbytes.parquet", "r", types.Value{Type: types.Int32, I: 990}, false},
	}
	uuid := func(s string) types.Value {
		u, ok := types.ParseUUID(s)
		if !ok {
			t.Fatalf("bad uuid %s", s)
		}
		return types.Value{S: string(u[:])}
	}
	cases = append(cases,
		bloomCase{"duckdb/uuid_v2.parquet", "uuid", uuid("0196e8fb-0adf-7355-ba39-d4c2e62dc4bd"), false},
		bloomCase{"duckdb/uuid_v2.parquet", "uuid", uuid("0196e8fb-0b3d-7ffc-a548-969e69314d7a"), false},
		bloomCase{"duckdb/uuid_v2.parquet", "uuid", uuid("0196e8fb-0b00-0000-0000-000000000001"), true},
	)
	for _, c := range cases {
		path := filepath.Join(dir, c.file)
		if _, err := os.Stat(path); err != nil {
			t.Logf("%s: %v", c.file, err)
			continue
		}
		l := resolve(t, path)
		v := c.value
		v.Type = l.Schema.Field(l.fieldIndex(c.column)).Type
		var cnt Counters
		p, err := l.Plan(context.Background(), storage.Local{}, ScanSpec{Columns: []string{c.column}, Filters: []Predicate{{Column: c.column, Op: "=", Values: []types.Value{v}}}}, &cnt)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		kept := 0
		for _, m := range p.Morsels {
			if !p.BloomExcludes(context.Background(), m) {
				kept++
			}
		}
		s := cnt.Snapshot()
		if got := s.RowGroupsPrunedByBloom > 0; got != c.pruned {
			t.Errorf("%s %s = %v: pruned %v, want %v (counters %+v)", c.file, c.column, c.value, got, c.pruned, s)
		}
		if !c.pruned && kept == 0 {
			t.Errorf("%s %s = %v: every row group pruned", c.file, c.column, c.value)
		}
	}
}

// TestBloomTimestampUnits: a timestamp column stored in milliseconds is read as
// microseconds; a value is checked against its filter in the file's unit, and a value
// with a fraction of a millisecond — which no row can equal, but which has no exact
// counterpart to hash — leaves the filter unused rather than guess.
func TestBloomTimestampUnits(t *testing.T) {
	dir := t.TempDir()
	ms := &arrow.TimestampType{Unit: arrow.Millisecond}
	sch := arrow.NewSchema([]arrow.Field{{Name: "ts", Type: ms, Nullable: true}, {Name: "i32", Type: arrow.PrimitiveTypes.Int32}, {Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for g := range 2 {
		for i := range 100 {
			b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000 + int64(2*i+g)))
			b.Field(1).(*array.Int32Builder).Append(int32(i))
			b.Field(2).(*array.StringBuilder).Append("x")
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	f, err := os.Create(filepath.Join(dir, "ts.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(sch, f, pq.NewWriterProperties(pq.WithMaxRowGroupLength(100), pq.WithBloomFilterEnabled(true), pq.WithBloomFilterNDV(100)), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	l := resolve(t, dir)
	typ := l.Schema.Field(0).Type
	if u := typ.(*arrow.TimestampType).Unit; u != arrow.Microsecond {
		t.Fatalf("ts is read in %s", u)
	}
	micros := func(us int64) Predicate {
		return Predicate{Column: "ts", Op: "=", Values: []types.Value{{Type: typ, I: us}}}
	}
	kept, s := planBloom(t, l, micros((1_700_000_000_000+7)*1000))
	if len(kept) != 1 || kept[0] != 1 || s.RowGroupsPrunedByBloom != 1 {
		t.Errorf("a whole millisecond of group 1: kept %v, counters %+v", kept, s)
	}
	kept, s = planBloom(t, l, micros((1_700_000_000_000+7)*1000+1))
	if len(kept) != 2 || s.BloomFiltersRead != 0 {
		t.Errorf("a fraction of a millisecond: kept %v, counters %+v", kept, s)
	}
}
