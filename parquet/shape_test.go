package parquet

import (
	"bytes"
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// writeShaped writes rows rows of an id column of type id and a name column of
// type name, and opens the file.
func writeShaped(t *testing.T, id, name arrow.DataType, rows int, storeSchema bool) *File {
	t.Helper()
	sch := arrow.NewSchema([]arrow.Field{{Name: "id", Type: id}, {Name: "name", Type: name, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for i := 0; i < rows; i++ {
		switch ib := b.Field(0).(type) {
		case *array.Int32Builder:
			ib.Append(int32(i))
		case *array.Int64Builder:
			ib.Append(int64(i))
		}
		switch sb := b.Field(1).(type) {
		case *array.StringBuilder:
			sb.Append("n" + string(rune('a'+i%26)))
		case *array.LargeStringBuilder:
			sb.Append("n" + string(rune('a'+i%26)))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	aprops := pqarrow.DefaultWriterProps()
	if storeSchema {
		aprops = pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
	}
	if err := pqarrow.WriteTable(array.NewTableFromRecords(sch, []arrow.RecordBatch{rec}), &buf, int64(rows),
		pq.NewWriterProperties(), aprops); err != nil {
		t.Fatal(err)
	}
	f, err := Open(context.Background(), newMem(buf.Bytes()), "shaped.parquet")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Files with the same schema share one mapping of it; files whose schema or stored
// Arrow schema differ do not. No File keeps the library's metadata after Open.
func TestFilesShareSchema(t *testing.T) {
	i64, i32, str, large := arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString
	a := writeShaped(t, i64, str, 10, false)
	b := writeShaped(t, i64, str, 2000, false)
	narrow := writeShaped(t, i32, str, 10, false)
	stored := writeShaped(t, i64, large, 10, true)
	if a.shape != b.shape {
		t.Errorf("two files of one schema map it twice")
	}
	if a.shape == narrow.shape {
		t.Errorf("an int32 column shares the mapping of an int64 one")
	}
	if a.shape == stored.shape {
		t.Errorf("a file with an ARROW:schema shares the mapping of one without")
	}
	if got := narrow.Schema().Field(0).Type; !arrow.TypeEqual(got, i32) {
		t.Errorf("narrow id reads as %s", got)
	}
	for _, f := range []*File{a, b, narrow, stored} {
		if f.meta.md != nil {
			t.Fatalf("%s keeps the library's metadata after Open", f.Name())
		}
	}
	if a.NumRows() != 10 || b.NumRows() != 2000 || b.RowGroup(0).Rows != 2000 {
		t.Errorf("rows %d and %d (row group %d)", a.NumRows(), b.NumRows(), b.RowGroup(0).Rows)
	}
	st := b.RowGroup(0).Columns[0]
	if !st.HasMinMax || st.Min.String() != "0" || st.Max.String() != "1999" {
		t.Errorf("id bounds %v..%v", st.Min, st.Max)
	}
	// The library's metadata comes back on demand, for the readers that use it.
	md, err := b.metadata()
	if err != nil || md.NumRows != 2000 || md.GetSourceFileSize() != b.Size() {
		t.Fatalf("metadata %v, %v", md, err)
	}
	if got, _ := b.metadata(); got != md {
		t.Errorf("metadata decoded twice")
	}
}
