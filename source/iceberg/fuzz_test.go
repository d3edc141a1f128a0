package iceberg

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/internal/shareddata"
	"github.com/loredb/lore/types"
)

// fixtureFiles are the shared Iceberg fixtures whose names end with one of suffixes.
func fixtureFiles(f *testing.F, suffixes ...string) [][]byte {
	d, err := shareddata.Find()
	if err != nil {
		return nil
	}
	var out [][]byte
	filepath.WalkDir(filepath.Join(d, "iceberg"), func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil
		}
		for _, s := range suffixes {
			if strings.HasSuffix(p, s) {
				if b, err := os.ReadFile(p); err == nil && len(b) < 1<<20 {
					out = append(out, b)
				}
				break
			}
		}
		return nil
	})
	return out
}

// FuzzMetadata feeds metadata files (gzip-compressed or not) to the parser and the
// schema conversion: anything is an error or a table, never a panic.
func FuzzMetadata(f *testing.F) {
	for _, b := range fixtureFiles(f, ".metadata.json", "metadata.json.gz", "table_metadata.json", ".json") {
		f.Add(b)
	}
	f.Add([]byte(`{"format-version": 2}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				return
			}
			out, err := io.ReadAll(io.LimitReader(zr, 1<<20))
			if err != nil {
				return
			}
			b = out
		}
		md, err := parseMetadata("fuzz.metadata.json", b)
		if err != nil {
			if errs.CodeOf(err) != errs.CorruptSource {
				t.Fatalf("error %v is not a corrupt source", err)
			}
			return
		}
		var rs rawSchemas
		_ = json.Unmarshal(b, &rs)
		s := md.currentSchema()
		fields := s.Fields
		dts := make([]arrow.DataType, 0, len(fields))
		for _, fl := range fields {
			dt, err := arrowType(fl.Type, 0)
			if err != nil {
				return
			}
			dts = append(dts, dt)
		}
		_, _ = columnSources(fields, dts, md.nameMapping(), rs.defaults(s.ID))
		for i := range md.Snapshots {
			_ = md.Snapshots[i].id()
		}
		_ = md.currentSnapshotID()
	})
}

// FuzzManifestList feeds manifest lists to the decoder: an error or manifests, never
// a panic or a hang.
func FuzzManifestList(f *testing.F) {
	for _, b := range fixtureFiles(f, ".avro") {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		list, err := decodeManifestList(b)
		if err != nil {
			return
		}
		for _, mf := range list {
			if mf.path == "" {
				t.Fatalf("a manifest without a path: %+v", mf)
			}
		}
	})
}

// FuzzManifest feeds manifests to the entry decoder, under a partitioned spec (by
// identity and by day) and under none, and turns each entry's partition values and
// bounds into values: an error or entries, never a panic or a hang.
func FuzzManifest(f *testing.F) {
	for _, b := range fixtureFiles(f, "-m0.avro", "-m1.avro", ".avro") {
		f.Add(b)
	}
	spec := &partitionSpec{ID: 1, Fields: []partitionField{
		{SourceIDs: []int{1}, FieldID: 1000, Name: "part", Transform: transform{kind: transformIdentity, name: "identity"}},
		{SourceIDs: []int{2}, FieldID: 1001, Name: "ts_day", Transform: transform{kind: transformDay, name: "day"}},
	}}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, mf := range []manifestFile{{path: "fuzz.avro", specID: 1, seq: 3, snapshotID: 1}, {path: "fuzz.avro", snapshotID: -1}} {
			entries, err := decodeManifest(mf, b, func(id int) *partitionSpec {
				if id == spec.ID {
					return spec
				}
				return nil
			})
			if err != nil {
				continue
			}
			for _, e := range entries {
				if e.status == entryDeleted || e.file.path == "" || e.file.content > contentEqualityDeletes {
					t.Fatalf("entry %+v", e)
				}
				for _, x := range e.file.partition {
					_, _ = partitionValue(x, types.Int64)
					_, _ = partitionValue(x, types.String)
					_, _ = partitionValue(x, types.UUID)
					_, _ = partitionValue(x, &arrow.Decimal128Type{Precision: 38, Scale: 2})
				}
				for _, v := range e.file.lower {
					_, _ = boundValue(v, types.Int64)
				}
			}
		}
	})
}

// FuzzBound decodes manifest bounds as every primitive type.
func FuzzBound(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0})
	f.Add([]byte{0x80, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte("abc"))
	f.Add(bytes.Repeat([]byte{0xff}, 17))
	all := []arrow.DataType{types.Boolean, types.Int32, types.Int64, types.Float32, types.Float64, types.Date, types.Time,
		types.Timestamp, types.TimestampTZ, types.String, types.Binary, types.UUID,
		&arrow.Decimal128Type{Precision: 38, Scale: 10}, &arrow.Decimal128Type{Precision: 9, Scale: 2}}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, dt := range all {
			v, ok := boundValue(b, dt)
			if !ok {
				continue
			}
			if !arrow.TypeEqual(v.Type, dt) {
				t.Fatalf("%s bound typed %s", types.Name(dt), types.Name(v.Type))
			}
			if types.IsUUID(dt) && len(v.S) != 16 {
				t.Fatalf("UUID bound of %d bytes", len(v.S))
			}
		}
	})
}

// FuzzAvro feeds object container files to the generic Avro reader: values or an
// error, never a panic, a hang or an allocation the bytes do not back. Passing over
// all fields of the records but the first (keepOnly) must check the bytes as making
// them does: the same objects, or an error all the same.
func FuzzAvro(f *testing.F) {
	for _, b := range fixtureFiles(f, ".avro") {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		values, _, err := readAvroFile(b)
		af, herr := openAvroFile(b)
		if herr != nil {
			if err == nil {
				t.Fatalf("a header that does not open decodes: %v", herr)
			}
			return
		}
		root := af.schema.record()
		if root == nil || len(root.fields) == 0 {
			return
		}
		root.keepOnly(root.fields[0].name)
		n := 0
		serr := af.each(func(any) error { n++; return nil })
		if (err == nil) != (serr == nil) || (err == nil && n != len(values)) {
			t.Fatalf("made: %d values, %v; passed over: %d values, %v", len(values), err, n, serr)
		}
	})
}
