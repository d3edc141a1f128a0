package parquet

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/vector"
)

// memReader is a storage.Reader over bytes.
type memReader struct{ *bytes.Reader }

func (memReader) Close() error { return nil }

func newMem(b []byte) memReader { return memReader{bytes.NewReader(b)} }

// smallFile is a Parquet file written here: an int64, a nullable string and a double,
// in two row groups.
func smallFile(t testing.TB) []byte {
	mem := memory.DefaultAllocator
	ib := array.NewInt64Builder(mem)
	sb := array.NewStringBuilder(mem)
	fb := array.NewFloat64Builder(mem)
	for i := 0; i < 50; i++ {
		ib.Append(int64(i * 3))
		if i%7 == 0 {
			sb.AppendNull()
		} else {
			sb.Append("v" + string(rune('a'+i%26)))
		}
		fb.Append(float64(i) / 4)
	}
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	rec := array.NewRecord(sch, []arrow.Array{ib.NewArray(), sb.NewArray(), fb.NewArray()}, 50)
	var buf bytes.Buffer
	props := pq.NewWriterProperties(pq.WithMaxRowGroupLength(25), pq.WithDictionaryDefault(true))
	if err := pqarrow.WriteTable(array.NewTableFromRecords(sch, []arrow.Record{rec}), &buf, 25, props, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// openAndRead opens data and reads its first row group; it must not panic, and any
// failure must be CORRUPT_SOURCE.
func openAndRead(t *testing.T, data []byte) {
	ctx := context.Background()
	f, err := Open(ctx, newMem(data), "fuzz.parquet")
	if err != nil {
		if errs.CodeOf(err) != errs.CorruptSource {
			t.Fatalf("open: code %s: %v", errs.CodeOf(err), err)
		}
		return
	}
	if f.NumRowGroups() == 0 {
		return
	}
	cols := make([]int, f.Schema().NumFields())
	for i := range cols {
		cols[i] = i
	}
	// Stop after a few batches: a corrupt header may promise a huge row group.
	batches := 0
	err = f.ReadRowGroup(ctx, 0, cols, func(b *vector.Batch) error {
		batches++
		if batches > 8 {
			return errStop
		}
		return nil
	})
	if err != nil && err != errStop && errs.CodeOf(err) != errs.CorruptSource {
		t.Fatalf("read: code %s: %v", errs.CodeOf(err), err)
	}
	// The late and ranged reads and the page index go through the page walker's own
	// header parsing: the same rules hold.
	for c := range cols {
		f.PageIndex(0, c)
	}
	rows := f.RowGroup(0).Rows
	early := make([]bool, len(cols))
	early[0] = true
	batches = 0
	err = f.ReadRowGroupLate(ctx, 0, []RowRange{{rows / 3, rows / 3}, {rows - rows/4, rows / 4}}, cols, early,
		func(b *vector.Batch, late Late) error {
			batches++
			if batches > 8 {
				return errStop
			}
			sel := []int32{0, int32(b.Rows / 2), int32(b.Rows - 1)}
			switch batches % 4 {
			case 1:
				return late(nil, nil, false)
			case 2:
				return late(nil, sel, false)
			case 3:
				return late(nil, sel, true)
			}
			return nil
		})
	if err != nil && err != errStop && errs.CodeOf(err) != errs.CorruptSource {
		t.Fatalf("late read: code %s: %v", errs.CodeOf(err), err)
	}
}

var errStop = errs.New(errs.Canceled, "stop")

func FuzzOpenFooter(f *testing.F) {
	small := smallFile(f)
	f.Add(small)
	f.Add(small[:len(small)-1])
	f.Add(small[:len(small)/2])
	f.Add(small[len(small)/2:])
	f.Add([]byte("PAR1PAR1"))
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"))
	if dir, err := findData(); err == nil {
		for _, name := range []string{"apache/alltypes_plain.parquet", "apache/nulls.snappy.parquet",
			"duckdb/date.parquet", "apache/int32_decimal.parquet"} {
			if b, err := os.ReadFile(filepath.Join(dir, "parquet-testing", name)); err == nil {
				f.Add(b)
				f.Add(b[:len(b)-9])
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		openAndRead(t, data)
	})
}

// TestSmallFileRoundTrip checks the file the fuzz target starts from reads back whole.
func TestSmallFileRoundTrip(t *testing.T) {
	f, err := Open(context.Background(), newMem(smallFile(t)), "small.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if f.NumRows() != 50 || f.NumRowGroups() != 2 {
		t.Fatalf("%d rows in %d row groups", f.NumRows(), f.NumRowGroups())
	}
	rg := f.RowGroup(1)
	is := rg.Columns[0]
	if !is.HasMinMax || is.Min.I != 75 || is.Max.I != 147 || !is.MinExact || !is.MaxExact {
		t.Errorf("stats of i in row group 1: %+v", is)
	}
	ss := f.RowGroup(0).Columns[1]
	if !ss.HasNullCount || ss.NullCount != 4 || ss.MinExact {
		t.Errorf("stats of s in row group 0: %+v (byte-array bounds without flags are not exact)", ss)
	}
	var sum int64
	err = f.ReadRowGroup(context.Background(), 1, []int{2, 0}, func(b *vector.Batch) error {
		is := b.Cols[1].(*array.Int64)
		for i := 0; i < b.Rows; i++ {
			sum += is.Value(i)
		}
		if b.Cols[0].DataType().ID() != arrow.FLOAT64 {
			t.Errorf("column order: first is %s", b.Cols[0].DataType())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(3 * (25 + 49) * 25 / 2); sum != want {
		t.Errorf("sum %d, want %d", sum, want)
	}
}
