package lore_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	pqfile "github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/puffin"

	"github.com/loredb/lore"
	"github.com/loredb/lore/gen"
	"github.com/loredb/lore/source/deletes"
	"github.com/loredb/lore/types"
)

// icebergCommit writes an Iceberg format v2 table at root with one snapshot adding
// files (paths relative to root/data): the schema is fields (then a `day` DATE column,
// partitioned by identity, when byDay — its values are in the manifest alone, not in
// the files), each file stated with its rows, null counts and ts bounds from its Delta
// stats. The data files carry no field ids: the name mapping names their columns.
func icebergCommit(t *testing.T, root string, fields []arrow.Field, byDay bool, files []deltaFile) {
	t.Helper()
	icebergCommitAt(t, root, "t", fields, byDay, files)
}

// icebergCommitAt is icebergCommit with the table's declared location loc, which
// every path its metadata names starts with: "t" (relative), or an absolute path or
// URI, as a writer at that location leaves them.
func icebergCommitAt(t *testing.T, root, loc string, fields []arrow.Field, byDay bool, files []deltaFile) {
	t.Helper()
	var nested []ice.NestedField
	var mapping []map[string]any
	for i, f := range fields {
		var typ ice.Type
		switch f.Type.ID() {
		case arrow.TIMESTAMP:
			typ = ice.PrimitiveTypes.Timestamp
		case arrow.INT64:
			typ = ice.PrimitiveTypes.Int64
		case arrow.INT32:
			typ = ice.PrimitiveTypes.Int32
		case arrow.FLOAT64:
			typ = ice.PrimitiveTypes.Float64
		case arrow.STRING:
			typ = ice.PrimitiveTypes.String
		case arrow.BOOL:
			typ = ice.PrimitiveTypes.Bool
		default:
			t.Fatalf("no Iceberg type for %s", f.Type)
		}
		nested = append(nested, ice.NestedField{ID: i + 1, Name: f.Name, Type: typ})
		mapping = append(mapping, map[string]any{"field-id": i + 1, "names": []string{f.Name}})
	}
	dayID := len(fields) + 1
	spec := *ice.UnpartitionedSpec
	if byDay {
		nested = append(nested, ice.NestedField{ID: dayID, Name: "day", Type: ice.PrimitiveTypes.Date})
		spec = ice.NewPartitionSpecID(0, ice.PartitionField{SourceIDs: []int{dayID}, FieldID: 1000, Name: "day", Transform: ice.IdentityTransform{}})
	}
	schema := ice.NewSchema(0, nested...)
	const snap = int64(1)
	var entries []ice.ManifestEntry
	tsID, noneID := 1, 0
	for i, f := range fields {
		if f.Name == "none" {
			noneID = i + 1
		}
	}
	for _, f := range files {
		s := snap
		entries = append(entries, ice.NewManifestEntry(ice.EntryStatusADDED, &s, nil, nil, icebergDataFileAt(t, root, loc, spec, byDay, tsID, noneID, f)))
	}
	mdir := filepath.Join(root, "metadata")
	if err := os.MkdirAll(mdir, 0o755); err != nil {
		t.Fatal(err)
	}
	var mbuf bytes.Buffer
	mf, err := ice.WriteManifest(loc+"/metadata/m0.avro", &mbuf, 2, spec, schema, snap, entries)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mdir, "m0.avro"), mbuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var lbuf bytes.Buffer
	seq := int64(1)
	if err := ice.WriteManifestList(2, &lbuf, snap, nil, &seq, 0, []ice.ManifestFile{mf}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mdir, "snap-1.avro"), lbuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	schemaJSON, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	mappingJSON, _ := json.Marshal(mapping)
	meta := map[string]any{
		"format-version": 2, "table-uuid": "0d2c7b4e-5a57-4c36-9c5e-2f0f4f6e8a11",
		// Relative, as some writers leave it: paths are taken relative to its base.
		"location":             loc,
		"last-sequence-number": 1, "last-updated-ms": 1_700_000_000_000, "last-column-id": len(nested),
		"current-schema-id": 0, "schemas": []json.RawMessage{schemaJSON},
		"default-spec-id": 0, "last-partition-id": 1000, "partition-specs": []json.RawMessage{specJSON},
		"default-sort-order-id": 0, "sort-orders": []any{map[string]any{"order-id": 0, "fields": []any{}}},
		"properties":          map[string]string{"schema.name-mapping.default": string(mappingJSON)},
		"current-snapshot-id": snap,
		"snapshots": []any{map[string]any{"snapshot-id": snap, "sequence-number": 1, "timestamp-ms": 1_700_000_000_000,
			"manifest-list": loc + "/metadata/snap-1.avro", "summary": map[string]any{"operation": "append"}}},
	}
	b, err := json.MarshalIndent(meta, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mdir, "v1.metadata.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mdir, "version-hint.text"), []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// icebergDataFile states one data file of root/data: its rows, null counts and ts
// bounds from its Delta stats, or, without stats, its rows from its footer alone.
func icebergDataFile(t *testing.T, root string, spec ice.PartitionSpec, byDay bool, tsID, noneID int, f deltaFile) ice.DataFile {
	t.Helper()
	return icebergDataFileAt(t, root, "t", spec, byDay, tsID, noneID, f)
}

// icebergDataFileAt is icebergDataFile of a table whose declared location is loc.
func icebergDataFileAt(t *testing.T, root, loc string, spec ice.PartitionSpec, byDay bool, tsID, noneID int, f deltaFile) ice.DataFile {
	t.Helper()
	full := filepath.Join(root, "data", f.path)
	info, err := os.Stat(full)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		NumRecords int64             `json:"numRecords"`
		Min        map[string]string `json:"minValues"`
		Max        map[string]string `json:"maxValues"`
	}
	if f.stats == "" {
		pf, err := pqfile.OpenParquetFile(full, false)
		if err != nil {
			t.Fatal(err)
		}
		st.NumRecords = pf.NumRows()
		pf.Close()
	} else if err := json.Unmarshal([]byte(f.stats), &st); err != nil {
		t.Fatal(err)
	}
	part := map[int]any{}
	if byDay {
		var v any // NULL
		if d := f.parts["day"]; d != nil {
			day, err := time.Parse("2006-01-02", *d)
			if err != nil {
				t.Fatal(err)
			}
			v = ice.Date(day.Unix() / 86400)
		}
		part[1000] = v
	}
	micros := func(s string, up bool) []byte {
		ts, err := time.Parse("2006-01-02T15:04:05.000", s)
		if err != nil {
			t.Fatal(err)
		}
		v := ts.UnixMicro()
		if up {
			v += 999 // the stats keep milliseconds
		}
		return binary.LittleEndian.AppendUint64(nil, uint64(v))
	}
	b, err := ice.NewDataFileBuilder(spec, ice.EntryContentData, loc+"/data/"+f.path, ice.ParquetFile, part, nil, nil, st.NumRecords, info.Size())
	if err != nil {
		t.Fatal(err)
	}
	if f.stats != "" {
		b = b.NullValueCounts(map[int]int64{tsID: 0, noneID: st.NumRecords}).
			LowerBoundValues(map[int][]byte{tsID: micros(st.Min["ts"], false)}).
			UpperBoundValues(map[int][]byte{tsID: micros(st.Max["ts"], true)})
	}
	return b.Build()
}

// icebergSnapshot commits the next snapshot of the unpartitioned Iceberg table
// icebergCommit wrote at root, as a writer appending or deleting does: a new metadata
// file vN+1 whose snapshot's manifest list keeps every manifest of the current one and
// adds a data manifest for the files added (paths relative to root/data), a delete
// manifest for one position delete file of the positions deleted (by data file path),
// and one for a Puffin file of deletion vectors of the positions in dvs (which makes
// the table format version 3, as a writer upgrading it does), then the version hint
// names it. It returns the new snapshot's id, past 32 bits as real writers' ids are.
func icebergSnapshot(t *testing.T, root string, added []deltaFile, deleted, dvs map[string][]int64) int64 {
	t.Helper()
	mdir := filepath.Join(root, "metadata")
	hint, err := os.ReadFile(filepath.Join(mdir, "version-hint.text"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(hint)))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(mdir, fmt.Sprintf("v%d.metadata.json", v)))
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&meta); err != nil {
		t.Fatal(err)
	}
	var parts struct {
		Version int                 `json:"format-version"`
		Schemas []*ice.Schema       `json:"schemas"`
		Specs   []ice.PartitionSpec `json:"partition-specs"`
		Current int64               `json:"current-snapshot-id"`
		Seq     int64               `json:"last-sequence-number"`
		Snaps   []struct {
			ID   int64  `json:"snapshot-id"`
			List string `json:"manifest-list"`
		} `json:"snapshots"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		t.Fatal(err)
	}
	schema, spec := parts.Schemas[0], parts.Specs[0]
	var manifests []ice.ManifestFile
	for _, s := range parts.Snaps {
		if s.ID != parts.Current {
			continue
		}
		lb, err := os.ReadFile(filepath.Join(root, strings.TrimPrefix(s.List, "t/")))
		if err != nil {
			t.Fatal(err)
		}
		if manifests, err = ice.ReadManifestList(bytes.NewReader(lb)); err != nil {
			t.Fatal(err)
		}
	}
	snap, seq := int64(5_000_000_000)+int64(v), parts.Seq+1
	tsID, noneID := 0, 0
	for _, f := range schema.Fields() {
		switch f.Name {
		case "ts":
			tsID = f.ID
		case "none":
			noneID = f.ID
		}
	}
	version := parts.Version
	if len(dvs) > 0 {
		version = 3
	}
	write := func(name string, content ice.ManifestContent, files []ice.DataFile) {
		var buf bytes.Buffer
		w, err := ice.NewManifestWriter(version, &buf, spec, schema, snap, ice.WithManifestWriterContent(content))
		if err != nil {
			t.Fatal(err)
		}
		for _, df := range files {
			s := snap
			if err := w.Add(ice.NewManifestEntry(ice.EntryStatusADDED, &s, nil, nil, df)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		mf, err := w.ToManifestFile("t/metadata/"+name, int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mdir, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		manifests = append(manifests, mf)
	}
	if len(added) > 0 {
		var files []ice.DataFile
		for _, f := range added {
			files = append(files, icebergDataFile(t, root, spec, false, tsID, noneID, f))
		}
		write(fmt.Sprintf("m%d.avro", v), ice.ManifestContentData, files)
	}
	if len(deleted) > 0 {
		name := fmt.Sprintf("delete-%d.parquet", v)
		rows := icebergPositionDeletes(t, filepath.Join(root, "data", name), deleted)
		info, err := os.Stat(filepath.Join(root, "data", name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := ice.NewDataFileBuilder(spec, ice.EntryContentPosDeletes, "t/data/"+name, ice.ParquetFile, map[int]any{}, nil, nil, rows, info.Size())
		if err != nil {
			t.Fatal(err)
		}
		write(fmt.Sprintf("m%d-deletes.avro", v), ice.ManifestContentDeletes, []ice.DataFile{b.Build()})
	}
	if len(dvs) > 0 {
		name := fmt.Sprintf("dv-%d.puffin", v)
		write(fmt.Sprintf("m%d-dvs.avro", v), ice.ManifestContentDeletes, icebergDeletionVectors(t, root, name, spec, dvs))
		meta["format-version"], meta["next-row-id"] = 3, 0
	}
	list := fmt.Sprintf("snap-%d.avro", snap)
	var lbuf bytes.Buffer
	parent := parts.Current
	if err := ice.WriteManifestList(version, &lbuf, snap, &parent, &seq, 0, manifests); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mdir, list), lbuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	op := "append"
	if len(deleted)+len(dvs) > 0 {
		op = map[bool]string{true: "overwrite", false: "delete"}[len(added) > 0]
	}
	at := int64(1_700_000_000_000) + int64(v)*1000
	meta["last-sequence-number"], meta["last-updated-ms"], meta["current-snapshot-id"] = seq, at, snap
	meta["snapshots"] = append(meta["snapshots"].([]any), map[string]any{"snapshot-id": snap, "parent-snapshot-id": parent,
		"sequence-number": seq, "timestamp-ms": at, "manifest-list": "t/metadata/" + list, "summary": map[string]any{"operation": op}})
	b, err := json.MarshalIndent(meta, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mdir, fmt.Sprintf("v%d.metadata.json", v+1)), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mdir, "version-hint.text"), []byte(strconv.Itoa(v+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return snap
}

// icebergDeletionVectors writes a Puffin file root/data/name holding a
// deletion-vector-v1 blob of the positions of each data file in dvs (by path relative
// to root/data), and returns the delete files that state them.
func icebergDeletionVectors(t *testing.T, root, name string, spec ice.PartitionSpec, dvs map[string][]int64) []ice.DataFile {
	t.Helper()
	paths := make([]string, 0, len(dvs))
	for p := range dvs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var buf bytes.Buffer
	w, err := puffin.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	type blob struct {
		path         string
		rows         int64
		offset, size int64
	}
	var blobs []blob
	for _, p := range paths {
		pos, err := deletes.FromSorted(dvs[p])
		if err != nil {
			t.Fatal(err)
		}
		// length, magic, the portable 64-bit Roaring bitmap, CRC-32 of magic and bitmap
		body := pos.AppendRoaring64([]byte{0xD1, 0xD3, 0x39, 0x64})
		data := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
		data = binary.BigEndian.AppendUint32(append(data, body...), crc32.ChecksumIEEE(body))
		m, err := w.AddBlob(puffin.BlobMetadataInput{Type: puffin.BlobTypeDeletionVector, SnapshotID: -1, SequenceNumber: -1, Fields: []int32{},
			Properties: map[string]string{"referenced-data-file": "t/data/" + p, "cardinality": strconv.FormatInt(pos.Len(), 10)}}, data)
		if err != nil {
			t.Fatal(err)
		}
		blobs = append(blobs, blob{path: p, rows: pos.Len(), offset: m.Offset, size: m.Length})
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "data", name), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var files []ice.DataFile
	for _, b := range blobs {
		df, err := ice.NewDataFileBuilder(spec, ice.EntryContentPosDeletes, "t/data/"+name, ice.PuffinFile, map[int]any{}, nil, nil, b.rows, int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, df.ReferencedDataFile("t/data/"+b.path).ContentOffset(b.offset).ContentSizeInBytes(b.size).Build())
	}
	return files
}

// icebergPositionDeletes writes a position delete file at path: file_path and pos,
// by their reserved field ids, sorted as the spec asks. It returns its rows.
func icebergPositionDeletes(t *testing.T, path string, deleted map[string][]int64) int64 {
	t.Helper()
	id := func(n int) arrow.Metadata {
		return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(n)})
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "file_path", Type: arrow.BinaryTypes.String, Metadata: id(2147483546)},
		{Name: "pos", Type: arrow.PrimitiveTypes.Int64, Metadata: id(2147483545)},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	names := make([]string, 0, len(deleted))
	for p := range deleted {
		names = append(names, p)
	}
	sort.Strings(names)
	var rows int64
	for _, p := range names {
		for _, pos := range deleted[p] {
			b.Field(0).(*array.StringBuilder).Append("t/data/" + p)
			b.Field(1).(*array.Int64Builder).Append(pos)
			rows++
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(schema, f, pq.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestIcebergCommitsMakeTheRecordStale lands real snapshots between statements: an
// append, a delete by a position delete file, then one by a deletion vector. The
// statement after each scans (a stale record never answers), the refresh brings the
// record to the new snapshot, and the statement after that is answered from it
// again; an older snapshot never is.
func TestIcebergCommitsMakeTheRecordStale(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "t")
	if err := gen.Events(context.Background(), gen.EventsOptions{Rows: 9_000, Files: 3, Out: filepath.Join(root, "data"), Seed: 3, RowGroupRows: 1_000}); err != nil {
		t.Fatal(err)
	}
	file := func(k int) deltaFile { return deltaFile{path: gen.EventsFileName(k)} }
	icebergCommit(t, root, gen.EventsSchema.Fields(), false, []deltaFile{file(0), file(1)})
	e := open(t, lore.Options{})
	query(t, e, fmt.Sprintf("CREATE TABLE ev WITH (location = %s, format = 'iceberg')", types.QuoteString(root)))
	query(t, e, "ANALYZE ev")
	count := func(sql string, rows int, mode string) { t.Helper(); countIn(t, e, sql, rows, mode) }
	count("SELECT count(*) FROM ev", 6_000, "context")

	appended := icebergSnapshot(t, root, []deltaFile{file(2)}, nil, nil)
	count("SELECT count(*) FROM ev", 9_000, "scan")
	lore.WaitForRefreshes(e)
	count("SELECT count(*) FROM ev", 9_000, "context")

	deleted := icebergSnapshot(t, root, nil, map[string][]int64{file(1).path: {0, 1, 2, 500, 999}}, nil)
	count("SELECT count(*) FROM ev", 8_995, "scan")
	lore.WaitForRefreshes(e)
	count("SELECT count(*) FROM ev", 8_995, "context")

	// A deletion vector, in a snapshot that makes the table format version 3.
	icebergSnapshot(t, root, nil, nil, map[string][]int64{file(2).path: {3, 4, 2_999}})
	count("SELECT count(*) FROM ev", 8_992, "scan")
	lore.WaitForRefreshes(e)
	count("SELECT count(*) FROM ev", 8_992, "context")
	count(fmt.Sprintf("SELECT count(*) FROM ev FOR VERSION AS OF %d", deleted), 8_995, "scan")
	count(fmt.Sprintf("SELECT count(*) FROM ev FOR VERSION AS OF %d", appended), 9_000, "scan")
	count("SELECT count(*) FROM ev FOR VERSION AS OF 1", 6_000, "scan")
}
