package lore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/loredb/lore"
)

// TestFullAnalyzeOfNestedColumnsWithNulls reads list and struct columns holding NULL
// rows with ANALYZE WITH (sketches = true), which must count them and fail nothing.
func TestFullAnalyzeOfNestedColumnsWithNulls(t *testing.T) {
	dir := t.TempDir()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	lb, sb := b.Field(0).(*array.ListBuilder), b.Field(1).(*array.StructBuilder)
	for i := 0; i < 100; i++ {
		if i%3 == 0 {
			lb.AppendNull()
			sb.AppendNull()
			continue
		}
		lb.Append(true)
		lb.ValueBuilder().(*array.Int32Builder).Append(int32(i))
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Int64Builder).Append(int64(i))
	}
	rec := b.NewRecord()
	f, err := os.Create(filepath.Join(dir, "n.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(schema, f, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE n WITH (location = '%s', format = 'parquet')", dir))
	query(t, e, "ANALYZE n WITH (sketches = true)")
	res := query(t, e, "SHOW STATS FOR n")
	if got := cell(res, 0, 3); got != "0.34" {
		t.Errorf("nulls_fraction of l: %s, want 0.34", got)
	}
}
