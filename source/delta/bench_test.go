package delta_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/loredb/lore/internal/bigtable"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/loredb/lore"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/source/delta"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
)

// The big table of the planning benchmarks: bigFiles Parquet files of bigRowsPerFile
// ids each (file i holds i*100 … i*100+99, so a point query can skip by stats),
// added bigFilesPerCommit at a time, with a classic checkpoint at bigCheckpoint.
const (
	bigFiles          = 10_000
	bigRowsPerFile    = 100
	bigFilesPerCommit = 10
	bigCheckpoint     = 990
	// bigName is the cache directory under os.TempDir(); change its version when
	// the layout changes, so that an old cache is not reused.
	bigName = "lore-bench-delta-10k-v1"
)

var bigCache bigtable.Cached

// bigTable returns the directory of the big Delta table, writing it first when the
// cache does not hold it.
func bigTable(tb testing.TB) string {
	return bigCache.Dir(tb, bigName, filepath.Join("_delta_log", "_last_checkpoint"), writeBigTable)
}

const bigSchemaString = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`

// bigAdd is the add action of file i.
type bigAdd struct {
	Path             string            `json:"path"`
	PartitionValues  map[string]string `json:"partitionValues"`
	Size             int64             `json:"size"`
	ModificationTime int64             `json:"modificationTime"`
	DataChange       bool              `json:"dataChange"`
	Stats            string            `json:"stats"`
}

func writeBigTable(root string) error {
	logDir := filepath.Join(root, "_delta_log")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return err
	}
	adds := make([]bigAdd, bigFiles)
	for i := range bigFiles {
		first := int64(i * bigRowsPerFile)
		file, err := bigtable.IDFile(first, bigRowsPerFile)
		if err != nil {
			return err
		}
		name := fmt.Sprintf("part-%05d.parquet", i)
		if err := os.WriteFile(filepath.Join(root, name), file, 0o644); err != nil {
			return err
		}
		lo, hi := first, first+bigRowsPerFile-1
		adds[i] = bigAdd{
			Path: name, PartitionValues: map[string]string{}, Size: int64(len(file)),
			ModificationTime: 1_700_000_000_000 + int64(i), DataChange: true,
			Stats: fmt.Sprintf(`{"numRecords":%d,"minValues":{"id":%d},"maxValues":{"id":%d},"nullCount":{"id":0}}`, bigRowsPerFile, lo, hi),
		}
	}
	protocol := map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}
	meta := map[string]any{"id": "bench-10k", "format": map[string]any{"provider": "parquet", "options": map[string]string{}},
		"schemaString": bigSchemaString, "partitionColumns": []string{}, "configuration": map[string]string{}, "createdTime": 1_700_000_000_000}
	for v := range bigFiles / bigFilesPerCommit {
		var lines []string
		line := func(k string, a any) error {
			b, err := json.Marshal(map[string]any{k: a})
			lines = append(lines, string(b))
			return err
		}
		if err := line("commitInfo", map[string]any{"timestamp": 1_700_000_000_000 + int64(v)*1000, "operation": "WRITE"}); err != nil {
			return err
		}
		if v == 0 {
			if err := line("protocol", protocol); err != nil {
				return err
			}
			if err := line("metaData", meta); err != nil {
				return err
			}
		}
		for _, a := range adds[v*bigFilesPerCommit : (v+1)*bigFilesPerCommit] {
			if err := line("add", a); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(logDir, fmt.Sprintf("%020d.json", v)), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			return err
		}
	}
	if err := writeBigCheckpoint(logDir, protocol, meta, adds[:(bigCheckpoint+1)*bigFilesPerCommit]); err != nil {
		return err
	}
	last := fmt.Sprintf(`{"version":%d,"size":%d}`, bigCheckpoint, (bigCheckpoint+1)*bigFilesPerCommit+2)
	return os.WriteFile(filepath.Join(logDir, "_last_checkpoint"), []byte(last+"\n"), 0o644)
}

// bigCheckpointSchema is the classic checkpoint's schema as the Delta protocol
// states it, for the actions the table has.
var bigCheckpointSchema = func() *arrow.Schema {
	str := arrow.BinaryTypes.String
	strMap := arrow.MapOf(str, str)
	return arrow.NewSchema([]arrow.Field{
		{Name: "add", Nullable: true, Type: arrow.StructOf(
			arrow.Field{Name: "path", Type: str, Nullable: true},
			arrow.Field{Name: "partitionValues", Type: strMap, Nullable: true},
			arrow.Field{Name: "size", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			arrow.Field{Name: "modificationTime", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			arrow.Field{Name: "dataChange", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
			arrow.Field{Name: "stats", Type: str, Nullable: true},
		)},
		{Name: "metaData", Nullable: true, Type: arrow.StructOf(
			arrow.Field{Name: "id", Type: str, Nullable: true},
			arrow.Field{Name: "format", Nullable: true, Type: arrow.StructOf(
				arrow.Field{Name: "provider", Type: str, Nullable: true},
				arrow.Field{Name: "options", Type: strMap, Nullable: true},
			)},
			arrow.Field{Name: "schemaString", Type: str, Nullable: true},
			arrow.Field{Name: "partitionColumns", Type: arrow.ListOf(str), Nullable: true},
			arrow.Field{Name: "configuration", Type: strMap, Nullable: true},
			arrow.Field{Name: "createdTime", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		)},
		{Name: "protocol", Nullable: true, Type: arrow.StructOf(
			arrow.Field{Name: "minReaderVersion", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			arrow.Field{Name: "minWriterVersion", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		)},
	}, nil)
}()

// writeBigCheckpoint writes the checkpoint of version bigCheckpoint: one action per
// row (protocol, metaData, then the adds), the other columns NULL. The rows are
// built as JSON (maps as lists of key/value objects, Arrow's JSON form).
func writeBigCheckpoint(logDir string, protocol, meta map[string]any, adds []bigAdd) error {
	var rows bytes.Buffer
	enc := json.NewEncoder(&rows)
	// Arrow's JSON form of a map is a list of {"key", "value"} objects; every map of
	// this table is empty.
	m := map[string]any{"id": meta["id"], "format": map[string]any{"provider": "parquet", "options": []any{}},
		"schemaString": meta["schemaString"], "partitionColumns": []string{}, "configuration": []any{}, "createdTime": meta["createdTime"]}
	if err := enc.Encode(map[string]any{"protocol": protocol}); err != nil {
		return err
	}
	if err := enc.Encode(map[string]any{"metaData": m}); err != nil {
		return err
	}
	for _, a := range adds {
		row := map[string]any{"path": a.Path, "partitionValues": []any{}, "size": a.Size,
			"modificationTime": a.ModificationTime, "dataChange": a.DataChange, "stats": a.Stats}
		if err := enc.Encode(map[string]any{"add": row}); err != nil {
			return err
		}
	}
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, bigCheckpointSchema, &rows, array.WithMultipleDocs())
	if err != nil {
		return fmt.Errorf("checkpoint rows: %w", err)
	}
	defer rec.Release()
	tbl := array.NewTableFromRecords(bigCheckpointSchema, []arrow.RecordBatch{rec})
	defer tbl.Release()
	var buf bytes.Buffer
	props := pq.NewWriterProperties(pq.WithCompression(compress.Codecs.Snappy), pq.WithStats(true))
	if err := pqarrow.WriteTable(tbl, &buf, rec.NumRows(), props, pqarrow.DefaultWriterProps()); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(logDir, fmt.Sprintf("%020d.checkpoint.parquet", bigCheckpoint)), buf.Bytes(), 0o644)
}

// TestBigTableReads checks the benchmarks' table: its checkpoint and the commits
// after it give every file with its stats, and the engine counts every row.
func TestBigTableReads(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 10,000 files the first time")
	}
	dir := bigTable(t)
	ctx := context.Background()
	delta.DropCachedSnapshots()
	l, err := delta.Open(ctx, storage.Local{}, dir, source.AsOf{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Files) != bigFiles || l.Lake == nil || l.Lake.Version != bigFiles/bigFilesPerCommit-1 {
		t.Fatalf("%d files at version %+v, want %d at %d", len(l.Files), l.Lake, bigFiles, bigFiles/bigFilesPerCommit-1)
	}
	for _, f := range l.Files {
		var i int64
		if _, err := fmt.Sscanf(filepath.Base(f.Info.Path), "part-%05d.parquet", &i); err != nil {
			t.Fatalf("unexpected file %q", f.Info.Path)
		}
		m := f.Meta
		if m == nil || m.Rows != bigRowsPerFile || len(m.Columns) != 1 || !m.Columns[0].HasMinMax ||
			m.Columns[0].Min.I != i*bigRowsPerFile || m.Columns[0].Max.I != i*bigRowsPerFile+bigRowsPerFile-1 {
			t.Fatalf("%s: stats %+v", f.Info.Path, m)
		}
	}
	e, err := lore.Open(ctx, lore.Options{Home: t.TempDir(), NoAutoRefresh: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Query(ctx, fmt.Sprintf("CREATE TABLE t WITH (location = %s, format = 'delta')", types.QuoteString(dir)), nil); err != nil {
		t.Fatal(err)
	}
	res, err := e.Query(ctx, "SELECT count(*), count(DISTINCT id), min(id), max(id) FROM t", map[string]string{"use_statistics": "false"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for c := range 4 {
		got = append(got, types.ValueAt(res.Batches[0].Column(c), 0).String())
	}
	if want := []string{"1000000", "1000000", "0", "999999"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("count(*), count(DISTINCT id), min, max = %v, want %v", got, want)
	}
}

// BenchmarkDeltaVersion is what each statement pays to establish the version of a
// table whose log has not moved: list _delta_log and find the cached snapshot.
func BenchmarkDeltaVersion(b *testing.B) {
	dir := bigTable(b)
	ctx := context.Background()
	if _, err := delta.Open(ctx, storage.Local{}, dir, source.AsOf{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := delta.Open(ctx, storage.Local{}, dir, source.AsOf{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDeltaSnapshot is a cold snapshot: the checkpoint (9,910 adds) read and
// the nine commits after it replayed.
func BenchmarkDeltaSnapshot(b *testing.B) {
	dir := bigTable(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		delta.DropCachedSnapshots()
		if _, err := delta.Open(ctx, storage.Local{}, dir, source.AsOf{}); err != nil {
			b.Fatal(err)
		}
	}
}
