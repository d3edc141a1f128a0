package parquet

import (
	"bytes"
	"context"
	"io/fs"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/vector"
)

// withTyped runs fn with the typed path on or off.
func withTyped(on bool, fn func()) {
	old := typedDecode
	typedDecode = on
	defer func() { typedDecode = old }()
	fn()
}

// readGroups reads every row group of f, all columns, batch by batch.
func readGroups(f *File) ([][]*vector.Batch, error) {
	cols := make([]int, f.Schema().NumFields())
	for i := range cols {
		cols[i] = i
	}
	out := make([][]*vector.Batch, f.NumRowGroups())
	for g := range out {
		err := f.ReadRowGroup(context.Background(), g, cols, func(b *vector.Batch) error {
			out[g] = append(out[g], b)
			return nil
		})
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// sameArray compares two arrays value by value, NaNs equal to NaNs.
func sameArray(a, b arrow.Array) bool {
	if !arrow.TypeEqual(a.DataType(), b.DataType()) || a.Len() != b.Len() || a.NullN() != b.NullN() {
		return false
	}
	switch x := a.(type) {
	case *array.Float32:
		y := b.(*array.Float32)
		for i := 0; i < x.Len(); i++ {
			if x.IsNull(i) != y.IsNull(i) || (x.IsValid(i) && math.Float32bits(x.Value(i)) != math.Float32bits(y.Value(i))) {
				return false
			}
		}
		return true
	case *array.Float64:
		y := b.(*array.Float64)
		for i := 0; i < x.Len(); i++ {
			if x.IsNull(i) != y.IsNull(i) || (x.IsValid(i) && math.Float64bits(x.Value(i)) != math.Float64bits(y.Value(i))) {
				return false
			}
		}
		return true
	}
	return array.Equal(a, b)
}

// compareReads reads f both ways and reports any difference; it returns how many
// columns took the typed path.
func compareReads(t *testing.T, f *File, name string) int {
	t.Helper()
	var typed, lib [][]*vector.Batch
	var terr, lerr error
	withTyped(true, func() { typed, terr = readGroups(f) })
	withTyped(false, func() { lib, lerr = readGroups(f) })
	if (terr == nil) != (lerr == nil) {
		t.Errorf("%s: typed path error %v, library path error %v", name, terr, lerr)
		return 0
	}
	if terr != nil {
		if errs.CodeOf(terr) != errs.CorruptSource || !strings.Contains(terr.Error(), name) {
			t.Errorf("%s: typed path error is not CORRUPT_SOURCE naming the file: %v", name, terr)
		}
		return 0
	}
	n := 0
	for c := range f.Schema().Fields() {
		if _, ok := f.typedKind(c); ok {
			n++
		}
	}
	for g := range typed {
		if len(typed[g]) != len(lib[g]) {
			t.Errorf("%s rg %d: %d batches typed, %d from the library", name, g, len(typed[g]), len(lib[g]))
			continue
		}
		for i, tb := range typed[g] {
			lb := lib[g][i]
			if tb.Rows != lb.Rows {
				t.Errorf("%s rg %d batch %d: %d rows typed, %d from the library", name, g, i, tb.Rows, lb.Rows)
				continue
			}
			for c := range tb.Cols {
				if !sameArray(tb.Cols[c], lb.Cols[c]) {
					t.Errorf("%s rg %d batch %d column %q: typed %s differs from the library's %s",
						name, g, i, f.Schema().Field(c).Name, tb.Cols[c], lb.Cols[c])
				}
			}
		}
	}
	return n
}

// TestTypedPathMatchesLibrary reads every file of parquet-testing through the typed
// path and through the library's Arrow reader and requires the same batches, or an
// error from both.
func TestTypedPathMatchesLibrary(t *testing.T) {
	root := filepath.Join(dataDir(t), "parquet-testing")
	var files, typedCols int
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".parquet") {
			return err
		}
		name := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if _, skip := footerOnly[name]; skip {
			return nil
		}
		r, err := storage.Local{}.Open(context.Background(), path)
		if err != nil {
			return err
		}
		defer r.Close()
		f, err := Open(context.Background(), r, name)
		if err != nil {
			return nil // refused at the footer: no data path involved
		}
		files++
		typedCols += compareReads(t, f, name)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files compared, %d columns on the typed path", files, typedCols)
	if typedCols < 100 {
		t.Errorf("only %d columns took the typed path", typedCols)
	}
}

// TestTypedPathNullsAndPages writes nullable columns of every type the typed path
// handles, over several small pages so that batches straddle pages, and checks the
// values read against the values written.
func TestTypedPathNullsAndPages(t *testing.T) {
	for _, dict := range []bool{false, true} {
		name := "plain"
		if dict {
			name = "dictionary"
		}
		t.Run(name, func(t *testing.T) { testNullsAndPages(t, dict) })
	}
}

func testNullsAndPages(t *testing.T, dict bool) {
	const rows = 3*vector.BatchSize + 123
	mem := memory.DefaultAllocator
	tsMs := &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}
	dec := &arrow.Decimal128Type{Precision: 12, Scale: 3}
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "ts", Type: tsMs, Nullable: true},
		{Name: "dec", Type: dec, Nullable: true},
		{Name: "i16", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
		{Name: "u8", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
		{Name: "req", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	b := array.NewRecordBuilder(mem, sch)
	defer b.Release()
	null := func(i int) bool { return i%5 == 1 || (i/1000)%3 == 2 }
	for i := 0; i < rows; i++ {
		if null(i) {
			for c := 0; c < 10; c++ {
				b.Field(c).AppendNull()
			}
		} else {
			b.Field(0).(*array.Int32Builder).Append(int32(i) - 7)
			b.Field(1).(*array.Int64Builder).Append(int64(i) * -1_000_003)
			b.Field(2).(*array.Float32Builder).Append(float32(i) / 3)
			b.Field(3).(*array.Float64Builder).Append(float64(i) / 7)
			b.Field(4).(*array.BooleanBuilder).Append(i%3 == 0)
			b.Field(5).(*array.Date32Builder).Append(arrow.Date32(i - 500))
			b.Field(6).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i)*86_400_017 - 5))
			b.Field(7).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i)*1234 - 99_999))
			b.Field(8).(*array.Int16Builder).Append(int16(i))
			b.Field(9).(*array.Uint8Builder).Append(uint8(i))
		}
		b.Field(10).(*array.Int64Builder).Append(int64(i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	props := pq.NewWriterProperties(pq.WithDataPageSize(1500), pq.WithDictionaryDefault(dict),
		pq.WithStoreDecimalAsInteger(true), pq.WithMaxRowGroupLength(rows))
	if err := pqarrow.WriteTable(array.NewTableFromRecords(sch, []arrow.RecordBatch{rec}), &buf, rows, props,
		pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	f, err := Open(context.Background(), newMem(buf.Bytes()), "nulls.parquet")
	if err != nil {
		t.Fatal(err)
	}
	for c := range f.Schema().Fields() {
		if _, ok := f.typedKind(c); !ok {
			t.Errorf("column %q (%s) does not take the typed path", f.Schema().Field(c).Name, f.cols[c].read)
		}
	}
	if got := compareReads(t, f, "nulls.parquet"); got != len(f.Schema().Fields()) {
		t.Errorf("%d columns typed, want %d", got, len(f.Schema().Fields()))
	}
	var batches [][]*vector.Batch
	withTyped(true, func() { batches, err = readGroups(f) })
	if err != nil {
		t.Fatal(err)
	}
	row := 0
	for _, bt := range batches[0] {
		if bt.Cols[0].NullN() == 0 {
			t.Errorf("batch at row %d has no nulls", row)
		}
		if bt.Cols[10].NullN() != 0 || bt.Cols[10].Data().Buffers()[0] != nil {
			t.Errorf("required column has a validity bitmap")
		}
		for r := 0; r < bt.Rows; r++ {
			i := row + r
			for c := 0; c < 10; c++ {
				if bt.Cols[c].IsNull(r) != null(i) {
					t.Fatalf("row %d column %d: null %v, want %v", i, c, bt.Cols[c].IsNull(r), null(i))
				}
			}
			if null(i) {
				continue
			}
			ok := bt.Cols[0].(*array.Int32).Value(r) == int32(i)-7 &&
				bt.Cols[1].(*array.Int64).Value(r) == int64(i)*-1_000_003 &&
				bt.Cols[2].(*array.Float32).Value(r) == float32(i)/3 &&
				bt.Cols[3].(*array.Float64).Value(r) == float64(i)/7 &&
				bt.Cols[4].(*array.Boolean).Value(r) == (i%3 == 0) &&
				bt.Cols[5].(*array.Date32).Value(r) == arrow.Date32(i-500) &&
				bt.Cols[6].(*array.Timestamp).Value(r) == arrow.Timestamp((int64(i)*86_400_017-5)*1000) &&
				bt.Cols[7].(*array.Decimal128).Value(r) == decimal128.FromI64(int64(i)*1234-99_999) &&
				bt.Cols[8].(*array.Int16).Value(r) == int16(i) &&
				bt.Cols[9].(*array.Uint8).Value(r) == uint8(i) &&
				bt.Cols[10].(*array.Int64).Value(r) == int64(i)
			if !ok {
				t.Fatalf("row %d read wrong", i)
			}
		}
		row += bt.Rows
	}
	if row != rows {
		t.Errorf("read %d rows, wrote %d", row, rows)
	}
}
