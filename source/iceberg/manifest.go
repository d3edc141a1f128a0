package iceberg

import (
	"bytes"
	"fmt"

	ice "github.com/apache/iceberg-go"
)

// decodeManifest decodes a manifest's live entries with iceberg-go; a manifest whose
// schema it cannot resolve (BigQuery wraps the data_file record and every field in
// nullable unions, and map entries in records of their own) is decoded generically by
// field name instead. A panic inside a decoder on hostile bytes is an error. spec
// gives the partition spec of the manifest, for the partition tuple's field ids.
func decodeManifest(mf ice.ManifestFile, b []byte, spec func(int) *ice.PartitionSpec) (entries []ice.ManifestEntry, err error) {
	defer func() {
		if r := recover(); r != nil {
			entries, err = nil, fmt.Errorf("invalid manifest: %v", r)
		}
	}()
	entries, err = readManifest(mf, b)
	if err == nil {
		return entries, nil
	}
	loose, lerr := readLooseManifest(mf, b, spec)
	if lerr != nil {
		return nil, err
	}
	return loose, nil
}

// readManifest is iceberg-go's decoder, its panics made errors.
func readManifest(mf ice.ManifestFile, b []byte) (entries []ice.ManifestEntry, err error) {
	defer func() {
		if r := recover(); r != nil {
			entries, err = nil, fmt.Errorf("invalid manifest: %v", r)
		}
	}()
	return ice.ReadManifest(mf, bytes.NewReader(b), true)
}

// readLooseManifest decodes a manifest generically: every record by its field names,
// unions unwrapped, maps written as arrays of key/value records read as maps.
func readLooseManifest(mf ice.ManifestFile, b []byte, specOf func(int) *ice.PartitionSpec) ([]ice.ManifestEntry, error) {
	values, _, err := readAvroFile(b)
	if err != nil {
		return nil, err
	}
	spec := ice.UnpartitionedSpec
	if s := specOf(int(mf.PartitionSpecID())); s != nil {
		spec = s
	}
	byName := map[string]int{}
	for _, f := range spec.Fields() {
		byName[f.Name] = f.FieldID
	}
	var out []ice.ManifestEntry
	for _, v := range values {
		rec, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("a manifest entry is %T, not a record", v)
		}
		status, ok := looseInt(rec["status"])
		if !ok || status < 0 || status > 2 {
			return nil, fmt.Errorf("a manifest entry has status %v", rec["status"])
		}
		if ice.ManifestEntryStatus(status) == ice.EntryStatusDELETED {
			continue
		}
		d, ok := rec["data_file"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("a manifest entry has no data_file record")
		}
		path, _ := d["file_path"].(string)
		format, _ := d["file_format"].(string)
		rows, _ := looseInt(d["record_count"])
		size, _ := looseInt(d["file_size_in_bytes"])
		content, _ := looseInt(d["content"])
		part := map[int]any{}
		if p, ok := d["partition"].(map[string]any); ok {
			for name, x := range p {
				id, ok := byName[name]
				if !ok {
					return nil, fmt.Errorf("partition field %q is not in spec %d", name, spec.ID())
				}
				part[id] = x
			}
		}
		db, err := ice.NewDataFileBuilder(*spec, ice.ManifestEntryContent(content), path, ice.FileFormat(format), part, nil, nil, rows, size)
		if err != nil {
			return nil, err
		}
		db = db.NullValueCounts(looseCounts(d["null_value_counts"])).NaNValueCounts(looseCounts(d["nan_value_counts"])).
			ValueCounts(looseCounts(d["value_counts"])).
			LowerBoundValues(looseBounds(d["lower_bounds"])).UpperBoundValues(looseBounds(d["upper_bounds"]))
		if ids, ok := d["equality_ids"].([]any); ok {
			eq := make([]int, 0, len(ids))
			for _, x := range ids {
				if n, ok := looseInt(x); ok {
					eq = append(eq, int(n))
				}
			}
			db = db.EqualityFieldIDs(eq)
		}
		if s, ok := d["referenced_data_file"].(string); ok {
			db = db.ReferencedDataFile(s)
		}
		if n, ok := looseInt(d["content_offset"]); ok {
			db = db.ContentOffset(n)
		}
		if n, ok := looseInt(d["content_size_in_bytes"]); ok {
			db = db.ContentSizeInBytes(n)
		}
		snap := mf.SnapshotID()
		if n, ok := looseInt(rec["snapshot_id"]); ok {
			snap = n
		}
		// Sequence numbers an entry leaves out are its manifest's (inheritance).
		seq := mf.SequenceNum()
		if n, ok := looseInt(rec["sequence_number"]); ok {
			seq = n
		}
		fileSeq := seq
		if n, ok := looseInt(rec["file_sequence_number"]); ok {
			fileSeq = n
		}
		out = append(out, ice.NewManifestEntry(ice.ManifestEntryStatus(status), &snap, &seq, &fileSeq, db.Build()))
	}
	return out, nil
}

func looseInt(x any) (int64, bool) {
	switch n := x.(type) {
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case int:
		return int64(n), true
	}
	return 0, false
}

// looseMap reads a map written as Avro map or as an array of key/value records.
func looseMap(x any, fn func(key int, v any)) {
	switch m := x.(type) {
	case []any:
		for _, e := range m {
			kv, ok := e.(map[string]any)
			if !ok {
				continue
			}
			if k, ok := looseInt(kv["key"]); ok {
				fn(int(k), kv["value"])
			}
		}
	}
}

func looseCounts(x any) map[int]int64 {
	out := map[int]int64{}
	looseMap(x, func(k int, v any) {
		if n, ok := looseInt(v); ok {
			out[k] = n
		}
	})
	return out
}

func looseBounds(x any) map[int][]byte {
	out := map[int][]byte{}
	looseMap(x, func(k int, v any) {
		if b, ok := v.([]byte); ok {
			out[k] = b
		}
	})
	return out
}
