package parquet

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// failingReader is a reader of the right size that cannot read.
type failingReader struct{ memReader }

func (failingReader) ReadAt([]byte, int64) (int, error) { return 0, errors.New("no reads") }

// TestPageIndexReadOnce reads a column's page index, then asks again through a File
// rebound to a reader that cannot read: the index read first answers.
func TestPageIndexReadOnce(t *testing.T) {
	sch := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	for i := 0; i < 5000; i++ {
		b.Append(int64(i))
	}
	rec := array.NewRecordBatch(sch, []arrow.Array{b.NewArray()}, 5000)
	var buf bytes.Buffer
	props := pq.NewWriterProperties(pq.WithDataPageSize(1024), pq.WithBatchSize(100), pq.WithPageIndexEnabled(true))
	if err := pqarrow.WriteTable(array.NewTableFromRecords(sch, []arrow.RecordBatch{rec}), &buf, 5000, props,
		pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	f, err := Open(context.Background(), newMem(buf.Bytes()), "ids.parquet")
	if err != nil {
		t.Fatal(err)
	}
	pages, ok := f.PageIndex(0, 0)
	if !ok || len(pages) < 2 || pages[0].FirstRow != 0 || !pages[0].Stats.HasMinMax {
		t.Fatalf("page index: %v %+v", ok, pages)
	}
	g, err := f.WithReader(failingReader{newMem(buf.Bytes())})
	if err != nil {
		t.Fatal(err)
	}
	again, ok := g.PageIndex(0, 0)
	if !ok || len(again) != len(pages) || &again[0] != &pages[0] {
		t.Errorf("the page index was not kept: %v, %d pages", ok, len(again))
	}
}
