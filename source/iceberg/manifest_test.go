package iceberg

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"testing"
)

// avroOut encodes Avro values by hand, for files no writer at hand produces.
type avroOut struct{ b []byte }

func (o *avroOut) long(v int64) *avroOut {
	o.b = binary.AppendUvarint(o.b, uint64(v<<1)^uint64(v>>63))
	return o
}

func (o *avroOut) str(s string) *avroOut {
	o.long(int64(len(s)))
	o.b = append(o.b, s...)
	return o
}

func (o *avroOut) boolean(v bool) *avroOut {
	if v {
		o.b = append(o.b, 1)
	} else {
		o.b = append(o.b, 0)
	}
	return o
}

// null writes branch 0 of a union (null); some writes branch 1, its value to follow.
func (o *avroOut) null() *avroOut { return o.long(0) }
func (o *avroOut) some() *avroOut { return o.long(1) }

// avroContainer wraps records of schema into an object container file, in one block.
func avroContainer(schema string, meta map[string]string, records ...[]byte) []byte {
	var o avroOut
	o.b = append(o.b, avroMagic...)
	o.long(int64(len(meta) + 1)).str("avro.schema").str(schema)
	for k, v := range meta {
		o.str(k).str(v)
	}
	o.long(0)
	sync := bytes.Repeat([]byte{9}, 16)
	o.b = append(o.b, sync...)
	data := slices.Concat(records...)
	o.long(int64(len(records))).long(int64(len(data)))
	o.b = append(o.b, data...)
	return append(o.b, sync...)
}

// entrySchema is a manifest_entry schema with optional snapshot and sequence numbers,
// whose partition tuple has a field with a field-id and one without.
const entrySchema = `{"type": "record", "name": "manifest_entry", "fields": [
	{"name": "status", "type": "int", "field-id": 0},
	{"name": "snapshot_id", "type": ["null", "long"], "field-id": 1},
	{"name": "sequence_number", "type": ["null", "long"], "field-id": 3},
	{"name": "data_file", "field-id": 2, "type": {"type": "record", "name": "r2", "fields": [
		{"name": "content", "type": "int", "field-id": 134},
		{"name": "file_path", "type": "string", "field-id": 100},
		{"name": "file_format", "type": "string", "field-id": 101},
		{"name": "partition", "field-id": 102, "type": {"type": "record", "name": "r102", "fields": [
			{"name": "by_id", "type": ["null", "long"], "field-id": 1007},
			{"name": "by_name", "type": ["null", "string"]}]}},
		{"name": "record_count", "type": "long", "field-id": 103},
		{"name": "file_size_in_bytes", "type": "long", "field-id": 104},
		{"name": "lower_bounds", "field-id": 125, "type": ["null", {"type": "array", "items": {"type": "record", "name": "k126_v127", "fields": [
			{"name": "key", "type": "int", "field-id": 126}, {"name": "value", "type": "bytes", "field-id": 127}]}}]}]}}]}`

// entry encodes one record of entrySchema; snap and seq < 0 are null.
func entry(status, snap, seq, content int64, path string) []byte {
	var o avroOut
	o.long(status)
	if snap < 0 {
		o.null()
	} else {
		o.some().long(snap)
	}
	if seq < 0 {
		o.null()
	} else {
		o.some().long(seq)
	}
	o.long(content).str(path).str("PARQUET")
	o.some().long(42).some().str("x")
	o.long(10).long(100)
	o.some().long(1).long(1).str("\x05\x00\x00\x00").long(0)
	return o.b
}

func TestDecodeManifest(t *testing.T) {
	b := avroContainer(entrySchema, map[string]string{"format-version": "2", "content": "data"},
		entry(1, -1, -1, 0, "added-inherits.parquet"),
		entry(0, 7, -1, 0, "existing-without-seq.parquet"),
		entry(0, 7, 5, 1, "existing-with-seq.parquet"),
		entry(2, 7, 5, 0, "deleted.parquet"),
		entry(1, 8, 6, 2, "added-with-seq.parquet"),
	)
	spec := &partitionSpec{ID: 4, Fields: []partitionField{
		{SourceIDs: []int{1}, FieldID: 1007, Name: "by_id", Transform: transform{kind: transformIdentity}},
		{SourceIDs: []int{2}, FieldID: 1008, Name: "by_name", Transform: transform{kind: transformIdentity}},
	}}
	specOf := func(id int) *partitionSpec {
		if id == spec.ID {
			return spec
		}
		return nil
	}
	mf := manifestFile{path: "m.avro", specID: 4, seq: 9, snapshotID: 3}
	entries, err := decodeManifest(mf, b, specOf)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		path      string
		snap, seq int64
		content   fileContent
	}{
		{"added-inherits.parquet", 3, 9, contentData},
		{"existing-without-seq.parquet", 7, -1, contentData}, // an existing entry inherits none
		{"existing-with-seq.parquet", 7, 5, contentPositionDeletes},
		{"added-with-seq.parquet", 8, 6, contentEqualityDeletes},
	}
	if len(entries) != len(want) {
		t.Fatalf("%d entries, want %d", len(entries), len(want))
	}
	for i, w := range want {
		e := entries[i]
		if e.file.path != w.path || e.snapshotID != w.snap || e.seq != w.seq || e.file.content != w.content {
			t.Errorf("entry %d: %s snapshot %d seq %d content %d, want %+v", i, e.file.path, e.snapshotID, e.seq, e.file.content, w)
		}
		if e.file.specID != 4 || e.file.records != 10 || e.file.size != 100 || e.file.format != "PARQUET" {
			t.Errorf("entry %d: %+v", i, e.file)
		}
		if e.file.partition[1007] != int64(42) || e.file.partition[1008] != "x" || len(e.file.partition) != 2 {
			t.Errorf("entry %d: partition %v", i, e.file.partition)
		}
		if !bytes.Equal(e.file.lower[1], []byte{5, 0, 0, 0}) {
			t.Errorf("entry %d: lower bounds %v", i, e.file.lower)
		}
	}
	// A v1 list's manifests are at sequence number 0, which every entry inherits.
	entries, err = decodeManifest(manifestFile{path: "m.avro", specID: 4, snapshotID: 3}, b, specOf)
	if err != nil || entries[1].seq != 0 {
		t.Errorf("v1: %+v, %v", entries, err)
	}
	// Without the spec, only the field with a field-id is known.
	entries, err = decodeManifest(manifestFile{path: "m.avro", specID: 5}, b, specOf)
	if err != nil || len(entries[0].file.partition) != 1 || entries[0].file.partition[1007] != int64(42) {
		t.Errorf("no spec: %+v, %v", entries, err)
	}

	for name, rec := range map[string][]byte{
		"unknown status":  entry(3, 1, 1, 0, "f.parquet"),
		"unknown content": entry(1, 1, 1, 3, "f.parquet"),
		"no path":         entry(1, 1, 1, 0, ""),
	} {
		b := avroContainer(entrySchema, nil, rec)
		if _, err := decodeManifest(mf, b, specOf); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Required fields the writer left out.
	noCount := strings.Replace(entrySchema, `{"name": "record_count", "type": "long", "field-id": 103},`, "", 1)
	var o avroOut
	o.long(1).null().null().long(0).str("f.parquet").str("PARQUET").null().null().long(100).null()
	if _, err := decodeManifest(mf, avroContainer(noCount, nil, o.b), specOf); err == nil || !strings.Contains(err.Error(), "record_count") {
		t.Errorf("an entry without record_count: %v", err)
	}
}

// listSchema is a v2 manifest list schema, BigQuery-style: every field a nullable
// union.
const listSchema = `{"type": "record", "name": "manifest_file", "fields": [
	{"name": "manifest_path", "type": ["null", "string"]},
	{"name": "manifest_length", "type": ["null", "long"]},
	{"name": "partition_spec_id", "type": ["null", "int"]},
	{"name": "content", "type": ["null", "int"]},
	{"name": "sequence_number", "type": ["null", "long"]},
	{"name": "added_snapshot_id", "type": ["null", "long"]},
	{"name": "partitions", "type": ["null", {"type": "array", "items": ["null", {"type": "record", "name": "r508", "fields": [
		{"name": "contains_null", "type": ["null", "boolean"]},
		{"name": "lower_bound", "type": ["null", "bytes"]},
		{"name": "upper_bound", "type": ["null", "bytes"]}]}]}]}]}`

func TestDecodeManifestList(t *testing.T) {
	var a, b, c avroOut
	a.some().str("a.avro").some().long(10).some().long(2).some().long(1).some().long(7).some().long(99)
	a.some().long(1).some().some().boolean(false).some().str("lo").null().long(0)
	b.some().str("b.avro").null().null().null().null().null().null()
	c.null().null().null().null().null().null().null()
	list, err := decodeManifestList(avroContainer(listSchema, nil, a.b, b.b))
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("%d manifests", len(list))
	}
	m := list[0]
	if m.path != "a.avro" || m.specID != 2 || m.seq != 7 || m.snapshotID != 99 || len(m.partitions) != 1 {
		t.Errorf("first manifest: %+v", m)
	}
	if s := m.partitions[0]; s.containsNull || !s.hasLower || string(s.lower) != "lo" || s.hasUpper {
		t.Errorf("summary %+v", s)
	}
	if m := list[1]; m.path != "b.avro" || m.specID != 0 || m.seq != 0 || m.snapshotID != -1 || m.partitions != nil {
		t.Errorf("second manifest, all null: %+v", m)
	}
	if _, err := decodeManifestList(avroContainer(listSchema, nil, c.b)); err == nil {
		t.Error("a manifest without a path accepted")
	}
}
