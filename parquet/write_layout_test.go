package parquet

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/storage"
)

var layoutSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// layoutBatch is rows [from, from+n) with k = row/2 (so keys repeat) and k NULL for
// the first row when nullFirst.
func layoutBatch(from, n int, nullFirst bool) arrow.Record {
	b := array.NewRecordBuilder(memory.DefaultAllocator, layoutSchema)
	defer b.Release()
	for r := from; r < from+n; r++ {
		if nullFirst && r == from {
			b.Field(0).(*array.Int64Builder).AppendNull()
		} else {
			b.Field(0).(*array.Int64Builder).Append(int64(r / 2))
		}
		// A payload that does not compress away, so that byte limits are reached.
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("row %d %x", r, uint64(r)*0x9E3779B97F4A7C15))
	}
	return b.NewRecord()
}

func namer(dir string) func() string {
	i := 0
	return func() string {
		i++
		return filepath.Join(dir, fmt.Sprintf("part-%03d.parquet", i))
	}
}

func TestLayoutWriterLimitsAndFooter(t *testing.T) {
	dir := t.TempDir()
	w, err := NewLayoutWriter(layoutSchema, namer(dir), LayoutOptions{
		RowGroupRows: 1000, FileBytes: 64 << 10, ClusteredBy: []string{"k"}, Bloom: []string{"s"}, CreatedBy: "lore test",
	})
	if err != nil {
		t.Fatal(err)
	}
	const rows = 20500
	for from := 0; from < rows; from += 700 {
		n := min(700, rows-from)
		rec := layoutBatch(from, n, from == 0)
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	files, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("files = %d, want several: %+v", len(files), files)
	}
	var total int64
	var prevMax int64 = -1
	for i, wf := range files {
		total += wf.Rows
		// Row groups of 1000 rows, the file's last one shorter only in the last file;
		// every file but the last reached FileBytes.
		last := i == len(files)-1
		if wf.Rows != int64(wf.RowGroups)*1000 && !last || !last && wf.Bytes < 64<<10 {
			t.Fatalf("file %d: %+v", i, wf)
		}
		r, err := file.OpenParquetFile(wf.Path, false)
		if err != nil {
			t.Fatal(err)
		}
		md := r.MetaData()
		if got := md.KeyValueMetadata().FindValue(LayoutKeyClusteredBy); got == nil || *got != "k" {
			t.Fatalf("clustered_by key = %v", got)
		}
		if md.GetCreatedBy() != "lore test" {
			t.Fatalf("created_by = %q", md.GetCreatedBy())
		}
		for g := 0; g < md.NumRowGroups(); g++ {
			if n := md.RowGroup(g).NumRows(); n != 1000 && !(last && g == md.NumRowGroups()-1) {
				t.Fatalf("file %d row group %d has %d rows", i, g, n)
			}
		}
		rg := md.RowGroup(0)
		sc := rg.SortingColumns()
		if len(sc) != 1 || sc[0].ColumnIdx != 0 || !sc[0].NullsFirst {
			t.Fatalf("sorting columns = %+v", sc)
		}
		col, err := rg.ColumnChunk(0)
		if err != nil {
			t.Fatal(err)
		}
		st, err := col.Statistics()
		if err != nil || st == nil || !st.HasMinMax() {
			t.Fatalf("no statistics: %v", err)
		}
		mn := st.(*metadata.Int64Statistics).Min()
		mx := st.(*metadata.Int64Statistics).Max()
		if mn < prevMax {
			t.Fatalf("file %d min %d below the previous file's max %d", i, mn, prevMax)
		}
		prevMax = mx
		if col.Compression().String() != "ZSTD" {
			t.Fatalf("compression = %v", col.Compression())
		}
		if col.GetColumnIndexLocation() == nil || col.GetOffsetIndexLocation() == nil {
			t.Fatal("no page index")
		}
		// Bloom filters on the clustering and the bloom column; they hold the values.
		bf := r.GetBloomFilterReader()
		rgf, err := bf.RowGroup(0)
		if err != nil {
			t.Fatal(err)
		}
		for c := 0; c < 2; c++ {
			f, err := rgf.GetColumnBloomFilter(c)
			if err != nil || f == nil {
				t.Fatalf("file %d column %d: no bloom filter (%v)", i, c, err)
			}
		}
		kf, _ := rgf.GetColumnBloomFilter(0)
		if !kf.CheckHash(metadata.GetHash(kf.Hasher(), mx)) {
			t.Fatalf("bloom filter of file %d lacks its max %d", i, mx)
		}
		r.Close()
	}
	if total != rows {
		t.Fatalf("rows = %d", total)
	}
}

func TestLayoutWriterRowGroupBytes(t *testing.T) {
	dir := t.TempDir()
	w, err := NewLayoutWriter(layoutSchema, namer(dir), LayoutOptions{RowGroupBytes: 64 << 10, ClusteredBy: []string{"k"}})
	if err != nil {
		t.Fatal(err)
	}
	rec := layoutBatch(0, 49152, false)
	defer rec.Release()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	files, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	// The rows are about 800 KiB encoded: the byte limit cuts row groups where the
	// row limit would not.
	if len(files) != 1 || files[0].RowGroups < 2 {
		t.Fatalf("got %+v, want one file of several row groups", files)
	}
}

func TestLayoutWriterRefusesDisorder(t *testing.T) {
	dir := t.TempDir()
	w, err := NewLayoutWriter(layoutSchema, namer(dir), LayoutOptions{ClusteredBy: []string{"k"}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	a, b := layoutBatch(100, 10, false), layoutBatch(0, 10, false)
	defer a.Release()
	defer b.Release()
	if err := w.Write(a); err != nil {
		t.Fatal(err)
	}
	// Across batches.
	if err := w.Write(b); errs.CodeOf(err) != errs.Internal {
		t.Fatalf("out-of-order batch: %v, want INTERNAL", err)
	}
	// Within a batch: a NULL after values.
	w2, _ := NewLayoutWriter(layoutSchema, namer(t.TempDir()), LayoutOptions{ClusteredBy: []string{"k"}})
	defer w2.Abort()
	c := layoutBatch(0, 10, false)
	defer c.Release()
	d := layoutBatch(10, 5, true)
	defer d.Release()
	if err := w2.Write(c); err != nil {
		t.Fatal(err)
	}
	if err := w2.Write(d); errs.CodeOf(err) != errs.Internal {
		t.Fatalf("NULL after values: %v, want INTERNAL", err)
	}
}

// TestLayoutWriterPages checks that data pages hold LayoutPageRows rows, whatever the
// batches the rows arrive in: every page of a row group but its last.
func TestLayoutWriterPages(t *testing.T) {
	dir := t.TempDir()
	w, err := NewLayoutWriter(layoutSchema, namer(dir), LayoutOptions{RowGroupRows: 50_000, ClusteredBy: []string{"k"}})
	if err != nil {
		t.Fatal(err)
	}
	const rows = 123_457
	for from := 0; from < rows; from += 8192 {
		rec := layoutBatch(from, min(8192, rows-from), false)
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	files, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Rows != rows || files[0].RowGroups != 3 {
		t.Fatalf("files %+v", files)
	}
	ctx := context.Background()
	r, err := storage.Local{}.Open(ctx, files[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := Open(ctx, r, files[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	for g := 0; g < f.NumRowGroups(); g++ {
		groupRows := f.RowGroup(g).Rows
		for c := 0; c < 2; c++ {
			pages, ok := f.PageIndex(g, c)
			if !ok {
				t.Fatalf("row group %d column %d: no page index", g, c)
			}
			var sum int64
			for i, p := range pages {
				sum += p.Rows
				if p.Rows != LayoutPageRows && i != len(pages)-1 || p.Rows > LayoutPageRows {
					t.Fatalf("row group %d column %d page %d holds %d rows", g, c, i, p.Rows)
				}
			}
			if sum != groupRows {
				t.Fatalf("row group %d column %d: pages hold %d of %d rows", g, c, sum, groupRows)
			}
		}
	}
}

// TestArrowSchemaBytes: the footer's ARROW:schema is the IPC stream Arrow's readers
// expect, byte for byte what arrow-go's Flight package serialises, for a schema with
// metadata, nested fields and dictionaries.
func TestArrowSchemaBytes(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "l", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true})},
		{Name: "d", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, Nullable: true},
		{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, &arrow.Decimal128Type{Precision: 20, Scale: 2}),
			Metadata: arrow.NewMetadata([]string{"k"}, []string{"v"})},
	}, func() *arrow.Metadata { m := arrow.NewMetadata([]string{"lore"}, []string{"1"}); return &m }())
	got := arrowSchemaBytes(schema, memory.DefaultAllocator)
	if want := flight.SerializeSchema(schema, memory.DefaultAllocator); !bytes.Equal(got, want) {
		t.Fatalf("%d bytes, want Flight's %d", len(got), len(want))
	}
	back, err := flight.DeserializeSchema(got, memory.DefaultAllocator)
	if err != nil || !back.Equal(schema) {
		t.Fatalf("read back: %v, %v", back, err)
	}
}
