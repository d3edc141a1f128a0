package source

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// col is one column of a test file: a name and its values (nil is NULL). Values are
// int64, int32, float64 or string.
type col struct {
	name string
	typ  arrow.DataType
	vals []any
}

// writeParquet writes cols to path with row groups of rgRows rows.
func writeParquet(t *testing.T, path string, rgRows int64, cols ...col) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, len(cols))
	mem := memory.DefaultAllocator
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.typ, Nullable: true}
		b := array.NewBuilder(mem, c.typ)
		for _, v := range c.vals {
			if v == nil {
				b.AppendNull()
				continue
			}
			switch bb := b.(type) {
			case *array.Int64Builder:
				bb.Append(v.(int64))
			case *array.Int32Builder:
				bb.Append(v.(int32))
			case *array.Float64Builder:
				bb.Append(v.(float64))
			case *array.StringBuilder:
				bb.Append(v.(string))
			default:
				t.Fatalf("unsupported test type %s", c.typ)
			}
		}
		arrs[i] = b.NewArray()
	}
	sch := arrow.NewSchema(fields, nil)
	n := int64(0)
	if len(arrs) > 0 {
		n = int64(arrs[0].Len())
	}
	rec := array.NewRecord(sch, arrs, n)
	tbl := array.NewTableFromRecords(sch, []arrow.Record{rec})
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	props := pq.NewWriterProperties(pq.WithStats(true), pq.WithMaxRowGroupLength(rgRows))
	if err := pqarrow.WriteTable(tbl, f, rgRows, props, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	f.Close() // WriteTable closed it already
}

func ints(vs ...int64) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

func seq(from, n int64) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = from + int64(i)
	}
	return out
}

func strs(vs ...string) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// scanAll plans and reads every morsel, returning the rows as rendered values.
func scanAll(t *testing.T, l *Listing, spec ScanSpec, c *Counters) [][]types.Value {
	t.Helper()
	ctx := context.Background()
	p, err := l.Plan(ctx, storage.Local{}, spec, c)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]types.Value
	for _, m := range p.Morsels {
		err := p.Read(ctx, m, func(b *vector.Batch) error {
			if len(b.Cols) != len(spec.Columns) {
				t.Fatalf("batch has %d columns, want %d", len(b.Cols), len(spec.Columns))
			}
			for r := 0; r < b.Rows; r++ {
				row := make([]types.Value, len(b.Cols))
				for i, a := range b.Cols {
					if a.Len() != b.Rows {
						t.Fatalf("column %d has %d rows, batch %d", i, a.Len(), b.Rows)
					}
					row[i] = types.ValueAt(a, r)
				}
				rows = append(rows, row)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return rows
}

var nan = math.NaN()
