package iceberg

import (
	"errors"
	"fmt"
	"math"
)

// entryStatus is a manifest entry's status.
type entryStatus int32

const (
	entryExisting entryStatus = 0
	entryAdded    entryStatus = 1
	entryDeleted  entryStatus = 2
)

// fileContent is what a content file of a manifest holds.
type fileContent int32

const (
	contentData            fileContent = 0
	contentPositionDeletes fileContent = 1
	contentEqualityDeletes fileContent = 2
)

// manifestEntry is one live entry of a manifest: a data or delete file, with the
// snapshot that added it and its data sequence number, inherited from the manifest
// list where the entry leaves them out.
type manifestEntry struct {
	status     entryStatus
	snapshotID int64
	seq        int64 // the data sequence number; -1 when neither stated nor inherited
	file       contentFile
}

// contentFile is a data or delete file as its manifest entry states it (the spec's
// data_file struct): what Lore reads of it.
type contentFile struct {
	content fileContent
	path    string
	format  string // as the writer put it: PARQUET, parquet, PUFFIN, ...
	specID  int    // the manifest's
	// partition is the file's partition tuple by partition field id, the values as
	// the Avro reader decodes them (int32, int64, string, []byte, ...; nil for NULL).
	partition map[int]any
	records   int64 // rows; a deletion vector's deleted positions
	size      int64
	// Per column field id: the NULL and NaN counts, and the lower and upper bounds
	// in the spec's single-value serialisation.
	nullCounts, nanCounts map[int]int64
	lower, upper          map[int][]byte
	equalityIDs           []int // an equality delete's columns
	// referenced is the data file every delete of the file is in, when
	// hasReferenced (a deletion vector's must be stated).
	referenced    string
	hasReferenced bool
	// A deletion vector's blob in its Puffin file, when stated.
	contentOffset, contentSize       int64
	hasContentOffset, hasContentSize bool
}

// decodeManifest decodes a manifest's live entries: an Avro object container file of
// manifest_entry records, read by the spec's field names whatever else the writer put
// in them or wrapped them in (v1 and v2 manifests, data and delete manifests alike;
// BigQuery wraps the data_file record and every field in nullable unions). Entries
// inherit their snapshot id from the manifest list, and their sequence number when
// they are ADDED or the list is v1 (sequence number 0), as the spec has it. specOf
// gives the table's spec of an id: the partition tuple's fields are known by the
// field ids the manifest's writer schema gives them, else by their names in the
// manifest's spec.
func decodeManifest(mf manifestFile, b []byte, specOf func(int) *partitionSpec) ([]manifestEntry, error) {
	f, err := openAvroFile(b)
	if err != nil {
		return nil, err
	}
	partIDs := partitionFieldIDs(f.schema, specOf(mf.specID))
	// What Lore does not read of an entry is passed over, not made.
	root := f.schema.record()
	root.keepOnly("status", "snapshot_id", "sequence_number", "data_file")
	if df := root.field("data_file"); df != nil {
		df.typ.record().keepOnly("content", "file_path", "file_format", "partition", "record_count", "file_size_in_bytes",
			"null_value_counts", "nan_value_counts", "lower_bounds", "upper_bounds", "equality_ids",
			"referenced_data_file", "content_offset", "content_size_in_bytes")
	}
	var out []manifestEntry
	err = f.each(func(v any) error {
		rec, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("a manifest entry is %s, not a record", avroKind(v))
		}
		e, live, err := readEntry(mf, rec, partIDs)
		if err != nil {
			return err
		}
		if live {
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// partitionFieldIDs maps the names of the partition tuple's fields in a manifest's
// writer schema to partition field ids: the field-id each carries, else the id of
// the field of that name in spec. A field known by neither is left out.
func partitionFieldIDs(sch *avroSchema, spec *partitionSpec) map[string]int {
	out := map[string]int{}
	var part *avroSchema
	if df := sch.record().field("data_file"); df != nil {
		if p := df.typ.record().field("partition"); p != nil {
			part = p.typ.record()
		}
	}
	if part == nil {
		return out
	}
	for _, f := range part.fields {
		if f.hasID {
			out[f.name] = f.id
			continue
		}
		if spec == nil {
			continue
		}
		for _, pf := range spec.Fields {
			if pf.Name == f.name {
				out[f.name] = pf.FieldID
				break
			}
		}
	}
	return out
}

// readEntry reads one manifest_entry record; live is false for a DELETED entry,
// which is not read further.
func readEntry(mf manifestFile, rec map[string]any, partIDs map[string]int) (e manifestEntry, live bool, err error) {
	status, ok := avroLong(rec["status"])
	if !ok || status < int64(entryExisting) || status > int64(entryDeleted) {
		return e, false, fmt.Errorf("a manifest entry has status %v", rec["status"])
	}
	e.status = entryStatus(status)
	if e.status == entryDeleted {
		return e, false, nil
	}
	d, ok := rec["data_file"].(map[string]any)
	if !ok {
		return e, false, errors.New("a manifest entry has no data_file record")
	}
	if e.file, err = readContentFile(d, partIDs); err != nil {
		return e, false, err
	}
	e.file.specID = mf.specID
	if e.snapshotID, err = optionalLong(rec, "snapshot_id", mf.snapshotID); err != nil {
		return e, false, err
	}
	// A sequence number left out is the manifest's when the entry was added by
	// it, or the list is v1; an existing entry must state its own.
	inherited := int64(-1)
	if mf.seq == 0 || e.status == entryAdded {
		inherited = mf.seq
	}
	if e.seq, err = optionalLong(rec, "sequence_number", inherited); err != nil {
		return e, false, err
	}
	return e, true, nil
}

// readContentFile reads a data_file record.
func readContentFile(d map[string]any, partIDs map[string]int) (contentFile, error) {
	var f contentFile
	content, err := optionalLong(d, "content", int64(contentData))
	if err != nil {
		return f, err
	}
	if content < int64(contentData) || content > int64(contentEqualityDeletes) {
		return f, fmt.Errorf("a manifest entry of unknown content %d", content)
	}
	f.content = fileContent(content)
	var ok bool
	if f.path, ok = d["file_path"].(string); !ok || f.path == "" {
		return f, errors.New("a manifest entry without file_path")
	}
	if f.format, ok = d["file_format"].(string); !ok {
		return f, fmt.Errorf("file %q: file_format is %s, not a string", f.path, avroKind(d["file_format"]))
	}
	if f.records, ok = avroLong(d["record_count"]); !ok {
		return f, fmt.Errorf("file %q: record_count is %s, not a long", f.path, avroKind(d["record_count"]))
	}
	if f.size, ok = avroLong(d["file_size_in_bytes"]); !ok {
		return f, fmt.Errorf("file %q: file_size_in_bytes is %s, not a long", f.path, avroKind(d["file_size_in_bytes"]))
	}
	switch p := d["partition"].(type) {
	case nil:
	case map[string]any:
		for name, x := range p {
			id, ok := partIDs[name]
			if !ok {
				continue
			}
			if f.partition == nil {
				f.partition = make(map[int]any, len(p))
			}
			f.partition[id] = x
		}
	default:
		return f, fmt.Errorf("file %q: partition is %s, not a record", f.path, avroKind(p))
	}
	f.nullCounts = idMap(d["null_value_counts"], avroLong)
	f.nanCounts = idMap(d["nan_value_counts"], avroLong)
	f.lower = idMap(d["lower_bounds"], asBytes)
	f.upper = idMap(d["upper_bounds"], asBytes)
	if ids, ok := d["equality_ids"].([]any); ok {
		f.equalityIDs = make([]int, 0, len(ids))
		for _, x := range ids {
			if n, ok := avroLong(x); ok && n >= math.MinInt32 && n <= math.MaxInt32 {
				f.equalityIDs = append(f.equalityIDs, int(n))
			}
		}
	}
	f.referenced, f.hasReferenced = d["referenced_data_file"].(string)
	f.contentOffset, f.hasContentOffset = avroLong(d["content_offset"])
	f.contentSize, f.hasContentSize = avroLong(d["content_size_in_bytes"])
	return f, nil
}

func asBytes(x any) ([]byte, bool) {
	b, ok := x.([]byte)
	return b, ok
}

// idMap reads a map keyed by field id, which Avro writes as an array of key/value
// records (its own maps are keyed by strings); entries whose key or value is not of
// the kind expected are left out, and anything else holds no entries (nil).
func idMap[V any](x any, value func(any) (V, bool)) map[int]V {
	arr, ok := x.([]any)
	if !ok {
		return nil
	}
	out := make(map[int]V, len(arr))
	for _, e := range arr {
		kv, ok := e.(map[string]any)
		if !ok {
			continue
		}
		k, ok := avroLong(kv["key"])
		if !ok || k < math.MinInt32 || k > math.MaxInt32 {
			continue
		}
		if v, ok := value(kv["value"]); ok {
			out[int(k)] = v
		}
	}
	return out
}
