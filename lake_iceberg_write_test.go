package lore_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
)

// icebergCommit writes an Iceberg format v2 table at root with one snapshot adding
// files (paths relative to root/data): the schema is fields (then a `day` DATE column,
// partitioned by identity, when byDay — its values are in the manifest alone, not in
// the files), each file stated with its rows, null counts and ts bounds from its Delta
// stats. The data files carry no field ids: the name mapping names their columns.
func icebergCommit(t *testing.T, root string, fields []arrow.Field, byDay bool, files []deltaFile) {
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
		info, err := os.Stat(filepath.Join(root, "data", f.path))
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			NumRecords int64             `json:"numRecords"`
			Min        map[string]string `json:"minValues"`
			Max        map[string]string `json:"maxValues"`
		}
		if err := json.Unmarshal([]byte(f.stats), &st); err != nil {
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
		b, err := ice.NewDataFileBuilder(spec, ice.EntryContentData, "t/data/"+f.path, ice.ParquetFile, part, nil, nil, st.NumRecords, info.Size())
		if err != nil {
			t.Fatal(err)
		}
		b = b.NullValueCounts(map[int]int64{tsID: 0, noneID: st.NumRecords}).
			LowerBoundValues(map[int][]byte{tsID: micros(st.Min["ts"], false)}).
			UpperBoundValues(map[int][]byte{tsID: micros(st.Max["ts"], true)})
		s := snap
		entries = append(entries, ice.NewManifestEntry(ice.EntryStatusADDED, &s, nil, nil, b.Build()))
	}
	mdir := filepath.Join(root, "metadata")
	if err := os.MkdirAll(mdir, 0o755); err != nil {
		t.Fatal(err)
	}
	var mbuf bytes.Buffer
	mf, err := ice.WriteManifest("t/metadata/m0.avro", &mbuf, 2, spec, schema, snap, entries)
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
		"location":             "t",
		"last-sequence-number": 1, "last-updated-ms": 1_700_000_000_000, "last-column-id": len(nested),
		"current-schema-id": 0, "schemas": []json.RawMessage{schemaJSON},
		"default-spec-id": 0, "last-partition-id": 1000, "partition-specs": []json.RawMessage{specJSON},
		"default-sort-order-id": 0, "sort-orders": []any{map[string]any{"order-id": 0, "fields": []any{}}},
		"properties":          map[string]string{"schema.name-mapping.default": string(mappingJSON)},
		"current-snapshot-id": snap,
		"snapshots": []any{map[string]any{"snapshot-id": snap, "sequence-number": 1, "timestamp-ms": 1_700_000_000_000,
			"manifest-list": "t/metadata/snap-1.avro", "summary": map[string]any{"operation": "append"}}},
	}
	b, err := json.MarshalIndent(meta, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mdir, "v1.metadata.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = fmt.Sprint
}
