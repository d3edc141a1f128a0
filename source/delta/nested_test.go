package delta

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// mappedField is a field of a test file: a physical name and, when id > 0, a field id.
func mappedField(name string, dt arrow.DataType, id int) arrow.Field {
	f := arrow.Field{Name: name, Type: dt, Nullable: true}
	if id > 0 {
		f.Metadata = arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(id)})
	}
	return f
}

// TestNestedColumnMapping reads a table under column mapping whose files order the
// fields of a struct, and of a list's structs, otherwise than the schema, with
// physical names (name mode) or other names and field ids (id mode): every field is
// found by its physical name or its id, not by its position.
func TestNestedColumnMapping(t *testing.T) {
	for _, mode := range []string{"name", "id"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			// In id mode the file's names are none the schema states: only ids match.
			name := func(physical string) string {
				if mode == "id" {
					return "other-" + physical
				}
				return physical
			}
			id := func(n int) int {
				if mode == "id" {
					return n
				}
				return 0
			}
			elem := arrow.StructOf(mappedField(name("p-y"), types.Int32, id(6)), mappedField(name("p-x"), types.Int32, id(5)))
			sch := arrow.NewSchema([]arrow.Field{
				mappedField(name("col-s"), arrow.StructOf(mappedField(name("p-2"), types.Int64, id(3)), mappedField(name("p-1"), types.Int64, id(2))), id(1)),
				mappedField(name("col-l"), arrow.ListOf(elem), id(4)),
			}, nil)
			b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
			s := b.Field(0).(*array.StructBuilder)
			s.Append(true)
			s.FieldBuilder(0).(*array.Int64Builder).Append(20) // second
			s.FieldBuilder(1).(*array.Int64Builder).Append(10) // first
			l := b.Field(1).(*array.ListBuilder)
			l.Append(true)
			e := l.ValueBuilder().(*array.StructBuilder)
			e.Append(true)
			e.FieldBuilder(0).(*array.Int32Builder).Append(2) // y
			e.FieldBuilder(1).(*array.Int32Builder).Append(1) // x
			rec := b.NewRecord()
			defer rec.Release()
			data := filepath.Join(dir, "part-0.parquet")
			if err := parquet.WriteFile(data, sch, func(emit func(arrow.Record) error) error { return emit(rec) }, parquet.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(data)
			if err != nil {
				t.Fatal(err)
			}
			meta := func(physical string, id int) string {
				return fmt.Sprintf(`{"delta.columnMapping.physicalName": %q, "delta.columnMapping.id": %d}`, physical, id)
			}
			schema := fmt.Sprintf(`{"type": "struct", "fields": [
  {"name": "s", "nullable": true, "metadata": %s, "type": {"type": "struct", "fields": [
    {"name": "first", "type": "long", "nullable": true, "metadata": %s},
    {"name": "second", "type": "long", "nullable": true, "metadata": %s}]}},
  {"name": "l", "nullable": true, "metadata": %s, "type": {"type": "array", "containsNull": true, "elementType": {"type": "struct", "fields": [
    {"name": "x", "type": "integer", "nullable": true, "metadata": %s},
    {"name": "y", "type": "integer", "nullable": true, "metadata": %s}]}}}]}`,
				meta("col-s", 1), meta("p-1", 2), meta("p-2", 3), meta("col-l", 4), meta("p-x", 5), meta("p-y", 6))
			reader, writer := 2, 5
			log := strings.Join([]string{
				fmt.Sprintf(`{"protocol": {"minReaderVersion": %d, "minWriterVersion": %d}}`, reader, writer),
				fmt.Sprintf(`{"metaData": {"id": "t", "format": {"provider": "parquet", "options": {}}, "schemaString": %q, "partitionColumns": [], "configuration": {"delta.columnMapping.mode": %q, "delta.columnMapping.maxColumnId": "6"}}}`, schema, mode),
				fmt.Sprintf(`{"add": {"path": "part-0.parquet", "partitionValues": {}, "size": %d, "modificationTime": 1700000000000, "dataChange": true}}`, st.Size()),
			}, "\n") + "\n"
			if err := os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "_delta_log", "00000000000000000000.json"), []byte(log), 0o644); err != nil {
				t.Fatal(err)
			}
			lst, err := Open(context.Background(), storage.Local{}, dir, source.AsOf{})
			if err != nil {
				t.Fatal(err)
			}
			got := readRows(t, lst, "s", "l")
			if want := []string{"{'first': 10, 'second': 20} [{'x': 1, 'y': 2}]"}; !slices.Equal(got, want) {
				t.Errorf("rows %q, want %q", got, want)
			}
		})
	}
}

// readRows reads a listing's columns cols as space-separated rows, sorted.
func readRows(t *testing.T, l *source.Listing, cols ...string) []string {
	t.Helper()
	ctx := context.Background()
	p, err := l.Plan(ctx, storage.Local{}, source.ScanSpec{Columns: cols}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range p.Morsels {
		err := p.Read(ctx, m, func(b *vector.Batch) error {
			for i := range b.Rows {
				var parts []string
				for _, c := range b.Cols {
					parts = append(parts, types.ValueAt(c, i).String())
				}
				out = append(out, strings.Join(parts, " "))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(out)
	return out
}
