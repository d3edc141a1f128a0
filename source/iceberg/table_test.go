package iceberg

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	ice "github.com/apache/iceberg-go"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/shareddata"
	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// declared is where the synthetic table says it lives: somewhere else, so that every
// path it names must be mapped onto where the test wrote it.
const declared = "s3://warehouse/db/t"

var testSchema = ice.NewSchema(0,
	ice.NestedField{ID: 1, Name: "id", Type: ice.PrimitiveTypes.Int64},
	ice.NestedField{ID: 2, Name: "part", Type: ice.PrimitiveTypes.String},
	ice.NestedField{ID: 3, Name: "val", Type: ice.PrimitiveTypes.String},
)

// row is one row of the synthetic table; a nil val is NULL.
type row struct {
	id  int64
	val *string
}

func s(v string) *string { return &v }

// writeParquet writes columns with Iceberg field ids.
func writeParquet(t *testing.T, p string, fields []arrow.Field, cols func(b *array.RecordBuilder)) int64 {
	t.Helper()
	sch := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	cols(b)
	rec := b.NewRecord()
	defer rec.Release()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	err := parquet.WriteFile(p, sch, func(emit func(arrow.Record) error) error { return emit(rec) }, parquet.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func idField(name string, dt arrow.DataType, id int) arrow.Field {
	return arrow.Field{Name: name, Type: dt, Nullable: true,
		Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(id)})}
}

// writeData writes a data file without the partition column (its value is in the
// manifest alone, as some writers leave it).
func writeData(t *testing.T, p string, rows []row) int64 {
	return writeParquet(t, p, []arrow.Field{idField("id", types.Int64, 1), idField("val", types.String, 3)}, func(b *array.RecordBuilder) {
		for _, r := range rows {
			b.Field(0).(*array.Int64Builder).Append(r.id)
			if r.val == nil {
				b.Field(1).AppendNull()
			} else {
				b.Field(1).(*array.StringBuilder).Append(*r.val)
			}
		}
	})
}

// synthetic is a table written by the test: its directory and snapshot ids.
type synthetic struct {
	dir          string
	first, final int64
	firstTime    int64
}

// writeTable writes a format v2 table partitioned by identity(part):
//
//	seq 1: a (part x): 1 a, 2 b, 3 NULL, 4 d, 5 e;  b (part y): 1 a, 2 b, 3 c
//	seq 2: position delete of a's row 0, and of c's row 0 (c is newer: not deleted);
//	       equality delete id = 2 in part x (not y, not c);
//	       equality delete val IN (NULL, 'c') unpartitioned (with an extra column id)
//	seq 3: c (part x): 2 b, 6 f
//
// Live at seq 3: a: 4 d, 5 e; b: 1 a, 2 b; c: 2 b, 6 f. At seq 1: all 8 rows.
func writeTable(t *testing.T) synthetic {
	dir := t.TempDir()
	local := func(rel string) string { return filepath.Join(dir, rel) }
	uri := func(rel string) string { return declared + "/" + rel }
	spec0 := ice.NewPartitionSpecID(0, ice.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "part", Transform: ice.IdentityTransform{}})
	spec1 := ice.NewPartitionSpecID(1)

	sizeA := writeData(t, local("data/a.parquet"), []row{{1, s("a")}, {2, s("b")}, {3, nil}, {4, s("d")}, {5, s("e")}})
	sizeB := writeData(t, local("data/b.parquet"), []row{{1, s("a")}, {2, s("b")}, {3, s("c")}})
	sizeC := writeData(t, local("data/c.parquet"), []row{{2, s("b")}, {6, s("f")}})
	sizeP := writeParquet(t, local("data/pos.parquet"), []arrow.Field{idField("file_path", types.String, posFilePathID), idField("pos", types.Int64, posPosID)}, func(b *array.RecordBuilder) {
		for _, p := range []string{uri("data/a.parquet"), uri("data/c.parquet")} {
			b.Field(0).(*array.StringBuilder).Append(p)
			b.Field(1).(*array.Int64Builder).Append(0)
		}
	})
	sizeE1 := writeParquet(t, local("data/eq-id.parquet"), []arrow.Field{idField("id", types.Int32, 1)}, func(b *array.RecordBuilder) {
		b.Field(0).(*array.Int32Builder).Append(2) // narrower than the column: cast
	})
	sizeE2 := writeParquet(t, local("data/eq-val.parquet"), []arrow.Field{idField("id", types.Int64, 1), idField("val", types.String, 3)}, func(b *array.RecordBuilder) {
		b.Field(0).(*array.Int64Builder).AppendValues([]int64{99, 98}, nil)
		b.Field(1).AppendNull()
		b.Field(1).(*array.StringBuilder).Append("c")
	})

	dataFile := func(spec ice.PartitionSpec, content ice.ManifestEntryContent, rel string, part map[int]any, rows, size int64) *ice.DataFileBuilder {
		b, err := ice.NewDataFileBuilder(spec, content, uri(rel), ice.ParquetFile, part, nil, nil, rows, size)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	x, y := map[int]any{1000: "x"}, map[int]any{1000: "y"}
	entry := func(seq int64, df ice.DataFile) ice.ManifestEntry {
		snap := int64(1)
		if seq > 1 {
			snap = 3
		}
		return ice.NewManifestEntry(ice.EntryStatusEXISTING, &snap, &seq, &seq, df)
	}
	manifest := func(name string, snap int64, spec ice.PartitionSpec, content ice.ManifestContent, entries ...ice.ManifestEntry) ice.ManifestFile {
		return writeManifest(t, local("metadata/"+name), uri("metadata/"+name), spec, testSchema, snap, content, entries...)
	}
	if err := os.MkdirAll(local("metadata"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := entry(1, dataFile(spec0, ice.EntryContentData, "data/a.parquet", x, 5, sizeA).Build())
	bb := entry(1, dataFile(spec0, ice.EntryContentData, "data/b.parquet", y, 3, sizeB).Build())
	c := entry(3, dataFile(spec0, ice.EntryContentData, "data/c.parquet", x, 2, sizeC).Build())
	pos := entry(2, dataFile(spec0, ice.EntryContentPosDeletes, "data/pos.parquet", x, 2, sizeP).Build())
	e1 := entry(2, dataFile(spec0, ice.EntryContentEqDeletes, "data/eq-id.parquet", x, 1, sizeE1).EqualityFieldIDs([]int{1}).Build())
	e2 := entry(2, dataFile(spec1, ice.EntryContentEqDeletes, "data/eq-val.parquet", nil, 2, sizeE2).EqualityFieldIDs([]int{3}).Build())
	m1 := manifest("m1.avro", 1, spec0, ice.ManifestContentData, a, bb)
	m2 := manifest("m2.avro", 3, spec0, ice.ManifestContentData, c)
	m3 := manifest("m3.avro", 3, spec0, ice.ManifestContentDeletes, pos, e1)
	m4 := manifest("m4.avro", 3, spec1, ice.ManifestContentDeletes, e2)
	m1 = writeManifestList(t, local("metadata/snap-1.avro"), 1, 1, m1)[0]
	writeManifestList(t, local("metadata/snap-3.avro"), 3, 3, m1, m2, m3, m4)
	t1, t3 := int64(1_700_000_000_000), int64(1_700_000_100_000)
	meta := fmt.Sprintf(`{
  "format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": %q,
  "last-sequence-number": 3, "last-updated-ms": %d, "last-column-id": 3,
  "current-schema-id": 0,
  "schemas": [{"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": false, "type": "long"},
    {"id": 2, "name": "part", "required": false, "type": "string"},
    {"id": 3, "name": "val", "required": false, "type": "string"}]}],
  "default-spec-id": 0, "last-partition-id": 1000,
  "partition-specs": [
    {"spec-id": 0, "fields": [{"name": "part", "transform": "identity", "source-id": 2, "field-id": 1000}]},
    {"spec-id": 1, "fields": []}],
  "default-sort-order-id": 0, "sort-orders": [{"order-id": 0, "fields": []}],
  "properties": {}, "current-snapshot-id": 3,
  "snapshots": [
    {"snapshot-id": 1, "sequence-number": 1, "timestamp-ms": %d, "manifest-list": %q, "summary": {"operation": "append"}},
    {"snapshot-id": 3, "parent-snapshot-id": 1, "sequence-number": 3, "timestamp-ms": %d, "manifest-list": %q, "summary": {"operation": "overwrite"}}]
}`, declared, t3, t1, uri("metadata/snap-1.avro"), t3, uri("metadata/snap-3.avro"))
	if err := os.WriteFile(local("metadata/v3.metadata.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(local("metadata/version-hint.text"), []byte("3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return synthetic{dir: dir, first: 1, final: 3, firstTime: t1}
}

// writeManifest writes entries as a format v2 manifest of spec and schema, written by
// snapshot snap and holding content, at the local path p, and returns it as a manifest
// list names it (at name). An entry whose status is EXISTING is written as existing,
// others as added.
func writeManifest(t *testing.T, p, name string, spec ice.PartitionSpec, schema *ice.Schema, snap int64, content ice.ManifestContent, entries ...ice.ManifestEntry) ice.ManifestFile {
	t.Helper()
	var buf bytes.Buffer
	w, err := ice.NewManifestWriter(2, &buf, spec, schema, snap, ice.WithManifestWriterContent(content))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		add := w.Add
		if e.Status() == ice.EntryStatusEXISTING {
			add = w.Existing
		}
		if err := add(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	mf, err := w.ToManifestFile(name, int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return mf
}

// writeManifestList writes a format v2 manifest list of snapshot snap at sequence
// number seq at the local path p, and returns its manifests as read back: the list
// assigns them its sequence number.
func writeManifestList(t *testing.T, p string, snap, seq int64, files ...ice.ManifestFile) []ice.ManifestFile {
	t.Helper()
	var buf bytes.Buffer
	if err := ice.WriteManifestList(2, &buf, snap, nil, &seq, 0, files); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := ice.ReadManifestList(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readAll reads a listing's rows as "part id val" strings, sorted.
func readAll(t *testing.T, l *source.Listing, cols ...string) []string {
	t.Helper()
	if len(cols) == 0 {
		cols = []string{"part", "id", "val"}
	}
	ctx := context.Background()
	p, err := l.Plan(ctx, storage.Local{}, source.ScanSpec{Columns: cols}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range p.Morsels {
		err := p.Read(ctx, m, func(b *vector.Batch) error {
			if len(b.Cols) != len(cols) {
				return fmt.Errorf("%d columns, want %d", len(b.Cols), len(cols))
			}
			visit := func(i int) {
				var parts []string
				for _, c := range b.Cols {
					parts = append(parts, types.ValueAt(c, i).String())
				}
				out = append(out, strings.Join(parts, " "))
			}
			if b.Sel != nil {
				for _, i := range b.Sel {
					visit(int(i))
				}
			} else {
				for i := range b.Rows {
					visit(i)
				}
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

func TestDeletesApplied(t *testing.T) {
	tab := writeTable(t)
	ctx := context.Background()
	l, err := Open(ctx, storage.Local{}, tab.dir, source.AsOf{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"x 2 b", "x 4 d", "x 5 e", "x 6 f", "y 1 a", "y 2 b"}
	if got := readAll(t, l); !slices.Equal(got, want) {
		t.Errorf("rows = %q, want %q", got, want)
	}
	// The key columns of the equality deletes are read though not asked for.
	if got := readAll(t, l, "part"); !slices.Equal(got, []string{"x", "x", "x", "x", "y", "y"}) {
		t.Errorf("part alone = %q", got)
	}
	if n, err := l.Rows(ctx, storage.Local{}); err != nil || n != -1 {
		t.Errorf("Rows = %d, %v; want -1 (equality deletes)", n, err)
	}
	for _, f := range l.Files {
		if !strings.HasPrefix(f.Info.Path, tab.dir) {
			t.Errorf("path %q is not under %q", f.Info.Path, tab.dir)
		}
		if f.Fill[1].Null || f.Fill[1].S == "" {
			t.Errorf("%s: no partition value for part", f.Info.Path)
		}
		// A file is marked by the time of the snapshot that added it.
		want := time.UnixMilli(tab.firstTime)
		if strings.HasSuffix(f.Info.Path, "c.parquet") {
			want = time.UnixMilli(tab.firstTime + 100_000)
		}
		if _, err := f.Marker(); err != nil || !f.Info.ModTime.Equal(want) {
			t.Errorf("%s: modified %s (marker error %v), want %s", f.Info.Path, f.Info.ModTime, err, want)
		}
	}
	// Every file's spec keeps part by identity: a partition column, pruned by.
	if !slices.Equal(l.Partitions, []string{"part"}) {
		t.Errorf("partitions = %q", l.Partitions)
	}
	var c source.Counters
	filter := source.Predicate{Column: "part", Op: "=", Values: []types.Value{types.StringValue("y")}}
	if _, err := l.Plan(ctx, storage.Local{}, source.ScanSpec{Columns: []string{"id"}, Filters: []source.Predicate{filter}}, &c); err != nil {
		t.Fatal(err)
	}
	if got := c.FilesPrunedByPartition.Load(); got != 2 {
		t.Errorf("files pruned by partition = %d, want 2", got)
	}
	if l.Lake == nil || l.Lake.SnapshotID != tab.final || l.Lake.Version != 3 {
		t.Errorf("lake = %+v", l.Lake)
	}
}

func TestTimeTravel(t *testing.T) {
	tab := writeTable(t)
	ctx := context.Background()
	all := []string{"x 1 a", "x 2 b", "x 3 NULL", "x 4 d", "x 5 e", "y 1 a", "y 2 b", "y 3 c"}
	for _, at := range []source.AsOf{
		{Version: tab.first, HasVersion: true},
		{Time: time.UnixMilli(tab.firstTime + 1)},
		{Time: time.UnixMilli(tab.firstTime)},
	} {
		l, err := Open(ctx, storage.Local{}, filepath.Join(tab.dir, "metadata", "v3.metadata.json"), at)
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, l); !slices.Equal(got, all) {
			t.Errorf("%+v: rows = %q, want %q", at, got, all)
		}
		if n, err := l.Rows(ctx, storage.Local{}); err != nil || n != 8 {
			t.Errorf("%+v: Rows = %d, %v", at, n, err)
		}
	}
	for _, at := range []source.AsOf{{Version: 2, HasVersion: true}, {Time: time.UnixMilli(tab.firstTime - 1)}} {
		if _, err := Open(ctx, storage.Local{}, tab.dir, at); errs.CodeOf(err) != errs.Analysis {
			t.Errorf("%+v: err = %v, want an analysis error", at, err)
		}
	}
}

func TestMissingManifestList(t *testing.T) {
	tab := writeTable(t)
	if err := os.Remove(filepath.Join(tab.dir, "metadata", "snap-1.avro")); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), storage.Local{}, tab.dir, source.AsOf{Version: 1, HasVersion: true})
	if errs.CodeOf(err) != errs.CorruptSource || !strings.Contains(err.Error(), "snap-1.avro") {
		t.Errorf("err = %v, want a corrupt source naming the manifest list", err)
	}
}

func TestResolver(t *testing.T) {
	for _, c := range []struct {
		table, declared, path, want string
	}{
		// Relative location, found deeper: relative paths are under the same base.
		{"/r/duck/data/persistent/x/t", "data/persistent/x/t", "data/persistent/x/t/data/f.parquet", "/r/duck/data/persistent/x/t/data/f.parquet"},
		{"/r/duck/data/persistent/x/t", "data/persistent/x/t", "data/persistent/x/other/f.parquet", "/r/duck/data/persistent/x/other/f.parquet"},
		// "./lineitem_iceberg", paths relative to its parent.
		{"/r/iceberg/lineitem_iceberg", "./lineitem_iceberg", "lineitem_iceberg/metadata/m.avro", "/r/iceberg/lineitem_iceberg/metadata/m.avro"},
		// A location on another store, relative file paths.
		{"/r/duck/data/persistent/bq", "gs://bucket/table_name", "data/persistent/bq/data/f.parquet", "/r/duck/data/persistent/bq/data/f.parquet"},
		{"/r/duck/data/persistent/bq", "gs://bucket/table_name", "gs://bucket/table_name/data/f.parquet", "/r/duck/data/persistent/bq/data/f.parquet"},
		// file:// with a relative path after it.
		{"/r/duck/data/persistent/m/t", "file://data/persistent/m/t", "file://data/persistent/m/t/data/f.parquet", "/r/duck/data/persistent/m/t/data/f.parquet"},
		// A moved table; absolute paths elsewhere stay.
		{"/new/t", "s3://b/wh/t", "s3://b/wh/t/data/f.parquet", "/new/t/data/f.parquet"},
		{"/new/t", "s3://b/wh/t", "s3://b/other/f.parquet", "s3://b/other/f.parquet"},
		{"/wh/t", "/wh/t", "/wh/t/data/f.parquet", "/wh/t/data/f.parquet"},
		{"/wh/t", "file:///wh/t", "file:///wh/t/data/f.parquet", "/wh/t/data/f.parquet"},
		// Relative paths with no overlap: under the table.
		{"/wh/t", "s3://b/t", "data/f.parquet", "/wh/t/data/f.parquet"},
	} {
		if got := newResolver(c.table, c.declared).resolve(c.path); got != c.want {
			t.Errorf("table %q declared %q: %q resolves to %q, want %q", c.table, c.declared, c.path, got, c.want)
		}
	}
}

func TestVersionOf(t *testing.T) {
	for name, want := range map[string]int64{
		"v12.metadata.json": 12, "v2.gz.metadata.json": 2, "00003-3f1801a5.metadata.json": 3,
		"v1749025517.metadata.json": 1749025517, "v4.metadata.json.gz": 4,
	} {
		if got, ok := versionOf(name); !ok || got != want {
			t.Errorf("versionOf(%q) = %d, %t", name, got, ok)
		}
	}
	for _, name := range []string{"vfinal.metadata.json", "snap-1.avro", "version-hint.text"} {
		if _, ok := versionOf(name); ok {
			t.Errorf("versionOf(%q) found a version", name)
		}
	}
}

// unitDir is the unit fixtures of the shared test data, or the test is skipped.
func unitDir(t testing.TB) string {
	t.Helper()
	return filepath.Join(shareddata.Dir(t), "iceberg", "unit")
}

func TestMetadataFixtures(t *testing.T) {
	dir := filepath.Join(unitDir(t), "iceberg-rust-testdata", "table_metadata")
	valid := map[string]bool{
		"TableMetadataV1Compat.json": true, "TableMetadataV1Valid.json": true, "TableMetadataV2Valid.json": true,
		"TableMetadataV2ValidMinimal.json": true, "TableMetadataV3ValidEncryption.json": true, "TableMetadataV3ValidMinimal.json": true,
		"TableMetadataV1PartitionSpecsWithoutDefaultId.json": true, "TableMetadataV1SchemasWithoutCurrentId.json": true,
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	names = append(names, filepath.Join(unitDir(t), "..", "duckdb-iceberg", "data", "persistent", "bad_data", "bad_iceberg_metadata.json"))
	for _, p := range names {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = parseMetadata(p, b)
		switch {
		case valid[filepath.Base(p)] && err != nil:
			t.Errorf("%s: %v", filepath.Base(p), err)
		case !valid[filepath.Base(p)] && err == nil:
			t.Errorf("%s: invalid metadata accepted", filepath.Base(p))
		case err != nil && (errs.CodeOf(err) != errs.CorruptSource || !strings.Contains(err.Error(), p)):
			t.Errorf("%s: %v is not a corrupt source naming the file", filepath.Base(p), err)
		}
	}
	// Through Open too: the bad file is named.
	bad := filepath.Join(unitDir(t), "..", "duckdb-iceberg", "data", "persistent", "bad_data", "bad_iceberg_metadata.json")
	if _, err := Open(context.Background(), storage.Local{}, bad, source.AsOf{}); errs.CodeOf(err) != errs.CorruptSource {
		t.Errorf("Open(bad) = %v", err)
	}
}

func TestAvroReader(t *testing.T) {
	p := filepath.Join(shareddata.Dir(t), "iceberg", "duckdb-iceberg", "data", "persistent", "equality_delete_extra_column",
		"warehouse", "ns", "t", "metadata", "snap-9876543210123456789-1-a6381c94-219a-4ddf-83b5-54875a7d3775.avro")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	values, meta, err := readAvroFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(meta["avro.codec"]) != "deflate" || len(values) != 2 {
		t.Fatalf("codec %q, %d values", meta["avro.codec"], len(values))
	}
	var ids []int64
	for _, v := range values {
		ids = append(ids, v.(map[string]any)["added_snapshot_id"].(int64))
	}
	// The writer zig-zag encoded 9876543210123456789, beyond a long, in 65 bits
	// (the sign it took for it set the lowest): decoded, the low 64 bits of the value.
	u := uint64(9876543210123456789)
	if want := ^int64(u); !slices.Contains(ids, want) {
		t.Errorf("snapshot ids %v lack %d", ids, want)
	}
	// A file cut short is an error, or (cut after a block) fewer values.
	for n := range len(b) {
		if v, _, err := readAvroFile(b[:n]); err == nil && len(v) >= len(values) {
			t.Fatalf("truncated to %d bytes: all %d values", n, len(v))
		}
	}
	// Ordinary longs round-trip.
	for _, v := range []int64{0, -1, 1, 63, -64, 1 << 40, math.MaxInt64, math.MinInt64} {
		z := uint64(v<<1) ^ uint64(v>>63)
		d := &avroDecoder{b: binary.AppendUvarint(nil, z)}
		if got, err := d.long(); err != nil || got != v {
			t.Errorf("long %d decodes as %d, %v", v, got, err)
		}
	}
}

func TestFileMetaBounds(t *testing.T) {
	le32 := func(v int32) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }
	le64 := func(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }
	f64 := func(v float64) []byte { return binary.LittleEndian.AppendUint64(nil, math.Float64bits(v)) }
	var sch schema
	err := json.Unmarshal([]byte(`{"type": "struct", "schema-id": 0, "fields": [
		{"id": 1, "name": "i", "required": false, "type": "int"},
		{"id": 2, "name": "l", "required": false, "type": "long"},
		{"id": 3, "name": "short", "required": false, "type": "string"},
		{"id": 4, "name": "long", "required": false, "type": "string"},
		{"id": 5, "name": "d", "required": false, "type": "double"},
		{"id": 6, "name": "nan", "required": false, "type": "double"},
		{"id": 7, "name": "dec", "required": false, "type": "decimal(9, 2)"},
		{"id": 8, "name": "bad", "required": false, "type": "long"}]}`), &sch)
	if err != nil {
		t.Fatal(err)
	}
	b := &builder{md: &metadata{}}
	b.fields = sch.Fields
	for _, f := range b.fields {
		dt, err := arrowType(f.Type, 0)
		if err != nil {
			t.Fatal(err)
		}
		b.dts = append(b.dts, dt)
	}
	long := strings.Repeat("z", maxTruncatedBound)
	df := &contentFile{path: "f.parquet", format: "PARQUET", records: 10, size: 100,
		nullCounts: map[int]int64{1: 2, 2: 11}, nanCounts: map[int]int64{5: 0, 6: 3},
		lower: map[int][]byte{1: le32(-5), 2: le32(7), 3: []byte("a"), 4: []byte("a"), 5: f64(-1.5), 6: f64(0), 7: {0xff, 0x38}, 8: {1, 2, 3}},
		upper: map[int][]byte{1: le32(9), 2: le64(1 << 40), 3: []byte("b"), 4: []byte(long), 5: f64(2.5), 6: f64(1), 7: {0x01, 0x00}, 8: le64(1)}}
	m := b.fileMeta(df, nil)
	if m.Rows != 10 {
		t.Errorf("rows = %d", m.Rows)
	}
	want := []struct {
		bounds   bool
		min, max string
		nulls    int64 // -1: none stated (or not believable)
	}{
		{true, "-5", "9", 2},
		{true, "7", "1099511627776", -1}, // an int bound of a promoted column; 11 NULLs of 10 rows is no count
		{true, "a", "b", -1},
		{false, "", "", -1}, // the upper bound may have been truncated
		{true, "-1.5", "2.5", -1},
		{false, "", "", -1}, // NaN in the column: no bound above
		{true, "-2.00", "2.56", -1},
		{false, "", "", -1}, // a lower bound of three bytes is no long
	}
	for i, w := range want {
		cs := m.Columns[i]
		if cs.HasMinMax != w.bounds || (w.bounds && (cs.Min.String() != w.min || cs.Max.String() != w.max)) {
			t.Errorf("%s: bounds %t [%s, %s], want %t [%s, %s]", b.fields[i].Name, cs.HasMinMax, cs.Min, cs.Max, w.bounds, w.min, w.max)
		}
		if got := map[bool]int64{false: -1, true: cs.NullCount}[cs.HasNullCount]; got != w.nulls {
			t.Errorf("%s: null count %d, want %d", b.fields[i].Name, got, w.nulls)
		}
	}
}

// TestAvroBombs checks that counts the bytes do not back are refused before they
// are acted on.
func TestAvroBombs(t *testing.T) {
	zz := func(b []byte, v int64) []byte { return binary.AppendUvarint(b, uint64(v<<1)^uint64(v>>63)) }
	file := func(schema string, count int64, data []byte) []byte {
		b := append([]byte{}, avroMagic...)
		b = zz(b, 1)
		b = zz(b, int64(len("avro.schema")))
		b = append(b, "avro.schema"...)
		b = zz(b, int64(len(schema)))
		b = append(b, schema...)
		b = zz(b, 0)
		sync := bytes.Repeat([]byte{7}, 16)
		b = append(b, sync...)
		b = zz(b, count)
		b = zz(b, int64(len(data)))
		b = append(b, data...)
		return append(b, sync...)
	}
	if v, _, err := readAvroFile(file(`"long"`, 2, zz(zz(nil, 5), -6))); err != nil || len(v) != 2 || v[1].(int64) != -6 {
		t.Fatalf("two longs: %v, %v", v, err)
	}
	for name, b := range map[string][]byte{
		"a block of 2^40 nulls":          file(`"null"`, 1<<40, nil),
		"more nulls than allowed":        file(`"null"`, avroMaxItems+1, nil),
		"an array of 2^40 nulls":         file(`{"type": "array", "items": "null"}`, 1, zz(nil, 1<<40)),
		"an array of 2^40 longs":         file(`{"type": "array", "items": "long"}`, 1, zz(nil, 1<<40)),
		"a string longer than the block": file(`"string"`, 1, zz(nil, 1000)),
		"a union branch out of range":    file(`["null", "long"]`, 1, zz(nil, 2)),
		"a recursive record":             file(`{"type": "record", "name": "r", "fields": [{"name": "x", "type": ["null", "r"]}]}`, 1, bytes.Repeat(zz(nil, 1), 200)),
	} {
		if _, _, err := readAvroFile(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestSkipsFilesByManifestBounds checks that the manifests' bounds and null counts
// skip files before their footers are read (null_stats: three files of ids 1-3, 4-6,
// 7-9).
func TestSkipsFilesByManifestBounds(t *testing.T) {
	loc := filepath.Join(shareddata.Dir(t), "iceberg", "duckdb-iceberg", "data", "persistent", "null_stats", "default", "test_nulls")
	ctx := context.Background()
	l, err := Open(ctx, storage.Local{}, loc, source.AsOf{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Files) != 3 {
		t.Fatalf("%d files", len(l.Files))
	}
	for _, c := range []struct {
		f       source.Predicate
		skipped int64
	}{
		{source.Predicate{Column: "id", Op: ">=", Values: []types.Value{{Type: types.Int64, I: 7}}}, 2},
		{source.Predicate{Column: "id", Op: "=", Values: []types.Value{{Type: types.Int64, I: 5}}}, 2},
		{source.Predicate{Column: "id", Op: ">", Values: []types.Value{{Type: types.Int64, I: 9}}}, 3},
		{source.Predicate{Column: "id", Op: "is_null"}, 0}, // the manifests state no null counts
		{source.Predicate{Column: "id", Op: "<=", Values: []types.Value{{Type: types.Int64, I: 9}}}, 0},
	} {
		var n source.Counters
		if _, err := l.Plan(ctx, storage.Local{}, source.ScanSpec{Columns: []string{"id"}, Filters: []source.Predicate{c.f}}, &n); err != nil {
			t.Fatal(err)
		}
		if got := n.FilesSkipped.Load(); got != c.skipped {
			t.Errorf("%+v: %d files skipped, want %d", c.f, got, c.skipped)
		}
	}
}

// TestRewrittenMetadataIsReadAgain: a metadata file replaced under the same name,
// with the same size, is parsed again rather than taken from the cache of parsed
// metadata (its change marker differs), and the second open of an unchanged file
// gives the same listing.
func TestRewrittenMetadataIsReadAgain(t *testing.T) {
	tab := writeTable(t)
	ctx := context.Background()
	name := filepath.Join(tab.dir, "metadata", "v3.metadata.json")
	for range 2 {
		l, err := Open(ctx, storage.Local{}, tab.dir, source.AsOf{})
		if err != nil {
			t.Fatal(err)
		}
		if l.Lake.SnapshotID != tab.final {
			t.Fatalf("snapshot %d, want %d", l.Lake.SnapshotID, tab.final)
		}
	}
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	back := bytes.Replace(b, []byte(`"current-snapshot-id": 3`), []byte(`"current-snapshot-id": 1`), 1)
	if bytes.Equal(back, b) || len(back) != len(b) {
		t.Fatal("the metadata was not rewritten")
	}
	if err := os.WriteFile(name+".tmp", back, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(name+".tmp", name); err != nil {
		t.Fatal(err)
	}
	l, err := Open(ctx, storage.Local{}, tab.dir, source.AsOf{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Lake.SnapshotID != tab.first {
		t.Errorf("after the rewrite: snapshot %d, want %d", l.Lake.SnapshotID, tab.first)
	}
}
