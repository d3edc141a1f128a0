package iceberg

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/types"
)

// maxDepth bounds the nesting of a schema's types.
const maxDepth = 64

// arrowType is the Lore type of an Iceberg type.
func arrowType(t *icebergType, depth int) (arrow.DataType, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("types nested deeper than %d", maxDepth)
	}
	switch t.kind {
	case kindBoolean:
		return types.Boolean, nil
	case kindInt:
		return types.Int32, nil
	case kindLong:
		return types.Int64, nil
	case kindFloat:
		return types.Float32, nil
	case kindDouble:
		return types.Float64, nil
	case kindDecimal:
		if t.precision < 1 || t.precision > 38 || t.scale < 0 || t.scale > t.precision {
			return nil, fmt.Errorf("decimal(%d, %d) is not a valid decimal", t.precision, t.scale)
		}
		return types.Decimal(int32(t.precision), int32(t.scale)), nil
	case kindDate:
		return types.Date, nil
	case kindTime:
		return types.Time, nil
	case kindTimestamp:
		return types.Timestamp, nil
	case kindTimestampTZ:
		return types.TimestampTZ, nil
	case kindTimestampNS:
		return types.TimestampNS, nil
	case kindTimestampTZNS:
		return &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, nil
	case kindString:
		return types.String, nil
	case kindUUID:
		return types.UUID, nil
	case kindFixed, kindBinary:
		return types.Binary, nil
	case kindStruct:
		fields := make([]arrow.Field, 0, len(t.fields))
		for _, f := range t.fields {
			dt, err := arrowType(f.Type, depth+1)
			if err != nil {
				return nil, err
			}
			fields = append(fields, arrow.Field{Name: f.Name, Type: dt, Nullable: true})
		}
		// Decimals inside nested values are 128-bit (types.WideInside).
		return types.WideInside(arrow.StructOf(fields...)), nil
	case kindList:
		dt, err := arrowType(t.elem.Type, depth+1)
		if err != nil {
			return nil, err
		}
		return types.WideInside(arrow.ListOfField(arrow.Field{Name: "element", Type: dt, Nullable: !t.elem.Required})), nil
	case kindMap:
		k, err := arrowType(t.key.Type, depth+1)
		if err != nil {
			return nil, err
		}
		v, err := arrowType(t.value.Type, depth+1)
		if err != nil {
			return nil, err
		}
		return types.WideInside(arrow.MapOf(k, v)), nil
	}
	return nil, fmt.Errorf("the Iceberg type %s is not one Lore reads", t)
}

// rawSchemas are the initial-default values of fields, top-level and nested, as the
// metadata's JSON states them, unparsed: each is read as its column's type
// (defaultValue), and a long default beyond 2^53 must not pass through a float64.
type rawSchemas struct {
	Schemas []rawSchema `json:"schemas"`
	Schema  *rawSchema  `json:"schema"`
}

type rawSchema struct {
	ID     *int       `json:"schema-id"`
	Fields []rawField `json:"fields"`
}

// rawField is one field of a struct, with its type unparsed: a name, or an object
// holding a struct's fields, a list's element or a map's key and value.
type rawField struct {
	ID      int             `json:"id"`
	Default json.RawMessage `json:"initial-default"`
	Type    json.RawMessage `json:"type"`
}

type rawType struct {
	Fields  []rawField      `json:"fields"`
	Element json.RawMessage `json:"element"`
	Key     json.RawMessage `json:"key"`
	Value   json.RawMessage `json:"value"`
}

// defaults are the initial-default values of schema id's fields, top-level and
// nested (field ids are unique within a schema), by field id, unparsed.
func (r *rawSchemas) defaults(id int) map[int]json.RawMessage {
	out := map[int]json.RawMessage{}
	all := r.Schemas
	if r.Schema != nil {
		all = append(all, *r.Schema)
	}
	for _, s := range all {
		if s.ID != nil && *s.ID != id && (len(all) > 1 || r.Schema == nil) {
			continue
		}
		collectDefaults(s.Fields, out, 0)
		break
	}
	return out
}

// collectDefaults adds the initial-defaults of fields and of the fields nested in
// their types to out.
func collectDefaults(fields []rawField, out map[int]json.RawMessage, depth int) {
	if depth > maxDepth {
		return // arrowType refuses the schema
	}
	for _, f := range fields {
		if len(f.Default) > 0 && string(f.Default) != "null" {
			out[f.ID] = f.Default
		}
		collectTypeDefaults(f.Type, out, depth+1)
	}
}

func collectTypeDefaults(raw json.RawMessage, out map[int]json.RawMessage, depth int) {
	if len(raw) == 0 || raw[0] != '{' || depth > maxDepth {
		return // a primitive type's name
	}
	var t rawType
	if json.Unmarshal(raw, &t) != nil {
		return
	}
	collectDefaults(t.Fields, out, depth)
	collectTypeDefaults(t.Element, out, depth+1)
	collectTypeDefaults(t.Key, out, depth+1)
	collectTypeDefaults(t.Value, out, depth+1)
}

// defaultValue reads an initial-default (Iceberg's JSON single-value serialisation)
// as type dt. A struct's default is null or {}: the spec keeps the defaults of a
// struct's fields on the fields, so {} is a struct whose fields read as their own
// defaults, and is returned as a non-NULL value of the struct type. Lists and maps
// have no default but NULL.
func defaultValue(raw json.RawMessage, dt arrow.DataType) (types.Value, error) {
	if dt.ID() == arrow.STRUCT {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil || len(m) > 0 {
			return types.Value{}, fmt.Errorf("a struct's default is not {}")
		}
		return types.Value{Type: dt}, nil
	}
	if types.IsNested(dt) {
		return types.Value{}, fmt.Errorf("a default for a list or map")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		// A JSON number or boolean: its text.
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return types.Value{}, err
		}
		s = strings.TrimSpace(string(raw))
	} else {
		switch {
		case types.IsBinary(dt) && !types.IsUUID(dt):
			b, err := hex.DecodeString(s)
			if err != nil {
				return types.Value{}, err
			}
			return types.Value{Type: dt, S: string(b)}, nil
		case dt.ID() == arrow.TIMESTAMP:
			s = strings.Replace(s, "T", " ", 1)
		}
	}
	v, err := kernels.ParseLiteral(s, dt)
	if err != nil {
		return types.Value{}, err
	}
	v.Type = dt
	return v, nil
}

// columnSources says how data files name each field of the schema and each field
// nested in it (ColumnSource.Children): by field id, else the names the name mapping
// gives the field (else its own name), and what a file without it reads.
func columnSources(fields []schemaField, dts []arrow.DataType, mapping nameMapping, defaults map[int]json.RawMessage) ([]source.ColumnSource, error) {
	names := map[int][]string{}
	mappedNames(mapping, names, 0)
	out := make([]source.ColumnSource, len(fields))
	for i, f := range fields {
		cs, err := fieldSource(f.ID, f.Name, f.Type, dts[i], names, defaults, 0)
		if err != nil {
			return nil, err
		}
		if _, ok := names[f.ID]; !ok && mapping != nil {
			// One a mapping leaves out is in no file without field ids (the spec's
			// rule: the mapping is the whole truth of such files).
			cs.Names, cs.Unmapped = nil, true
		}
		out[i] = cs
	}
	return out, nil
}

// mappedNames adds the names a name mapping gives each field, nested ones included,
// by field id.
func mappedNames(fields []mappedField, out map[int][]string, depth int) {
	if depth > maxDepth {
		return
	}
	for _, m := range fields {
		if m.FieldID != nil {
			out[*m.FieldID] = append(out[*m.FieldID], m.Names...)
		}
		mappedNames(m.Fields, out, depth+1)
	}
}

// fieldSource is the ColumnSource of the field id called name, of Iceberg type t and
// Lore type dt, with those of the fields nested in it.
func fieldSource(id int, name string, t *icebergType, dt arrow.DataType, names map[int][]string, defaults map[int]json.RawMessage, depth int) (source.ColumnSource, error) {
	cs := source.ColumnSource{FieldID: int32(id)}
	if depth > maxDepth {
		return cs, fmt.Errorf("types nested deeper than %d", maxDepth)
	}
	// A field the mapping describes is found by its names alone: its own name may be
	// another field's in older files (renamed, then reused).
	if n, ok := names[id]; ok {
		cs.Names = n
	} else {
		cs.Names = []string{name}
	}
	if raw, ok := defaults[id]; ok {
		v, err := defaultValue(raw, dt)
		if err != nil {
			return cs, fmt.Errorf("the initial-default %s of field %q: %w", raw, name, err)
		}
		cs.Default, cs.HasDefault = v, true
	}
	switch t.kind {
	case kindStruct:
		st, ok := dt.(*arrow.StructType)
		if !ok || st.NumFields() != len(t.fields) {
			return cs, fmt.Errorf("BUG: field %q of type %s read as %s", name, t, dt)
		}
		cs.Children = make([]source.ColumnSource, len(t.fields))
		for i, f := range t.fields {
			kid, err := fieldSource(f.ID, f.Name, f.Type, st.Field(i).Type, names, defaults, depth+1)
			if err != nil {
				return cs, err
			}
			cs.Children[i] = kid
		}
	case kindList:
		lt, ok := dt.(*arrow.ListType)
		if !ok {
			return cs, fmt.Errorf("BUG: field %q of type %s read as %s", name, t, dt)
		}
		kid, err := fieldSource(t.elem.ID, "element", t.elem.Type, lt.Elem(), names, defaults, depth+1)
		if err != nil {
			return cs, err
		}
		cs.Children = []source.ColumnSource{kid}
	case kindMap:
		mt, ok := dt.(*arrow.MapType)
		if !ok {
			return cs, fmt.Errorf("BUG: field %q of type %s read as %s", name, t, dt)
		}
		key, err := fieldSource(t.key.ID, "key", t.key.Type, mt.KeyType(), names, defaults, depth+1)
		if err != nil {
			return cs, err
		}
		value, err := fieldSource(t.value.ID, "value", t.value.Type, mt.ItemType(), names, defaults, depth+1)
		if err != nil {
			return cs, err
		}
		cs.Children = []source.ColumnSource{key, value}
	}
	return cs, nil
}
