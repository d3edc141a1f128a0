package iceberg

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	ice "github.com/apache/iceberg-go"

	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
)

// nestedTable writes an unpartitioned format v2 table with one snapshot of the data
// files files (written by the caller under dir/data, with rows rows each), whose
// current schema is the JSON fields and whose properties are props (JSON).
func nestedTable(t *testing.T, dir, fields, props string, files map[string]int64) string {
	t.Helper()
	local := func(rel string) string { return filepath.Join(dir, rel) }
	spec := ice.NewPartitionSpecID(0)
	var entries []ice.ManifestEntry
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if !yield(n) {
				return
			}
		}
	})
	for _, name := range names {
		st, err := os.Stat(local("data/" + name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := ice.NewDataFileBuilder(spec, ice.EntryContentData, local("data/"+name), ice.ParquetFile, nil, nil, nil, files[name], st.Size())
		if err != nil {
			t.Fatal(err)
		}
		snap, seq := int64(1), int64(1)
		entries = append(entries, ice.NewManifestEntry(ice.EntryStatusEXISTING, &snap, &seq, &seq, b.Build()))
	}
	mf := writeManifest(t, local("metadata/m.avro"), local("metadata/m.avro"), spec, testSchema, 1, ice.ManifestContentData, entries...)
	writeManifestList(t, local("metadata/snap-1.avro"), 1, 1, mf)
	meta := fmt.Sprintf(`{
  "format-version": 2, "table-uuid": "6a1c3f0e-55a2-4b8e-9d1c-0c7f6e2b9a10", "location": %q,
  "last-sequence-number": 1, "last-updated-ms": 1700000000000, "last-column-id": 100,
  "current-schema-id": 1,
  "schemas": [{"type": "struct", "schema-id": 1, "fields": %s}],
  "default-spec-id": 0, "last-partition-id": 999, "partition-specs": [{"spec-id": 0, "fields": []}],
  "default-sort-order-id": 0, "sort-orders": [{"order-id": 0, "fields": []}],
  "properties": %s, "current-snapshot-id": 1,
  "snapshots": [{"snapshot-id": 1, "sequence-number": 1, "timestamp-ms": 1700000000000, "manifest-list": %q, "summary": {"operation": "append"}}]
}`, dir, fields, props, local("metadata/snap-1.avro"))
	p := local("metadata/v1.metadata.json")
	if err := os.WriteFile(p, []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// keyField is a map's key field with a field id: keys are never NULL.
func keyField(id int) arrow.Field {
	f := idField("key", types.String, id)
	f.Nullable = false
	return f
}

// plain is a field without a field id, as writers that know nothing of Iceberg
// write them.
func plain(name string, dt arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: dt, Nullable: true}
}

// TestNestedFieldsByID reads files written under older schemas by the field ids of
// their nested fields: a struct field renamed since (a -> a2), one dropped and added
// again under its old name (b, id 4 then 6: the old data is not the new field's), one
// added with an initial-default (c), a list of structs whose field was renamed
// (x -> y), a map whose value struct gained a field with a default, and a struct
// column added with the default {} (a struct of its fields' defaults).
func TestNestedFieldsByID(t *testing.T) {
	dir := t.TempDir()
	old := []arrow.Field{
		idField("id", types.Int64, 1),
		idField("s", arrow.StructOf(idField("a", types.Int64, 3), idField("b", types.String, 4)), 2),
		idField("l", arrow.ListOfField(idField("element", arrow.StructOf(idField("x", types.Int32, 9)), 8)), 7),
		idField("m", arrow.MapOfFields(keyField(21), idField("value", arrow.StructOf(idField("v", types.Int64, 23)), 22)), 20),
	}
	writeParquet(t, filepath.Join(dir, "data/old.parquet"), old, func(b *array.RecordBuilder) {
		b.Field(0).(*array.Int64Builder).Append(1)
		s := b.Field(1).(*array.StructBuilder)
		s.Append(true)
		s.FieldBuilder(0).(*array.Int64Builder).Append(10)
		s.FieldBuilder(1).(*array.StringBuilder).Append("old b")
		l := b.Field(2).(*array.ListBuilder)
		l.Append(true)
		e := l.ValueBuilder().(*array.StructBuilder)
		e.Append(true)
		e.FieldBuilder(0).(*array.Int32Builder).Append(5)
		m := b.Field(3).(*array.MapBuilder)
		m.Append(true)
		m.KeyBuilder().(*array.StringBuilder).Append("k")
		v := m.ItemBuilder().(*array.StructBuilder)
		v.Append(true)
		v.FieldBuilder(0).(*array.Int64Builder).Append(40)
	})
	current := []arrow.Field{
		idField("id", types.Int64, 1),
		idField("s", arrow.StructOf(idField("a2", types.Int64, 3), idField("b", types.String, 6), idField("c", types.Int64, 5)), 2),
		idField("l", arrow.ListOfField(idField("element", arrow.StructOf(idField("y", types.Int32, 9)), 8)), 7),
		idField("m", arrow.MapOfFields(keyField(21), idField("value", arrow.StructOf(idField("v", types.Int64, 23), idField("w", types.String, 24)), 22)), 20),
		idField("t", arrow.StructOf(idField("d", types.Int32, 31)), 30),
	}
	writeParquet(t, filepath.Join(dir, "data/new.parquet"), current, func(b *array.RecordBuilder) {
		b.Field(0).(*array.Int64Builder).Append(2)
		s := b.Field(1).(*array.StructBuilder)
		s.Append(true)
		s.FieldBuilder(0).(*array.Int64Builder).Append(11)
		s.FieldBuilder(1).(*array.StringBuilder).Append("new b")
		s.FieldBuilder(2).(*array.Int64Builder).Append(8)
		l := b.Field(2).(*array.ListBuilder)
		l.Append(true)
		e := l.ValueBuilder().(*array.StructBuilder)
		e.Append(true)
		e.FieldBuilder(0).(*array.Int32Builder).Append(6)
		m := b.Field(3).(*array.MapBuilder)
		m.Append(true)
		m.KeyBuilder().(*array.StringBuilder).Append("k")
		v := m.ItemBuilder().(*array.StructBuilder)
		v.Append(true)
		v.FieldBuilder(0).(*array.Int64Builder).Append(41)
		v.FieldBuilder(1).(*array.StringBuilder).Append("w")
		b.Field(4).(*array.StructBuilder).AppendNull()
	})
	fields := `[
    {"id": 1, "name": "id", "required": false, "type": "long"},
    {"id": 2, "name": "s", "required": false, "type": {"type": "struct", "fields": [
      {"id": 3, "name": "a2", "required": false, "type": "long"},
      {"id": 6, "name": "b", "required": false, "type": "string"},
      {"id": 5, "name": "c", "required": false, "type": "long", "initial-default": 7}]}},
    {"id": 7, "name": "l", "required": false, "type": {"type": "list", "element-id": 8, "element-required": false,
      "element": {"type": "struct", "fields": [{"id": 9, "name": "y", "required": false, "type": "int"}]}}},
    {"id": 20, "name": "m", "required": false, "type": {"type": "map", "key-id": 21, "key": "string", "value-id": 22, "value-required": false,
      "value": {"type": "struct", "fields": [
        {"id": 23, "name": "v", "required": false, "type": "long"},
        {"id": 24, "name": "w", "required": false, "type": "string", "initial-default": "dflt"}]}}},
    {"id": 30, "name": "t", "required": false, "initial-default": {}, "type": {"type": "struct", "fields": [
      {"id": 31, "name": "d", "required": false, "type": "int", "initial-default": 5}]}}]`
	p := nestedTable(t, dir, fields, `{}`, map[string]int64{"old.parquet": 1, "new.parquet": 1})
	l, err := Open(context.Background(), storage.Local{}, p, source.AsOf{})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, l, "id", "s", "l", "m", "t")
	want := []string{
		"1 {'a2': 10, 'b': NULL, 'c': 7} [{'y': 5}] {k={'v': 40, 'w': dflt}} {'d': 5}",
		"2 {'a2': 11, 'b': new b, 'c': 8} [{'y': 6}] {k={'v': 41, 'w': w}} NULL",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestNestedNameMapping reads files without field ids by the table's name mapping,
// nested fields included: a struct field and a field of a list's structs renamed
// since the files were written are found by the names the mapping keeps for them,
// and a field the mapping gives no name the file has reads as NULL.
func TestNestedNameMapping(t *testing.T) {
	dir := t.TempDir()
	writeParquet(t, filepath.Join(dir, "data/old.parquet"), []arrow.Field{
		plain("id", types.Int64),
		plain("s", arrow.StructOf(plain("a", types.Int64), plain("gone", types.String))),
		plain("l", arrow.ListOf(arrow.StructOf(plain("x", types.Int32)))),
	}, func(b *array.RecordBuilder) {
		b.Field(0).(*array.Int64Builder).Append(1)
		s := b.Field(1).(*array.StructBuilder)
		s.Append(true)
		s.FieldBuilder(0).(*array.Int64Builder).Append(10)
		s.FieldBuilder(1).(*array.StringBuilder).Append("dropped")
		l := b.Field(2).(*array.ListBuilder)
		l.Append(true)
		e := l.ValueBuilder().(*array.StructBuilder)
		e.Append(true)
		e.FieldBuilder(0).(*array.Int32Builder).Append(5)
	})
	fields := `[
    {"id": 1, "name": "id", "required": false, "type": "long"},
    {"id": 2, "name": "s", "required": false, "type": {"type": "struct", "fields": [
      {"id": 3, "name": "a2", "required": false, "type": "long"},
      {"id": 6, "name": "gone", "required": false, "type": "string"}]}},
    {"id": 7, "name": "l", "required": false, "type": {"type": "list", "element-id": 8, "element-required": false,
      "element": {"type": "struct", "fields": [{"id": 9, "name": "y", "required": false, "type": "int"}]}}}]`
	mapping := `[{"field-id": 1, "names": ["id"]},
    {"field-id": 2, "names": ["s"], "fields": [{"field-id": 3, "names": ["a2", "a"]}, {"field-id": 6, "names": ["gone2"]}]},
    {"field-id": 7, "names": ["l"], "fields": [{"field-id": 8, "names": ["element"], "fields": [{"field-id": 9, "names": ["y", "x"]}]}]}]`
	props := fmt.Sprintf(`{"schema.name-mapping.default": %q}`, mapping)
	p := nestedTable(t, dir, fields, props, map[string]int64{"old.parquet": 1})
	l, err := Open(context.Background(), storage.Local{}, p, source.AsOf{})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, l, "id", "s", "l")
	want := []string{"1 {'a2': 10, 'gone': NULL} [{'y': 5}]"}
	if !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
}

// TestInitialDefaultsInStruct reads the fixture whose struct gained a field of every
// primitive type with an initial-default after its first file was written: that
// file's row carries the defaults (DuckDB's expected output in
// initial_default_in_struct_all_types.test; TIMESTAMPTZ in UTC).
func TestInitialDefaultsInStruct(t *testing.T) {
	p := filepath.Join(unitDir(t), "..", "duckdb-iceberg", "data", "persistent", "add_columns_with_defaults_in_struct",
		"default.db", "add_columns_with_defaults_in_struct", "metadata", "00003-21a957f9-c2ee-431a-9d18-bf257b561198.metadata.json")
	l, err := Open(context.Background(), storage.Local{}, p, source.AsOf{})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, l, "a")
	want := []string{
		`{'col1': test, 'col_boolean': false, 'col_integer': 453243, 'col_long': 328725092345834, 'col_float': 23.34342, 'col_double': 23.343424523423433, 'col_decimal': 3423434.23, 'col_date': 0011-03-05, 'col_time': 12:06:45, 'col_timestamp': 0011-03-05 12:06:45, 'col_timestamptz': NULL, 'col_string': World, 'col_uuid': NULL, 'col_fixed': NULL, 'col_binary': \x80\x00\x80}`,
		`{'col1': test, 'col_boolean': true, 'col_integer': 342342, 'col_long': -9223372036854775808, 'col_float': 0.34234, 'col_double': 0.342343242342342, 'col_decimal': 12345.00, 'col_date': 2003-10-20, 'col_time': 00:00:00.012345, 'col_timestamp': 1970-01-01 00:00:00.012345, 'col_timestamptz': 1970-01-01 00:00:00.012345+00, 'col_string': HELLO, 'col_uuid': f79c3e09-677c-4bbd-a479-3f349cb785e7, 'col_fixed': \x01\x02\x03\xFF\x03, 'col_binary': \x01\x02}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCaseSensitiveNames reads the fixture whose columns user_id and uSeR_Id differ
// only in case: the second is uSeR_Id_1 (as DuckDB names it) and reads its own data
// by its field id.
func TestCaseSensitiveNames(t *testing.T) {
	p := filepath.Join(unitDir(t), "..", "duckdb-iceberg", "data", "persistent", "case_sensitive_names",
		"default.db", "case_sensitive_names", "metadata", "00001-a7a3a44c-4aac-4619-bebd-11be37b27351.metadata.json")
	l, err := Open(context.Background(), storage.Local{}, p, source.AsOf{})
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{l.Schema.Field(0).Name, l.Schema.Field(1).Name}; !slices.Equal(got, []string{"user_id", "uSeR_Id_1"}) {
		t.Fatalf("columns %v", got)
	}
	got := readAll(t, l, "user_id", "USER_ID_1")
	if want := []string{"1 user_1", "2 user_2", "3 user_3"}; !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
}
