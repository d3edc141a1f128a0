package parquet

import (
	"bytes"
	"context"
	"encoding/binary"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// TestNormalisedTypes writes Arrow types Lore does not use (the Arrow schema is stored
// in the file, so the library reads them back as written) and checks that they come
// out normalised, values and bounds alike.
func TestNormalisedTypes(t *testing.T) {
	mem := memory.DefaultAllocator
	tsMs := &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}
	tsS := &arrow.TimestampType{Unit: arrow.Second}
	tsNs := &arrow.TimestampType{Unit: arrow.Nanosecond}
	dec := &arrow.Decimal256Type{Precision: 20, Scale: 2}
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	fields := []arrow.Field{
		{Name: "ms", Type: tsMs, Nullable: true},
		{Name: "s", Type: tsS, Nullable: true},
		{Name: "ns", Type: tsNs, Nullable: true},
		{Name: "d64", Type: arrow.FixedWidthTypes.Date64, Nullable: true},
		{Name: "f16", Type: arrow.FixedWidthTypes.Float16, Nullable: true},
		{Name: "ls", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "fsb", Type: &arrow.FixedSizeBinaryType{ByteWidth: 3}, Nullable: true},
		{Name: "dec", Type: dec, Nullable: true},
		{Name: "dict", Type: dict, Nullable: true},
	}
	sch := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(mem, sch)
	b.Field(0).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{-1500, 2000}, nil)
	b.Field(1).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{7, 8}, []bool{true, false})
	b.Field(2).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1, 2}, nil)
	b.Field(3).(*array.Date64Builder).AppendValues([]arrow.Date64{86400000 * 3, -86400000}, nil)
	b.Field(4).(*array.Float16Builder).AppendValues([]float16.Num{float16.New(1.5), float16.New(-2)}, nil)
	b.Field(5).(*array.LargeStringBuilder).AppendValues([]string{"x", "yy"}, nil)
	b.Field(6).(*array.FixedSizeBinaryBuilder).AppendValues([][]byte{[]byte("abc"), []byte("xyz")}, nil)
	b.Field(7).(*array.Decimal256Builder).AppendValues([]decimal256.Num{decimal256.FromI64(-12345), decimal256.FromI64(99)}, nil)
	db := b.Field(8).(*array.BinaryDictionaryBuilder)
	db.AppendString("red")
	db.AppendNull()
	rec := b.NewRecord()
	var buf bytes.Buffer
	if err := pqarrow.WriteTable(array.NewTableFromRecords(sch, []arrow.Record{rec}), &buf, 10,
		pq.NewWriterProperties(pq.WithStats(true)), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())); err != nil {
		t.Fatal(err)
	}
	f, err := Open(context.Background(), newMem(buf.Bytes()), "types.parquet")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"TIMESTAMP WITH TIME ZONE", "TIMESTAMP", "TIMESTAMP_NS", "DATE", "FLOAT", "VARCHAR", "BLOB", "DECIMAL(20,2)", "VARCHAR"}
	wantVals := [][]string{
		{"1969-12-31 23:59:58.5+00", "1970-01-01 00:00:02+00"},
		{"1970-01-01 00:00:07", "NULL"},
		{"1970-01-01 00:00:00.000000001", "1970-01-01 00:00:00.000000002"},
		{"1970-01-04", "1969-12-31"},
		{"1.5", "-2.0"},
		{"x", "yy"},
		{"abc", "xyz"},
		{"-123.45", "0.99"},
		{"red", "NULL"},
	}
	for i, fl := range f.Schema().Fields() {
		if types.Name(fl.Type) != want[i] {
			t.Errorf("%s: type %s, want %s", fl.Name, types.Name(fl.Type), want[i])
		}
	}
	if u := f.Schema().Field(0).Type.(*arrow.TimestampType); u.Unit != arrow.Microsecond || u.TimeZone != "UTC" {
		t.Errorf("ms timestamp read as %s", u)
	}
	cols := []int{0, 1, 2, 3, 4, 5, 6, 7, 8}
	err = f.ReadRowGroup(context.Background(), 0, cols, func(bt *vector.Batch) error {
		for i, a := range bt.Cols {
			if !arrow.TypeEqual(types.Unwrap(a.DataType()), f.Schema().Field(i).Type) {
				t.Errorf("%s: array type %s, schema %s", fields[i].Name, a.DataType(), f.Schema().Field(i).Type)
				continue
			}
			// A dictionary-encoded string column is kept as a dictionary.
			if fields[i].Name == "dict" {
				if _, ok := a.(*array.Dictionary); !ok {
					t.Errorf("dict: read as %T, want a dictionary", a)
				}
			}
			for r := 0; r < bt.Rows; r++ {
				if got := types.ValueAt(a, r).String(); got != wantVals[i][r] {
					t.Errorf("%s row %d: %s, want %s", fields[i].Name, r, got, wantVals[i][r])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st := f.RowGroup(0).Columns
	if !st[0].HasMinMax || st[0].Min.I != -1500000 || st[0].Max.I != 2000000 {
		t.Errorf("ms bounds not rescaled to µs: %+v", st[0])
	}
	if !st[7].HasMinMax || st[7].Min.String() != "-123.45" || st[7].Max.String() != "0.99" {
		t.Errorf("decimal bounds: %+v", st[7])
	}
}

func TestTruncatedBoundsAreNotExact(t *testing.T) {
	root := dataDir(t)
	ctx := context.Background()
	r, err := storage.Local{}.Open(ctx, filepath.Join(root, "parquet-testing", "apache", "binary_truncated_min_max.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := Open(ctx, r, "binary_truncated_min_max.parquet")
	if err != nil {
		t.Fatal(err)
	}
	exact := map[string][2]bool{
		"utf8_full_truncation":    {false, false},
		"utf8_partial_truncation": {false, true},
		"utf8_no_truncation":      {true, true},
	}
	for i, fl := range f.Schema().Fields() {
		w, ok := exact[fl.Name]
		if !ok {
			continue
		}
		cs := f.RowGroup(0).Columns[i]
		if !cs.HasMinMax || cs.MinExact != w[0] || cs.MaxExact != w[1] {
			t.Errorf("%s: exact %v/%v, want %v", fl.Name, cs.MinExact, cs.MaxExact, w)
		}
	}
}

func TestInt96Micros(t *testing.T) {
	mk := func(nanos int64, julian int32) pq.Int96 {
		var v pq.Int96
		binary.LittleEndian.PutUint64(v[:8], uint64(nanos))
		binary.LittleEndian.PutUint32(v[8:], uint32(julian))
		return v
	}
	cases := []struct {
		v    pq.Int96
		want int64
		ok   bool
	}{
		{mk(0, julianEpoch), 0, true},
		{mk(1_500, julianEpoch+1), 86400_000_000 + 1, true},
		{mk(3600e9, julianEpoch-1), -86400_000_000 + 3600e6, true},
		{mk(-1_500, julianEpoch), -2, true},
		{mk(0, -105862232), 0, false}, // Spark's overflowed year 290000
	}
	for _, c := range cases {
		got, ok := int96Micros(c.v)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("int96Micros(%v) = %d, %v; want %d, %v", c.v, got, ok, c.want, c.ok)
		}
	}
}

// TestConcurrentReadsAndCancel reads every row group of a file from many goroutines
// through their own readers (run with -race), then checks a canceled context stops a read.
func TestConcurrentReadsAndCancel(t *testing.T) {
	root := dataDir(t)
	path := filepath.Join(root, "parquet-testing", "duckdb", "manyrowgroups.parquet")
	ctx := context.Background()
	r, err := storage.Local{}.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	footer, err := Open(ctx, r, "manyrowgroups.parquet")
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var sum int64
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rd, err := storage.Local{}.Open(ctx, path)
			if err != nil {
				t.Error(err)
				return
			}
			defer rd.Close()
			f, err := footer.WithReader(rd)
			if err != nil {
				t.Error(err)
				return
			}
			for g := w; g < f.NumRowGroups(); g += 4 {
				err := f.ReadRowGroup(ctx, g, []int{0}, func(b *vector.Batch) error {
					a := b.Cols[0].(*array.Int32)
					var s int64
					for i := 0; i < b.Rows; i++ {
						s += int64(a.Value(i))
					}
					mu.Lock()
					sum += s
					mu.Unlock()
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	// The same sum read serially through one reader.
	var want int64
	seqR, _ := storage.Local{}.Open(ctx, path)
	seqF, _ := footer.WithReader(seqR)
	for g := 0; g < seqF.NumRowGroups(); g++ {
		if err := seqF.ReadRowGroup(ctx, g, []int{0}, func(b *vector.Batch) error {
			a := b.Cols[0].(*array.Int32)
			for i := 0; i < b.Rows; i++ {
				want += int64(a.Value(i))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	seqR.Close()
	if sum != want || footer.NumRowGroups() != 1001 {
		t.Errorf("sum %d, serial sum %d, %d row groups", sum, want, footer.NumRowGroups())
	}

	rd, _ := storage.Local{}.Open(ctx, path)
	defer rd.Close()
	f, _ := footer.WithReader(rd)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := f.ReadRowGroup(cctx, 0, []int{0}, func(*vector.Batch) error { return nil }); errs.CodeOf(err) != errs.Canceled {
		t.Errorf("canceled read: %v", err)
	}
	if _, err := footer.WithReader(newMem([]byte("short"))); errs.CodeOf(err) != errs.SourceChanged || !strings.Contains(err.Error(), "manyrowgroups") {
		t.Errorf("rebinding to different bytes: %v", err)
	}
}
