package parquet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/vector"
)

// benchRead reads the columns named of every row group of the file at path, b.N
// times, through the typed path or the library's Arrow reader, and reports rows/s.
func benchRead(b *testing.B, path string, names []string, readWith int) {
	ctx := context.Background()
	r, err := storage.Local{}.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	f, err := Open(ctx, r, filepath.Base(path))
	if err != nil {
		b.Fatal(err)
	}
	var cols []int
	for _, n := range names {
		idx := f.Schema().FieldIndices(n)
		if len(idx) != 1 {
			b.Fatalf("no column %q", n)
		}
		cols = append(cols, idx[0])
	}
	old := readPath
	readPath = readWith
	defer func() { readPath = old }()
	b.ReportAllocs()
	b.ResetTimer()
	var rows int64
	for i := 0; i < b.N; i++ {
		for g := 0; g < f.NumRowGroups(); g++ {
			err := f.ReadRowGroup(ctx, g, cols, func(bt *vector.Batch) error {
				rows += int64(bt.Rows)
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

// paths names the two readers compared.
var paths = []struct {
	name string
	path int
}{{"pages", pathPages}, {"typed", pathTyped}, {"pqarrow", pathLibrary}}

// BenchmarkReadRowGroup reads one column of each kind from a file written by
// WriteFile: 2^20 rows in one row group, zstd, dictionary encoding where it pays.
func BenchmarkReadRowGroup(b *testing.B) {
	const rows = 1 << 20
	dec := &arrow.Decimal128Type{Precision: 15, Scale: 2}
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "int64", Type: arrow.PrimitiveTypes.Int64},
		{Name: "decimal", Type: dec},
		{Name: "date", Type: arrow.FixedWidthTypes.Date32},
		{Name: "double", Type: arrow.PrimitiveTypes.Float64},
		{Name: "string", Type: arrow.BinaryTypes.String},
		{Name: "nullable", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	path := filepath.Join(b.TempDir(), "bench.parquet")
	err := WriteFile(path, sch, func(emit func(arrow.Record) error) error {
		bld := array.NewRecordBuilder(memory.DefaultAllocator, sch)
		defer bld.Release()
		flags := []string{"A", "N", "R"}
		seed := uint64(1)
		for i := 0; i < rows; i++ {
			seed = seed*6364136223846793005 + 1442695040888963407
			x := int64(seed >> 33)
			bld.Field(0).(*array.Int64Builder).Append(int64(i)*4 + x%4)
			bld.Field(1).(*array.Decimal128Builder).Append(decimal128.FromI64(x % 10_000_000))
			bld.Field(2).(*array.Date32Builder).Append(arrow.Date32(8000 + x%2500))
			bld.Field(3).(*array.Float64Builder).Append(float64(x%100_000) / 100)
			bld.Field(4).(*array.StringBuilder).Append(flags[x%3])
			if x%10 == 0 {
				bld.Field(5).AppendNull()
			} else {
				bld.Field(5).(*array.Int64Builder).Append(x)
			}
			if (i+1)%vector.BatchSize == 0 || i == rows-1 {
				rec := bld.NewRecord()
				err := emit(rec)
				rec.Release()
				if err != nil {
					return err
				}
			}
		}
		return nil
	}, WriteOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, fld := range sch.Fields() {
		for _, p := range paths {
			b.Run(fmt.Sprintf("%s/%s", fld.Name, p.name), func(b *testing.B) {
				benchRead(b, path, []string{fld.Name}, p.path)
			})
		}
	}
}

// lineitemFile is the first lineitem file of the benchmark harness's TPC-H SF 1 data
// (bench/data in the repository, or LORE_LINEITEM), or "" when there is none.
func lineitemFile() string {
	if p := os.Getenv("LORE_LINEITEM"); p != "" {
		return p
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for ; filepath.Dir(dir) != dir; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
	}
	m, _ := filepath.Glob(filepath.Join(dir, "bench", "data", "tpch-sf1-*", "lineitem", "*.parquet"))
	if len(m) == 0 {
		return ""
	}
	return m[0]
}

// BenchmarkReadLineitem reads TPC-H lineitem columns: one of each kind, then the
// seven columns of Q1. Skipped without the harness's data.
func BenchmarkReadLineitem(b *testing.B) {
	path := lineitemFile()
	if path == "" {
		b.Skip("no TPC-H lineitem file: run the bench harness (bench/data) or set LORE_LINEITEM")
	}
	sets := []struct {
		name string
		cols []string
	}{
		{"int64", []string{"l_orderkey"}},
		{"decimal", []string{"l_extendedprice"}},
		{"date", []string{"l_shipdate"}},
		{"dictstring", []string{"l_returnflag"}},
		{"string", []string{"l_comment"}},
		{"q1", []string{"l_quantity", "l_extendedprice", "l_discount", "l_tax", "l_returnflag", "l_linestatus", "l_shipdate"}},
		{"q6", []string{"l_quantity", "l_extendedprice", "l_discount", "l_shipdate"}},
	}
	for _, s := range sets {
		for _, p := range paths {
			b.Run(s.name+"/"+p.name, func(b *testing.B) { benchRead(b, path, s.cols, p.path) })
		}
	}
}
