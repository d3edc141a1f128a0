package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	ice "github.com/apache/iceberg-go"

	"github.com/loredb/lore/parquet"
	"github.com/loredb/lore/storage"
	"github.com/loredb/lore/types"
)

// icebergSnapshotID is the id of the one snapshot of the benchmark's tables.
const icebergSnapshotID = int64(1)

// writeIcebergTable makes an Iceberg table under dst of the Parquet files under src:
// a data/ folder linking each, and under metadata/ a format v2 metadata file of one
// snapshot, its manifest list and one manifest adding every file with what its footer
// states (rows, column sizes, value and null counts, lower and upper bounds), as an
// Iceberg writer records them. The files carry no field ids: the table's name mapping
// gives them.
func writeIcebergTable(ctx context.Context, src, dst string) error {
	files, err := parquetFiles(src)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no Parquet files under %q", src)
	}
	loc, err := filepath.Abs(dst)
	if err != nil {
		return err
	}
	for _, d := range []string{"data", "metadata"} {
		if err := os.MkdirAll(filepath.Join(loc, d), 0o755); err != nil {
			return err
		}
	}
	var schema *arrow.Schema
	var iceSchema *ice.Schema
	spec := *ice.UnpartitionedSpec
	var entries []ice.ManifestEntry
	for i, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return err
		}
		name := filepath.Join(loc, "data", fmt.Sprintf("part-%05d.parquet", i))
		if err := os.Symlink(abs, name); err != nil {
			return err
		}
		st, err := os.Stat(abs)
		if err != nil {
			return err
		}
		fs, df, err := icebergDataFile(ctx, abs, name, st.Size(), spec)
		if err != nil {
			return err
		}
		if schema == nil {
			schema = fs
			if iceSchema, err = icebergSchema(schema); err != nil {
				return err
			}
		} else if !schema.Equal(fs) {
			return fmt.Errorf("%s has schema %s, and the files before it %s", f, fs, schema)
		}
		snap := icebergSnapshotID
		entries = append(entries, ice.NewManifestEntry(ice.EntryStatusADDED, &snap, nil, nil, df))
	}
	manifest := filepath.Join(loc, "metadata", "manifest-00000.avro")
	var mbuf bytes.Buffer
	mf, err := ice.WriteManifest(manifest, &mbuf, 2, spec, iceSchema, icebergSnapshotID, entries)
	if err != nil {
		return err
	}
	if err := os.WriteFile(manifest, mbuf.Bytes(), 0o644); err != nil {
		return err
	}
	list := filepath.Join(loc, "metadata", fmt.Sprintf("snap-%d.avro", icebergSnapshotID))
	var lbuf bytes.Buffer
	seq := int64(1)
	if err := ice.WriteManifestList(2, &lbuf, icebergSnapshotID, nil, &seq, 0, []ice.ManifestFile{mf}); err != nil {
		return err
	}
	if err := os.WriteFile(list, lbuf.Bytes(), 0o644); err != nil {
		return err
	}
	schemaJSON, err := json.Marshal(iceSchema)
	if err != nil {
		return err
	}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	var mapping []map[string]any
	for _, f := range iceSchema.Fields() {
		mapping = append(mapping, map[string]any{"field-id": f.ID, "names": []string{f.Name}})
	}
	mappingJSON, err := json.Marshal(mapping)
	if err != nil {
		return err
	}
	meta := map[string]any{
		"format-version": 2, "table-uuid": tableUUID(filepath.Base(dst)),
		"location": loc, "last-sequence-number": 1, "last-updated-ms": 1_700_000_000_000,
		"last-column-id": iceSchema.HighestFieldID(), "current-schema-id": 0, "schemas": []json.RawMessage{schemaJSON},
		"default-spec-id": 0, "last-partition-id": 999, "partition-specs": []json.RawMessage{specJSON},
		"default-sort-order-id": 0, "sort-orders": []any{map[string]any{"order-id": 0, "fields": []any{}}},
		"properties":          map[string]string{"schema.name-mapping.default": string(mappingJSON)},
		"current-snapshot-id": icebergSnapshotID,
		"snapshots": []any{map[string]any{"snapshot-id": icebergSnapshotID, "sequence-number": 1, "timestamp-ms": 1_700_000_000_000,
			"manifest-list": list, "summary": map[string]any{"operation": "append"}}},
	}
	b, err := json.MarshalIndent(meta, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(loc, "metadata", "v1.metadata.json"), b, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(loc, "metadata", "version-hint.text"), []byte("1"), 0o644)
}

// tableUUID is a fixed UUID (version 4 in form) for a benchmark table, one per name,
// so that writing the tables again gives the same metadata.
func tableUUID(name string) string {
	h := sha256.Sum256([]byte("lore bench " + name))
	h[6], h[8] = h[6]&0x0f|0x40, h[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// icebergSchema is the Iceberg schema of the benchmark files' Arrow schema, field ids
// 1… in column order.
func icebergSchema(s *arrow.Schema) (*ice.Schema, error) {
	fields := make([]ice.NestedField, s.NumFields())
	for i, f := range s.Fields() {
		var typ ice.Type
		switch t := f.Type.(type) {
		case *arrow.Int64Type:
			typ = ice.PrimitiveTypes.Int64
		case *arrow.Int32Type, *arrow.Int16Type, *arrow.Int8Type:
			typ = ice.PrimitiveTypes.Int32
		case *arrow.Float64Type:
			typ = ice.PrimitiveTypes.Float64
		case *arrow.Float32Type:
			typ = ice.PrimitiveTypes.Float32
		case *arrow.BooleanType:
			typ = ice.PrimitiveTypes.Bool
		case *arrow.StringType, *arrow.LargeStringType:
			typ = ice.PrimitiveTypes.String
		case *arrow.Date32Type:
			typ = ice.PrimitiveTypes.Date
		case *arrow.Decimal128Type:
			typ = ice.DecimalTypeOf(int(t.Precision), int(t.Scale))
		case *arrow.Decimal64Type: // Lore's decimals of up to 18 digits; Iceberg allows INT64 in Parquet
			typ = ice.DecimalTypeOf(int(t.Precision), int(t.Scale))
		case *arrow.TimestampType:
			if t.Unit != arrow.Microsecond {
				return nil, fmt.Errorf("column %s: no Iceberg type for %s", f.Name, f.Type)
			}
			typ = ice.PrimitiveTypes.Timestamp
			if t.TimeZone != "" {
				typ = ice.PrimitiveTypes.TimestampTz
			}
		default:
			return nil, fmt.Errorf("column %s: no Iceberg type for %s", f.Name, f.Type)
		}
		fields[i] = ice.NestedField{ID: i + 1, Name: f.Name, Type: typ, Required: !f.Nullable}
	}
	return ice.NewSchema(0, fields...), nil
}

// icebergDataFile reads a Parquet file's footer: its schema as Lore reads it, and the
// manifest's data file of it (at path) with per column (by field id, column order)
// the compressed bytes and the value and null counts summed over its row groups, and
// the least minimum and greatest maximum where every row group states them.
func icebergDataFile(ctx context.Context, file, path string, size int64, spec ice.PartitionSpec) (*arrow.Schema, ice.DataFile, error) {
	r, err := storage.Local{}.Open(ctx, file)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	f, err := parquet.Open(ctx, r, file)
	if err != nil {
		return nil, nil, err
	}
	schema := f.Schema()
	sizes, values, nulls := map[int]int64{}, map[int]int64{}, map[int]int64{}
	lower, upper := map[int][]byte{}, map[int][]byte{}
	for c := range schema.Fields() {
		id := c + 1
		var lo, hi types.Value
		bounded, counted := f.NumRowGroups() > 0, f.NumRowGroups() > 0
		var n, bytes int64
		for g := range f.NumRowGroups() {
			cs := f.RowGroup(g).Columns[c]
			bytes += cs.CompressedBytes
			if !cs.HasNullCount {
				counted = false
			}
			n += cs.NullCount
			if !cs.HasMinMax || !cs.MinExact || !cs.MaxExact {
				bounded = false
				continue
			}
			if g == 0 || types.Compare(cs.Min, lo) < 0 {
				lo = cs.Min
			}
			if g == 0 || types.Compare(cs.Max, hi) > 0 {
				hi = cs.Max
			}
		}
		sizes[id], values[id] = bytes, f.NumRows()
		if counted {
			nulls[id] = n
		}
		if !bounded {
			continue
		}
		blo, okLo := icebergBound(lo)
		bhi, okHi := icebergBound(hi)
		if okLo && okHi {
			lower[id], upper[id] = blo, bhi
		}
	}
	b, err := ice.NewDataFileBuilder(spec, ice.EntryContentData, path, ice.ParquetFile, map[int]any{}, nil, nil, f.NumRows(), size)
	if err != nil {
		return nil, nil, err
	}
	return schema, b.ColumnSizes(sizes).ValueCounts(values).NullValueCounts(nulls).
		LowerBoundValues(lower).UpperBoundValues(upper).Build(), nil
}

// icebergBound is a bound in Iceberg's single-value binary form.
func icebergBound(v types.Value) ([]byte, bool) {
	if v.Null {
		return nil, false
	}
	var lit ice.Literal
	switch t := v.Type.(type) {
	case *arrow.Int64Type:
		lit = ice.Int64Literal(v.I)
	case *arrow.Int32Type, *arrow.Int16Type, *arrow.Int8Type:
		lit = ice.Int32Literal(int32(v.I))
	case *arrow.Float64Type:
		if math.IsNaN(v.F) {
			return nil, false
		}
		lit = ice.Float64Literal(v.F)
	case *arrow.Float32Type:
		if math.IsNaN(v.F) {
			return nil, false
		}
		lit = ice.Float32Literal(float32(v.F))
	case *arrow.StringType, *arrow.LargeStringType:
		lit = ice.StringLiteral(v.S)
	case *arrow.Date32Type:
		lit = ice.DateLiteral(ice.Date(v.I))
	case *arrow.TimestampType:
		lit = ice.TimestampLiteral(ice.Timestamp(v.I))
	case *arrow.Decimal128Type:
		lit = ice.DecimalLiteral(ice.Decimal{Val: decimal128.Num(v.D), Scale: int(t.Scale)})
	case *arrow.Decimal64Type:
		lit = ice.DecimalLiteral(ice.Decimal{Val: decimal128.Num(v.D), Scale: int(t.Scale)})
	default:
		return nil, false
	}
	b, err := lit.MarshalBinary()
	return b, err == nil
}
