package iceberg

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"github.com/loredb/lore/internal/bigtable"
	"os"
	"path/filepath"
	"testing"

	ice "github.com/apache/iceberg-go"

	"github.com/loredb/lore/source"
	"github.com/loredb/lore/storage"
)

// The big table of the planning benchmarks: bigFiles Parquet files of bigRowsPerFile
// ids each (file i holds i*100 … i*100+99, so a point query can skip by bounds), in
// one snapshot whose manifest list names bigManifests manifests of equal share.
const (
	bigFiles       = 10_000
	bigRowsPerFile = 100
	bigManifests   = 4
	// bigName is the cache directory under os.TempDir(); its version changes when
	// the layout does, so that an old cache is not reused. The engine's benchmarks
	// read the table from there.
	bigName = "lore-bench-iceberg-10k-v1"
)

var bigCache bigtable.Cached

// bigTable returns the directory of the big Iceberg table, writing it first when the
// cache does not hold it; its metadata names the files by paths relative to the
// table, so the cache's rename moves it whole.
func bigTable(tb testing.TB) string {
	return bigCache.Dir(tb, bigName, filepath.Join("metadata", "version-hint.text"), writeBigTable)
}

func writeBigTable(root string) error {
	for _, d := range []string{"data", "metadata"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	iceSchema := ice.NewSchema(0, ice.NestedField{ID: 1, Name: "id", Type: ice.PrimitiveTypes.Int64})
	spec := *ice.UnpartitionedSpec
	const snap = int64(1)
	entries := make([]ice.ManifestEntry, bigFiles)
	for i := range bigFiles {
		first := int64(i * bigRowsPerFile)
		file, err := bigtable.IDFile(first, bigRowsPerFile)
		if err != nil {
			return err
		}
		name := fmt.Sprintf("part-%05d.parquet", i)
		if err := os.WriteFile(filepath.Join(root, "data", name), file, 0o644); err != nil {
			return err
		}
		le := func(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }
		df, err := ice.NewDataFileBuilder(spec, ice.EntryContentData, "t/data/"+name, ice.ParquetFile, map[int]any{}, nil, nil, bigRowsPerFile, int64(len(file)))
		if err != nil {
			return err
		}
		df = df.ValueCounts(map[int]int64{1: bigRowsPerFile}).NullValueCounts(map[int]int64{1: 0}).
			LowerBoundValues(map[int][]byte{1: le(first)}).UpperBoundValues(map[int][]byte{1: le(first + bigRowsPerFile - 1)})
		s := snap
		entries[i] = ice.NewManifestEntry(ice.EntryStatusADDED, &s, nil, nil, df.Build())
	}
	var manifests []ice.ManifestFile
	per := bigFiles / bigManifests
	for m := range bigManifests {
		name := fmt.Sprintf("manifest-%d.avro", m)
		var buf bytes.Buffer
		mf, err := ice.WriteManifest("t/metadata/"+name, &buf, 2, spec, iceSchema, snap, entries[m*per:(m+1)*per])
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(root, "metadata", name), buf.Bytes(), 0o644); err != nil {
			return err
		}
		manifests = append(manifests, mf)
	}
	var lbuf bytes.Buffer
	seq := int64(1)
	if err := ice.WriteManifestList(2, &lbuf, snap, nil, &seq, 0, manifests); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, "metadata", "snap-1.avro"), lbuf.Bytes(), 0o644); err != nil {
		return err
	}
	schemaJSON, err := json.Marshal(iceSchema)
	if err != nil {
		return err
	}
	meta := map[string]any{
		"format-version": 2, "table-uuid": "9c1e6f0a-2b7d-4f3e-8a5c-1d2e3f4a5b6c",
		// Relative: the table is moved into place after it is written.
		"location":             "t",
		"last-sequence-number": 1, "last-updated-ms": 1_700_000_000_000, "last-column-id": 1,
		"current-schema-id": 0, "schemas": []json.RawMessage{schemaJSON},
		"default-spec-id": 0, "last-partition-id": 999, "partition-specs": []any{map[string]any{"spec-id": 0, "fields": []any{}}},
		"default-sort-order-id": 0, "sort-orders": []any{map[string]any{"order-id": 0, "fields": []any{}}},
		"properties":          map[string]string{"schema.name-mapping.default": `[{"field-id":1,"names":["id"]}]`},
		"current-snapshot-id": snap,
		"snapshots": []any{map[string]any{"snapshot-id": snap, "sequence-number": 1, "timestamp-ms": 1_700_000_000_000,
			"manifest-list": "t/metadata/snap-1.avro", "summary": map[string]any{"operation": "append"}}},
	}
	b, err := json.MarshalIndent(meta, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, "metadata", "v1.metadata.json"), b, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, "metadata", "version-hint.text"), []byte("1"), 0o644)
}

// TestBigTableReads checks the benchmarks' table: its snapshot gives every file with
// its rows and bounds.
func TestBigTableReads(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 10,000 files the first time")
	}
	dir := bigTable(t)
	DropCachedSnapshots()
	l, err := Open(context.Background(), storage.Local{}, dir, source.AsOf{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Files) != bigFiles || l.Lake == nil || l.Lake.SnapshotID != 1 {
		t.Fatalf("%d files at %+v, want %d at snapshot 1", len(l.Files), l.Lake, bigFiles)
	}
	for _, f := range l.Files {
		var i int64
		if _, err := fmt.Sscanf(filepath.Base(f.Info.Path), "part-%05d.parquet", &i); err != nil || filepath.Dir(f.Info.Path) != filepath.Join(dir, "data") {
			t.Fatalf("unexpected file %q", f.Info.Path)
		}
		m := f.Meta
		if m == nil || m.Rows != bigRowsPerFile || len(m.Columns) != 1 || !m.Columns[0].HasMinMax ||
			m.Columns[0].Min.I != i*bigRowsPerFile || m.Columns[0].Max.I != i*bigRowsPerFile+bigRowsPerFile-1 {
			t.Fatalf("%s: stats %+v", f.Info.Path, m)
		}
	}
}

// BenchmarkIcebergWarm is what each statement pays to open a table whose metadata
// has not moved: find the metadata file through the version hint and take the
// cached snapshot.
func BenchmarkIcebergWarm(b *testing.B) {
	dir := bigTable(b)
	ctx := context.Background()
	if _, err := Open(ctx, storage.Local{}, dir, source.AsOf{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Open(ctx, storage.Local{}, dir, source.AsOf{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIcebergCold is a cold snapshot: the metadata file, the manifest list and
// the four manifests of 2,500 entries each read and every entry turned into a file.
func BenchmarkIcebergCold(b *testing.B) {
	dir := bigTable(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		DropCachedSnapshots()
		if _, err := Open(ctx, storage.Local{}, dir, source.AsOf{}); err != nil {
			b.Fatal(err)
		}
	}
}
