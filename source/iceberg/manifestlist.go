package iceberg

import (
	"errors"
	"fmt"
	"math"
)

// manifestFile is one manifest of a snapshot, as its manifest list states it (the
// spec's manifest_file struct): what Lore reads of it.
type manifestFile struct {
	path   string
	specID int // the partition spec its entries were written under
	// seq is the sequence number the manifest was added at, which its entries
	// inherit; 0 in a v1 list, which states none.
	seq int64
	// snapshotID is the snapshot that added the manifest, which its entries
	// inherit; -1 when the list does not state it.
	snapshotID int64
	// partitions summarise the values of each field of the partition spec across
	// the manifest's entries; nil when the list states nothing of them.
	partitions []fieldSummary
}

// fieldSummary is what a manifest list states of one partition field's values in a
// manifest: whether any is NULL, and the bounds of the others when it keeps them.
type fieldSummary struct {
	containsNull       bool
	lower, upper       []byte
	hasLower, hasUpper bool
}

// decodeManifestList decodes a manifest list: an Avro object container file of
// manifest_file records, read by the spec's field names whatever else the writer put
// in them or wrapped them in (v1 and v2 lists alike; BigQuery makes every field a
// nullable union).
func decodeManifestList(b []byte) ([]manifestFile, error) {
	f, err := openAvroFile(b)
	if err != nil {
		return nil, err
	}
	f.schema.record().keepOnly("manifest_path", "partition_spec_id", "sequence_number", "added_snapshot_id", "partitions")
	var out []manifestFile
	err = f.each(func(v any) error {
		rec, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("a manifest list entry is %s, not a record", avroKind(v))
		}
		mf, err := listEntry(rec)
		if err != nil {
			return err
		}
		out = append(out, mf)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// listEntry reads one manifest_file record.
func listEntry(rec map[string]any) (manifestFile, error) {
	mf := manifestFile{snapshotID: -1}
	p, ok := rec["manifest_path"].(string)
	if !ok || p == "" {
		return mf, errors.New("a manifest list entry without manifest_path")
	}
	mf.path = p
	var err error
	if mf.specID, err = optionalInt(rec, "partition_spec_id", 0); err != nil {
		return mf, err
	}
	if mf.seq, err = optionalLong(rec, "sequence_number", 0); err != nil {
		return mf, err
	}
	if mf.snapshotID, err = optionalLong(rec, "added_snapshot_id", -1); err != nil {
		return mf, err
	}
	parts, ok := rec["partitions"].([]any)
	if !ok {
		if rec["partitions"] != nil {
			return mf, fmt.Errorf("manifest %q: partitions are %s, not an array", p, avroKind(rec["partitions"]))
		}
		return mf, nil
	}
	sums := make([]fieldSummary, len(parts))
	for i, x := range parts {
		s, ok := x.(map[string]any)
		if !ok {
			return mf, fmt.Errorf("manifest %q: a partition summary is %s, not a record", p, avroKind(x))
		}
		null, ok := s["contains_null"].(bool)
		if !ok {
			// Without contains_null the summaries say nothing for certain.
			return mf, nil
		}
		sums[i].containsNull = null
		if sums[i].lower, sums[i].hasLower, err = optionalBytes(s, "lower_bound"); err != nil {
			return mf, fmt.Errorf("manifest %q: %w", p, err)
		}
		if sums[i].upper, sums[i].hasUpper, err = optionalBytes(s, "upper_bound"); err != nil {
			return mf, fmt.Errorf("manifest %q: %w", p, err)
		}
	}
	mf.partitions = sums
	return mf, nil
}

// optionalLong reads the long (or int) field name of a record; def when the record
// has no such field or it is null.
func optionalLong(rec map[string]any, name string, def int64) (int64, error) {
	x := rec[name]
	if x == nil {
		return def, nil
	}
	n, ok := avroLong(x)
	if !ok {
		return 0, fmt.Errorf("%s is %s, not a long", name, avroKind(x))
	}
	return n, nil
}

// optionalInt reads the int field name of a record; def when the record has no such
// field or it is null. A long in the range of an int is taken for one.
func optionalInt(rec map[string]any, name string, def int) (int, error) {
	n, err := optionalLong(rec, name, int64(def))
	if err != nil {
		return 0, err
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return 0, fmt.Errorf("%s %d is out of the range of an int", name, n)
	}
	return int(n), nil
}

// optionalBytes reads the bytes field name of a record; ok is false when the record
// has no such field or it is null.
func optionalBytes(rec map[string]any, name string) (b []byte, ok bool, err error) {
	x := rec[name]
	if x == nil {
		return nil, false, nil
	}
	if b, ok = x.([]byte); !ok {
		return nil, false, fmt.Errorf("%s is %s, not bytes", name, avroKind(x))
	}
	return b, true, nil
}

// avroLong reads an Avro int or long.
func avroLong(x any) (int64, bool) {
	switch n := x.(type) {
	case int32:
		return int64(n), true
	case int64:
		return n, true
	}
	return 0, false
}

// avroKind names the Avro kind of a decoded value, for messages.
func avroKind(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case int32:
		return "an int"
	case int64:
		return "a long"
	case float32:
		return "a float"
	case float64:
		return "a double"
	case string:
		return "a string"
	case []byte:
		return "bytes"
	case []any:
		return "an array"
	case map[string]any:
		return "a record or map"
	}
	return fmt.Sprintf("%T", x)
}
