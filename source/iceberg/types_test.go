package iceberg

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/loredb/lore/types"
)

func TestSchemaParse(t *testing.T) {
	var s schema
	err := json.Unmarshal([]byte(`{"type": "struct", "schema-id": 3, "identifier-field-ids": [1], "fields": [
		{"id": 1, "name": "id", "required": true, "type": "long"},
		{"id": 2, "name": "d", "required": false, "type": "decimal( 9 , 2 )"},
		{"id": 3, "name": "f", "required": false, "type": "fixed[16]"},
		{"id": 4, "name": "s", "required": false, "type": {"type": "struct", "fields": [
			{"id": 5, "name": "l", "required": false, "type": {"type": "list", "element-id": 6, "element": "int", "element-required": true}},
			{"id": 7, "name": "m", "required": false, "type": {"type": "map", "key-id": 8, "key": "string", "value-id": 9, "value": "timestamptz_ns", "value-required": false}}]}},
		{"id": 10, "name": "g", "required": false, "type": "Geography(OGC:CRS84, spherical)"}]}`), &s)
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != 3 || len(s.Fields) != 5 {
		t.Fatalf("schema %d of %d fields", s.ID, len(s.Fields))
	}
	if f := s.Fields[0]; f.ID != 1 || f.Name != "id" || !f.Required || f.Type.kind != kindLong {
		t.Errorf("field 0: %+v", f)
	}
	if d := s.Fields[1].Type; d.kind != kindDecimal || d.precision != 9 || d.scale != 2 {
		t.Errorf("decimal: %+v", d)
	}
	st := s.Fields[3].Type
	if got := st.String(); got != "struct<5: l: list<int>, 7: m: map<string, timestamptz_ns>>" {
		t.Errorf("struct type %s", got)
	}
	if l := st.fields[0].Type; l.elem.ID != 6 || !l.elem.Required {
		t.Errorf("list element %+v", l.elem)
	}
	if m := st.fields[1].Type; m.key.ID != 8 || !m.key.Required || m.value.ID != 9 || m.value.Required {
		t.Errorf("map %+v %+v", m.key, m.value)
	}
	if _, err := arrowType(s.Fields[4].Type, 0); err == nil || s.Fields[4].Type.kind != kindUnread {
		t.Errorf("geography read as a Lore type: %v", err)
	}
	dt, err := arrowType(st, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dt.String(), "l: list<element: int32> nullable") { // a required element is not nullable
		t.Errorf("struct as %s", dt)
	}

	for name, js := range map[string]string{
		"not an object":       `[]`,
		"no type":             `{"fields": []}`,
		"not a struct":        `{"type": "list", "fields": []}`,
		"no fields":           `{"type": "struct"}`,
		"null fields":         `{"type": "struct", "fields": null}`,
		"no id":               `{"type": "struct", "fields": [{"name": "a", "required": true, "type": "int"}]}`,
		"fractional id":       `{"type": "struct", "fields": [{"id": 1.5, "name": "a", "required": true, "type": "int"}]}`,
		"no name":             `{"type": "struct", "fields": [{"id": 1, "required": true, "type": "int"}]}`,
		"no required":         `{"type": "struct", "fields": [{"id": 1, "name": "a", "type": "int"}]}`,
		"no field type":       `{"type": "struct", "fields": [{"id": 1, "name": "a", "required": true}]}`,
		"null field type":     `{"type": "struct", "fields": [{"id": 1, "name": "a", "required": true, "type": null}]}`,
		"unknown type":        `{"type": "struct", "fields": [{"id": 1, "name": "a", "required": true, "type": "int128"}]}`,
		"bad fixed":           `{"type": "struct", "fields": [{"id": 1, "name": "a", "required": true, "type": "fixed[x]"}]}`,
		"decimal precision":   `{"type": "struct", "fields": [{"id": 1, "name": "a", "required": true, "type": "decimal(39, 2)"}]}`,
		"decimal scale":       `{"type": "struct", "fields": [{"id": 1, "name": "a", "required": true, "type": "decimal(4, 5)"}]}`,
		"unknown nested":      `{"type": "struct", "fields": [{"id": 1, "name": "a", "required": true, "type": {"type": "set"}}]}`,
		"list without id":     `{"type": "struct", "fields": [{"id": 1, "name": "a", "required": true, "type": {"type": "list", "element": "int", "element-required": true}}]}`,
		"map without value":   `{"type": "struct", "fields": [{"id": 1, "name": "a", "required": true, "type": {"type": "map", "key-id": 2, "key": "int", "value-id": 3, "value-required": true}}]}`,
		"duplicate ids":       `{"type": "struct", "fields": [{"id": 1, "name": "a", "required": true, "type": "int"}, {"id": 1, "name": "b", "required": true, "type": "int"}]}`,
		"duplicate nested id": `{"type": "struct", "fields": [{"id": 1, "name": "a", "required": true, "type": {"type": "list", "element-id": 1, "element": "int", "element-required": true}}]}`,
		"bad identifiers":     `{"type": "struct", "identifier-field-ids": "1", "fields": []}`,
	} {
		var s schema
		if err := json.Unmarshal([]byte(js), &s); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Ids that are not above zero are placeholders: they may repeat.
	if err := json.Unmarshal([]byte(`{"type": "struct", "fields": [{"id": 0, "name": "a", "required": true, "type": "int"}, {"id": 0, "name": "b", "required": true, "type": "int"}]}`), &s); err != nil {
		t.Errorf("placeholder ids: %v", err)
	}
}

func TestPartitionSpecParse(t *testing.T) {
	var s partitionSpec
	err := json.Unmarshal([]byte(`{"spec-id": 2, "fields": [
		{"name": "a", "transform": "Identity", "source-id": 1, "field-id": 1003},
		{"name": "b", "transform": "bucket[16]", "source-id": 2},
		{"name": "c", "transform": "truncate[4]", "source-ids": [3]},
		{"name": "d", "transform": "void"},
		{"name": "e", "transform": "zorder", "source-id": 4},
		{"name": "f", "transform": "bucket[-1]", "source-id": 5},
		{"name": "g", "transform": "day", "source-id": 6, "field-id": 1001}]}`), &s)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id   int
		kind transformKind
		n    int
		src  int
	}{
		{1003, transformIdentity, 0, 1}, {1004, transformBucket, 16, 2}, {1005, transformTruncate, 4, 3},
		{1006, transformVoid, 0, 0}, {1007, transformOther, 0, 4}, {1008, transformOther, 0, 5}, {1001, transformDay, 0, 6},
	}
	if s.ID != 2 || len(s.Fields) != len(want) {
		t.Fatalf("spec %d of %d fields", s.ID, len(s.Fields))
	}
	for i, w := range want {
		f := s.Fields[i]
		if f.FieldID != w.id || f.Transform.kind != w.kind || f.Transform.n != w.n || len(f.SourceIDs) != 1 || f.SourceIDs[0] != w.src {
			t.Errorf("field %d: %+v, want %+v", i, f, w)
		}
	}
	if s.unpartitioned() {
		t.Error("unpartitioned")
	}
	if err := json.Unmarshal([]byte(`{"spec-id": 0, "fields": [{"name": "a", "transform": "void", "source-id": 1}]}`), &s); err != nil || !s.unpartitioned() || s.Fields[0].FieldID != firstPartitionFieldID {
		t.Errorf("a spec of voids: %+v, %v", s, err)
	}
	for name, js := range map[string]string{
		"no fields":          `{"spec-id": 0}`,
		"negative id":        `{"spec-id": -1, "fields": []}`,
		"null id":            `{"spec-id": null, "fields": []}`,
		"no transform":       `{"fields": [{"name": "a", "source-id": 1}]}`,
		"empty transform":    `{"fields": [{"name": "a", "source-id": 1, "transform": ""}]}`,
		"zero buckets":       `{"fields": [{"name": "a", "source-id": 1, "transform": "bucket[0]"}]}`,
		"too wide":           `{"fields": [{"name": "a", "source-id": 1, "transform": "truncate[99999999999]"}]}`,
		"no source":          `{"fields": [{"name": "a", "transform": "identity"}]}`,
		"both sources":       `{"fields": [{"name": "a", "source-id": 1, "source-ids": [1], "transform": "identity"}]}`,
		"empty sources":      `{"fields": [{"name": "a", "source-ids": [], "transform": "identity"}]}`,
		"source zero":        `{"fields": [{"name": "a", "source-id": 0, "transform": "identity"}]}`,
		"no name":            `{"fields": [{"source-id": 1, "transform": "identity"}]}`,
		"null field id":      `{"fields": [{"name": "a", "source-id": 1, "transform": "identity", "field-id": null}]}`,
		"same name":          `{"fields": [{"name": "a", "source-id": 1, "transform": "identity"}, {"name": "a", "source-id": 2, "transform": "identity"}]}`,
		"same transform":     `{"fields": [{"name": "a", "source-id": 1, "transform": "bucket[2]"}, {"name": "b", "source-id": 1, "transform": "BUCKET[2]"}]}`,
		"same field id":      `{"fields": [{"name": "a", "source-id": 1, "transform": "identity", "field-id": 1000}, {"name": "b", "source-id": 2, "transform": "identity", "field-id": 1000}]}`,
		"transform a number": `{"fields": [{"name": "a", "source-id": 1, "transform": 3}]}`,
	} {
		var s partitionSpec
		if err := json.Unmarshal([]byte(js), &s); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Different transforms of one column, and the same one of two, are fine.
	if err := json.Unmarshal([]byte(`{"fields": [{"name": "a", "source-id": 1, "transform": "bucket[2]"}, {"name": "b", "source-id": 1, "transform": "bucket[3]"},
		{"name": "c", "source-id": 2, "transform": "bucket[2]"}, {"name": "d", "transform": "void"}, {"name": "e", "transform": "void"}]}`), &s); err != nil {
		t.Errorf("distinct fields refused: %v", err)
	}
}

// TestMurmur3 checks the hash and the bucket transform's hashing of each type against
// the values the spec publishes (Appendix B).
func TestMurmur3(t *testing.T) {
	day := func(s string) int64 {
		tm, err := time.Parse("2006-01-02", s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.Unix() / 86400
	}
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	uuidBytes := string([]byte{0xF7, 0x9C, 0x3E, 0x09, 0x67, 0x7C, 0x4B, 0xBD, 0xA4, 0x79, 0x3F, 0x34, 0x9C, 0xB7, 0x85, 0xE7})
	dec := &arrow.Decimal128Type{Precision: 9, Scale: 2}
	ns := &arrow.TimestampType{Unit: arrow.Nanosecond}
	cases := []struct {
		name string
		v    types.Value
		dt   arrow.DataType
		want int32
	}{
		{"int", types.Value{I: 34}, types.Int32, 2017239379},
		{"long", types.Value{I: 34}, types.Int64, 2017239379},
		{"decimal", types.Value{D: decimal128.FromI64(1420)}, dec, -500754589},
		{"date", types.Value{I: day("2017-11-16")}, types.Date, -653330422},
		{"time", types.Value{I: (22*3600 + 31*60 + 8) * 1_000_000}, types.Time, -662762989},
		{"timestamp", types.Value{I: at("2017-11-16T22:31:08Z").UnixMicro()}, types.Timestamp, -2047944441},
		{"timestamp.000001", types.Value{I: at("2017-11-16T22:31:08.000001Z").UnixMicro()}, types.Timestamp, -1207196810},
		{"timestamptz", types.Value{I: at("2017-11-16T14:31:08-08:00").UnixMicro()}, types.TimestampTZ, -2047944441},
		{"timestamp_ns", types.Value{I: at("2017-11-16T22:31:08.000001001Z").UnixNano()}, ns, -1207196810},
		{"string", types.Value{S: "iceberg"}, types.String, 1210000089},
		{"uuid", types.Value{S: uuidBytes}, types.UUID, 1488055340},
		{"binary", types.Value{S: "\x00\x01\x02\x03"}, types.Binary, -188683207},
	}
	for _, c := range cases {
		c.v.Type = c.dt
		h, ok := bucketHash(c.v, c.dt)
		if !ok || int32(h) != c.want {
			t.Errorf("%s: hash %d (%t), want %d", c.name, int32(h), ok, c.want)
		}
	}
	// Negative decimals take their fewest bytes too; the hash is the bytes'.
	for _, c := range []struct {
		unscaled int64
		bytes    []byte
	}{{-1, []byte{0xff}}, {-128, []byte{0x80}}, {-129, []byte{0xff, 0x7f}}, {127, []byte{0x7f}}, {128, []byte{0x00, 0x80}}, {0, []byte{0}}} {
		h, _ := bucketHash(types.Value{Type: dec, D: decimal128.FromI64(c.unscaled)}, dec)
		if h != murmur3(c.bytes) {
			t.Errorf("decimal %d is not hashed as % x", c.unscaled, c.bytes)
		}
	}
	if _, ok := bucketHash(types.NullOf(types.Int64), types.Int64); ok {
		t.Error("NULL hashed")
	}
	if _, ok := bucketHash(types.FloatValue(1), types.Float64); ok {
		t.Error("a double hashed")
	}
	// The spec's values cover inputs of four bytes and multiples (long, binary,
	// UUID) and tails of two (the decimal) and three (the string); these, of none
	// and one, are the hash's well-known values.
	for in, want := range map[string]uint32{"": 0, "hello": 0x248bfa47, "The quick brown fox jumps over the lazy dog": 0x2e4ff723} {
		if got := murmur3([]byte(in)); got != want {
			t.Errorf("murmur3(%q) = %#x, want %#x", in, got, want)
		}
	}
	if got := bucket(uint32(0x80000003), 4); got != 3 {
		t.Errorf("bucket of a hash with its sign bit set: %d", got)
	}
}
