package parquet

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"strconv"
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
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// withPath runs fn with the fastest read path set to path.
func withPath(path int, fn func()) {
	old := readPath
	readPath = path
	defer func() { readPath = old }()
	fn()
}

var pathNames = map[int]string{pathPages: "page", pathTyped: "typed", pathLibrary: "library"}

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

// lateMatches reads every row group of f with only the first column early, then with
// none (batches by the footer's count), asks for the late columns of two batches in
// three (so that the others are passed over: whole pages, part pages, runs) and
// requires them to be the columns of the same batch in full, batches read the
// ordinary way. In every third batch the late columns come in two waves, one in place
// for every seventh row — those rows' values and validity must be the full read's —
// and one for every fifth row alone, which must be those rows.
func lateMatches(t *testing.T, f *File, name, path string, full [][]*vector.Batch) {
	t.Helper()
	n := f.Schema().NumFields()
	cols := make([]int, n)
	for i := range cols {
		cols[i] = i
	}
	for _, first := range []int{1, 0} {
		early := make([]bool, n)
		early[0] = first == 1
		for g := 0; g < f.NumRowGroups(); g++ {
			i := 0
			err := f.ReadRowGroupLate(context.Background(), g, nil, cols, early, func(b *vector.Batch, late Late) error {
				defer func() { i++ }()
				if i >= len(full[g]) {
					return fmt.Errorf("batch %d past the %d of the full read", i, len(full[g]))
				}
				want := full[g][i]
				if b.Rows != want.Rows || (first == 1 && !sameArray(b.Cols[0], want.Cols[0])) {
					return fmt.Errorf("batch %d: early column differs", i)
				}
				for c := first; c < n; c++ {
					if b.Cols[c] != nil {
						return fmt.Errorf("batch %d: late column %d decoded before it was asked for", i, c)
					}
				}
				switch i % 3 {
				case 0:
					return nil
				case 2:
					// Every other late column for every seventh row, in place; the
					// others for every fifth row alone.
					var sparse, dense []int32
					for r := 3; r < b.Rows; r += 7 {
						sparse = append(sparse, int32(r))
					}
					for r := 1; r < b.Rows; r += 5 {
						dense = append(dense, int32(r))
					}
					var inPlace, alone []int
					for c := first; c < n; c++ {
						if (c-first)%2 == 0 {
							inPlace = append(inPlace, c)
						} else {
							alone = append(alone, c)
						}
					}
					if err := late(inPlace, sparse, false); err != nil {
						return err
					}
					if err := late(alone, dense, true); err != nil {
						return err
					}
					for _, c := range inPlace {
						if !sameAt(b.Cols[c], want.Cols[c], sparse) {
							return fmt.Errorf("batch %d: late column %q differs at the rows asked for", i, f.Schema().Field(c).Name)
						}
					}
					for _, c := range alone {
						if !sameArray(b.Cols[c], vector.Take(want.Cols[c], dense)) {
							return fmt.Errorf("batch %d: late column %q differs from the rows asked for", i, f.Schema().Field(c).Name)
						}
					}
					return late(nil, nil, false) // nothing is left to decode
				}
				if err := late(nil, nil, false); err != nil {
					return err
				}
				for c := first; c < n; c++ {
					if !sameArray(b.Cols[c], want.Cols[c]) {
						return fmt.Errorf("batch %d: late column %q differs", i, f.Schema().Field(c).Name)
					}
				}
				return nil
			})
			if err != nil {
				t.Errorf("%s: %s path, %d early, row group %d read late: %v", name, path, first, g, err)
				return
			}
		}
	}
}

// sameAt reports whether got has want's type and length, and want's validity and
// values at the rows sel.
func sameAt(got, want arrow.Array, sel []int32) bool {
	if got == nil || !arrow.TypeEqual(got.DataType(), want.DataType()) || got.Len() != want.Len() {
		return false
	}
	for _, r := range sel {
		if !array.SliceEqual(got, int64(r), int64(r)+1, want, int64(r), int64(r)+1) {
			return false
		}
	}
	return true
}

// rangesMatch reads parts of every row group of f — from a batch boundary, from the
// middle of a batch, a few rows, the last rows — and requires the values of the same
// rows of the full read.
func rangesMatch(t *testing.T, f *File, name, path string, full [][]*vector.Batch) {
	t.Helper()
	n := f.Schema().NumFields()
	cols := make([]int, n)
	for i := range cols {
		cols[i] = i
	}
	for g := 0; g < f.NumRowGroups(); g++ {
		total := f.RowGroup(g).Rows
		whole := make([]arrow.Array, n)
		for c := range whole {
			var parts []arrow.Array
			for _, b := range full[g] {
				parts = append(parts, b.Cols[c])
			}
			if len(parts) == 0 {
				return
			}
			a, err := array.Concatenate(parts, memory.DefaultAllocator)
			if err != nil {
				t.Fatal(err)
			}
			whole[c] = a
		}
		cases := [][]RowRange{
			{{vector.BatchSize, total - vector.BatchSize}}, {{1000, 5000}}, {{total / 2, 3}}, {{total - 7, 7}},
			{{0, total / 3}}, {{100, 200}, {9000, 50}, {total - 10, 10}}, {{0, 1}, {1, 1}, {5, 0}, {20_000, 9_000}},
		}
	next:
		for _, ranges := range cases {
			at := int64(0)
			for _, r := range ranges {
				if r.First < at || r.Rows < 0 || r.First+r.Rows > total {
					continue next
				}
				at = r.First + r.Rows
			}
			got := make([][]arrow.Array, n)
			read := int64(0)
			err := f.ReadRowGroupLate(context.Background(), g, ranges, cols, nil, func(b *vector.Batch, _ Late) error {
				for c := range got {
					got[c] = append(got[c], b.Cols[c])
				}
				read += int64(b.Rows)
				return nil
			})
			if err != nil {
				t.Errorf("%s: %s path, row group %d rows %v: %v", name, path, g, ranges, err)
				return
			}
			for c := range got {
				var want []arrow.Array
				for _, r := range ranges {
					if r.Rows > 0 {
						want = append(want, array.NewSlice(whole[c], r.First, r.First+r.Rows))
					}
				}
				if len(want) == 0 {
					if read != 0 {
						t.Errorf("%s: %s path, row group %d rows %v: read %d rows", name, path, g, ranges, read)
					}
					continue
				}
				w, err1 := array.Concatenate(want, memory.DefaultAllocator)
				a, err2 := array.Concatenate(got[c], memory.DefaultAllocator)
				if err1 != nil || err2 != nil || !sameArray(a, w) {
					t.Errorf("%s: %s path, row group %d rows %v: column %q differs", name, path, g, ranges, f.Schema().Field(c).Name)
					return
				}
			}
		}
	}
}

// sameArray compares two arrays value by value, NaNs equal to NaNs.
func sameArray(a, b arrow.Array) bool {
	if !arrow.TypeEqual(a.DataType(), b.DataType()) || a.Len() != b.Len() || a.NullN() != b.NullN() {
		return false
	}
	switch x := a.(type) {
	case *array.Dictionary:
		// Dictionaries may differ in content and order; the values they spell may not.
		y := b.(*array.Dictionary)
		for i := 0; i < x.Len(); i++ {
			if x.IsNull(i) != y.IsNull(i) {
				return false
			}
			if x.IsValid(i) && !array.SliceEqual(x.Dictionary(), int64(x.GetValueIndex(i)), int64(x.GetValueIndex(i))+1,
				y.Dictionary(), int64(y.GetValueIndex(i)), int64(y.GetValueIndex(i))+1) {
				return false
			}
		}
		return true
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

// compareReads reads f through the page path, the typed path and the library's
// reader and reports any difference from the library's batches; it returns how many
// columns took the page path and the typed path.
func compareReads(t *testing.T, f *File, name string) (pages, typed int) {
	t.Helper()
	var lib [][]*vector.Batch
	var lerr error
	withPath(pathLibrary, func() { lib, lerr = readGroups(f) })
	for _, path := range []int{pathPages, pathTyped} {
		var got [][]*vector.Batch
		var err error
		withPath(path, func() { got, err = readGroups(f) })
		if (err == nil) != (lerr == nil) {
			t.Errorf("%s: %s path error %v, library path error %v", name, pathNames[path], err, lerr)
			continue
		}
		if err != nil {
			if errs.CodeOf(err) != errs.CorruptSource || !strings.Contains(err.Error(), name) {
				t.Errorf("%s: %s path error is not CORRUPT_SOURCE naming the file: %v", name, pathNames[path], err)
			}
			continue
		}
		sameBatches(t, f, name, pathNames[path], got, lib)
	}
	if lerr != nil {
		return 0, 0
	}
	for _, path := range []int{pathPages, pathTyped, pathLibrary} {
		withPath(path, func() {
			lateMatches(t, f, name, pathNames[path], lib)
			rangesMatch(t, f, name, pathNames[path], lib)
		})
	}
	for c := range f.Schema().Fields() {
		if _, ok := f.typedKind(c); ok {
			typed++
		}
		for g := 0; g < f.NumRowGroups(); g++ {
			if f.pageKind(g, c) != pageNone {
				pages++
				break
			}
		}
	}
	return pages, typed
}

func sameBatches(t *testing.T, f *File, name, path string, got, lib [][]*vector.Batch) {
	t.Helper()
	for g := range got {
		if len(got[g]) != len(lib[g]) {
			t.Errorf("%s rg %d: %d batches on the %s path, %d from the library", name, g, len(got[g]), path, len(lib[g]))
			continue
		}
		for i, tb := range got[g] {
			lb := lib[g][i]
			if tb.Rows != lb.Rows {
				t.Errorf("%s rg %d batch %d: %d rows on the %s path, %d from the library", name, g, i, tb.Rows, path, lb.Rows)
				continue
			}
			for c := range tb.Cols {
				if !sameArray(tb.Cols[c], lb.Cols[c]) {
					t.Errorf("%s rg %d batch %d column %q: %s path's %s differs from the library's %s",
						name, g, i, f.Schema().Field(c).Name, path, tb.Cols[c], lb.Cols[c])
				}
			}
		}
	}
}

// TestTypedPathMatchesLibrary reads every file of parquet-testing through the typed
// path and through the library's Arrow reader and requires the same batches, or an
// error from both.
func TestTypedPathMatchesLibrary(t *testing.T) {
	root := filepath.Join(dataDir(t), "parquet-testing")
	var files, pageCols, typedCols int
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
		p, ty := compareReads(t, f, name)
		pageCols += p
		typedCols += ty
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files compared, %d columns on the page path, %d able to take the typed path", files, pageCols, typedCols)
	if typedCols < 100 || pageCols < 100 {
		t.Errorf("only %d columns took the page path and %d the typed path", pageCols, typedCols)
	}
}

// TestTypedPathNullsAndPages writes nullable columns of every type the typed path
// handles, over several small pages so that batches straddle pages, and checks the
// values read against the values written.
func TestTypedPathNullsAndPages(t *testing.T) {
	for _, dict := range []bool{false, true} {
		for _, v := range []pq.DataPageVersion{pq.DataPageV1, pq.DataPageV2} {
			name := fmt.Sprintf("plain/v%d", v+1)
			if dict {
				name = fmt.Sprintf("dictionary/v%d", v+1)
			}
			t.Run(name, func(t *testing.T) { testNullsAndPages(t, dict, v) })
		}
	}
}

func testNullsAndPages(t *testing.T, dict bool, version pq.DataPageVersion) {
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
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "big", Type: arrow.BinaryTypes.String, Nullable: true},
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
		if null(i) {
			b.Field(11).AppendNull()
		} else {
			b.Field(11).(*array.StringBuilder).Append(strconv.Itoa(i % 37))
		}
		if null(i) {
			b.Field(12).AppendNull()
		} else {
			b.Field(12).(*array.StringBuilder).Append(bigString(i))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	props := pq.NewWriterProperties(pq.WithDataPageSize(1500), pq.WithDictionaryDefault(dict),
		pq.WithStoreDecimalAsInteger(true), pq.WithMaxRowGroupLength(rows), pq.WithDataPageVersion(version),
		// Pages of a few hundred rows, which batches do not line up with.
		pq.WithBatchSize(300),
		// A small dictionary limit makes the big strings' dictionary overflow to PLAIN.
		pq.WithDictionaryPageSizeLimit(4096))
	if err := pqarrow.WriteTable(array.NewTableFromRecords(sch, []arrow.RecordBatch{rec}), &buf, rows, props,
		pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	f, err := Open(context.Background(), newMem(buf.Bytes()), "nulls.parquet")
	if err != nil {
		t.Fatal(err)
	}
	for c := range f.Schema().Fields()[:11] {
		if _, ok := f.typedKind(c); !ok {
			t.Errorf("column %q (%s) does not take the typed path", f.Schema().Field(c).Name, f.cols[c].read)
		}
	}
	// Every column but the boolean and the narrow integers takes the page path.
	if pages, _ := compareReads(t, f, "nulls.parquet"); pages != 10 {
		t.Errorf("%d columns on the page path, want 10", pages)
	}
	if dict {
		if f.pageKind(0, 11) != pageDict || f.pageKind(0, 12) != pageStrings {
			t.Errorf("string chunks read as %d and %d, want a dictionary and plain strings", f.pageKind(0, 11), f.pageKind(0, 12))
		}
		if !f.chunk(0, 12).hasDict {
			t.Errorf("the big strings have no dictionary page")
		}
	}
	for _, path := range []int{pathPages, pathTyped} {
		var batches [][]*vector.Batch
		withPath(path, func() { batches, err = readGroups(f) })
		if err != nil {
			t.Fatal(err)
		}
		checkWritten(t, batches[0], rows, null)
	}
}

func bigString(i int) string { return strconv.Itoa(i) + strings.Repeat("x", i%50) }

func checkWritten(t *testing.T, batches []*vector.Batch, rows int, null func(int) bool) {
	row := 0
	for _, bt := range batches {
		if bt.Cols[0].NullN() == 0 {
			t.Errorf("batch at row %d has no nulls", row)
		}
		if bt.Cols[10].NullN() != 0 || bt.Cols[10].Data().Buffers()[0] != nil {
			t.Errorf("required column has a validity bitmap")
		}
		for r := 0; r < bt.Rows; r++ {
			i := row + r
			for _, c := range []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12} {
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
				bt.Cols[7].DataType().ID() == arrow.DECIMAL64 &&
				types.ValueAt(bt.Cols[7], r).D == decimal128.FromI64(int64(i)*1234-99_999) &&
				bt.Cols[8].(*array.Int16).Value(r) == int16(i) &&
				bt.Cols[9].(*array.Uint8).Value(r) == uint8(i) &&
				bt.Cols[10].(*array.Int64).Value(r) == int64(i) &&
				types.ValueAt(bt.Cols[11], r).S == strconv.Itoa(i%37) &&
				bt.Cols[12].(*array.String).Value(r) == bigString(i)
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

// TestSelectiveLateColumns reads late columns for some rows alone (lateMatches) from
// columns where that stores only those rows' values: dictionary-encoded and PLAIN
// values with no NULL, and a column whose NULLs start part-way, after which every
// value is decoded again.
func TestSelectiveLateColumns(t *testing.T) {
	const rows = 3*vector.BatchSize + 77
	dec := &arrow.Decimal128Type{Precision: 15, Scale: 2}
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "few", Type: arrow.PrimitiveTypes.Int64},
		{Name: "fewdec", Type: dec},
		{Name: "many", Type: dec},
		{Name: "later", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for i := 0; i < rows; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.Int64Builder).Append(int64(i%13) * 1_000_000_007)
		b.Field(2).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i%7) - 3))
		b.Field(3).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i)*7919 - 5_000_000))
		if i > 2*vector.BatchSize+100 && i%4 == 0 {
			b.Field(4).AppendNull()
		} else {
			b.Field(4).(*array.Int32Builder).Append(int32(i % 1000))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	for _, dict := range []bool{true, false} {
		var buf bytes.Buffer
		props := pq.NewWriterProperties(pq.WithDictionaryDefault(dict), pq.WithStoreDecimalAsInteger(true),
			pq.WithMaxRowGroupLength(rows), pq.WithDataPageSize(4000), pq.WithBatchSize(500))
		if err := pqarrow.WriteTable(array.NewTableFromRecords(sch, []arrow.RecordBatch{rec}), &buf, rows, props,
			pqarrow.DefaultWriterProps()); err != nil {
			t.Fatal(err)
		}
		f, err := Open(context.Background(), newMem(buf.Bytes()), "selective.parquet")
		if err != nil {
			t.Fatal(err)
		}
		var full [][]*vector.Batch
		withPath(pathPages, func() { full, err = readGroups(f) })
		if err != nil {
			t.Fatal(err)
		}
		withPath(pathPages, func() { lateMatches(t, f, "selective.parquet", fmt.Sprintf("dictionary %v", dict), full) })
	}
}

// TestDictionaryWithoutEncodingStats: DuckDB writes no page encoding statistics; a
// string chunk whose list of encodings holds only dictionary encodings is read as a
// dictionary, and one that lists PLAIN is not.
func TestDictionaryWithoutEncodingStats(t *testing.T) {
	path := filepath.Join(dataDir(t), "parquet-testing", "duckdb", "bloom_filter_bad_length_range.parquet")
	r, err := storage.Local{}.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := Open(context.Background(), r, "bloom_filter_bad_length_range.parquet")
	if err != nil {
		t.Fatal(err)
	}
	c := f.Schema().FieldIndices("r_string")
	if len(c) != 1 {
		t.Fatalf("no column r_string in %s", f.Schema())
	}
	md, err := f.metadata()
	if err != nil {
		t.Fatal(err)
	}
	cc, err := md.RowGroup(0).ColumnChunk(f.cols[c[0]].leaves[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(cc.EncodingStats()) != 0 || !cc.HasDictionaryPage() {
		t.Fatalf("the fixture changed: encoding statistics %v, dictionary page %v", cc.EncodingStats(), cc.HasDictionaryPage())
	}
	if k := f.pageKind(0, c[0]); k != pageDict {
		t.Errorf("r_string reads as page kind %d, want a dictionary (%d)", k, pageDict)
	}
	compareReads(t, f, "bloom_filter_bad_length_range.parquet")
}
