package iceberg

import (
	"encoding/json"
	"strings"
	"testing"
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
