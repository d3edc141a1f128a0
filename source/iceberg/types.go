package iceberg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The schemas of a metadata file: structs of fields, each with an id, a name, and a
// primitive or nested type, as the spec serialises them to JSON. A schema is decoded
// once into plain JSON values and then walked, so that deep nesting costs no more
// than the bytes it takes (encoding/json bounds the nesting itself).

// typeKind is the kind of an Iceberg type.
type typeKind uint8

const (
	kindBoolean typeKind = iota + 1
	kindInt
	kindLong
	kindFloat
	kindDouble
	kindDecimal
	kindDate
	kindTime
	kindTimestamp
	kindTimestampTZ
	kindTimestampNS
	kindTimestampTZNS
	kindString
	kindUUID
	kindFixed
	kindBinary
	// kindUnread is a type of the format Lore does not read (unknown, variant,
	// geometry, geography): a schema may hold one, a listing may not.
	kindUnread
	kindStruct
	kindList
	kindMap
)

// icebergType is the type of a schema field.
type icebergType struct {
	kind typeKind
	// name is a primitive type's name as the metadata writes it ("long",
	// "decimal(9, 2)"), for messages.
	name             string
	precision, scale int           // a decimal's
	fields           []schemaField // a struct's fields
	elem             *schemaField  // a list's element
	key, value       *schemaField  // a map's key and value
}

// String is the type as messages name it.
func (t *icebergType) String() string {
	switch t.kind {
	case kindStruct:
		var b strings.Builder
		b.WriteString("struct<")
		for i, f := range t.fields {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%d: %s: %s", f.ID, f.Name, f.Type)
		}
		b.WriteString(">")
		return b.String()
	case kindList:
		return "list<" + t.elem.Type.String() + ">"
	case kindMap:
		return "map<" + t.key.Type.String() + ", " + t.value.Type.String() + ">"
	}
	return t.name
}

// schemaField is one field of a schema or struct; a list's element and a map's key
// and value are fields too (named element, key and value).
type schemaField struct {
	ID       int
	Name     string
	Required bool
	Type     *icebergType
}

// schema is one of a table's schemas.
type schema struct {
	ID     int
	Fields []schemaField
}

// UnmarshalJSON parses a schema: a struct type with a schema id.
func (s *schema) UnmarshalJSON(b []byte) error {
	v, err := decodeJSONValue(b)
	if err != nil {
		return err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("a schema is %s, not an object", jsonKind(v))
	}
	typ, ok := lookup(obj, "type")
	if !ok || typ == nil {
		return errors.New("a schema without a type")
	}
	if typ != "struct" {
		return fmt.Errorf("a schema of type %v, not struct", typ)
	}
	var out schema
	if id, ok := lookup(obj, "schema-id"); ok && id != nil {
		if out.ID, err = jsonInt(id, "schema-id"); err != nil {
			return err
		}
	}
	if ids, ok := lookup(obj, "identifier-field-ids"); ok && ids != nil {
		list, ok := ids.([]any)
		if !ok {
			return fmt.Errorf("identifier-field-ids is %s, not an array", jsonKind(ids))
		}
		for _, id := range list {
			if id == nil {
				continue
			}
			if _, err := jsonInt(id, "identifier-field-ids"); err != nil {
				return err
			}
		}
	}
	fields, ok := lookup(obj, "fields")
	if !ok || fields == nil {
		return errors.New("a schema without fields")
	}
	if out.Fields, err = parseFields(fields); err != nil {
		return err
	}
	if err := checkFieldIDs(out.Fields, map[int]string{}); err != nil {
		return err
	}
	*s = out
	return nil
}

// decodeJSONValue decodes one JSON value into plain values, numbers kept as
// json.Number so that integers of any size survive.
func decodeJSONValue(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// parseFields parses a struct's fields.
func parseFields(v any) ([]schemaField, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("fields are %s, not an array", jsonKind(v))
	}
	out := make([]schemaField, len(list))
	for i, x := range list {
		f, err := parseField(x)
		if err != nil {
			return nil, err
		}
		out[i] = f
	}
	return out, nil
}

// parseField parses one field of a struct: its id, name, type and whether it is
// required are all required.
func parseField(v any) (schemaField, error) {
	var f schemaField
	obj, ok := v.(map[string]any)
	if !ok {
		return f, fmt.Errorf("a field is %s, not an object", jsonKind(v))
	}
	name, ok := lookup(obj, "name")
	if ok && name != nil {
		if f.Name, ok = name.(string); !ok {
			return f, fmt.Errorf("a field's name is %s, not a string", jsonKind(name))
		}
	}
	if f.Name == "" {
		return f, errors.New("a field without a name")
	}
	id, ok := lookup(obj, "id")
	if !ok || id == nil {
		return f, fmt.Errorf("field %q has no id", f.Name)
	}
	var err error
	if f.ID, err = jsonInt(id, "id"); err != nil {
		return f, fmt.Errorf("field %q: %w", f.Name, err)
	}
	typ, ok := lookup(obj, "type")
	if !ok || typ == nil {
		return f, fmt.Errorf("field %q has no type", f.Name)
	}
	if f.Type, err = parseType(typ); err != nil {
		return f, fmt.Errorf("field %q: %w", f.Name, err)
	}
	if f.Required, err = requiredBool(obj, "required"); err != nil {
		return f, fmt.Errorf("field %q: %w", f.Name, err)
	}
	return f, nil
}

// parseType parses a type: a primitive's name, or an object stating a struct, a list
// or a map.
func parseType(v any) (*icebergType, error) {
	switch v := v.(type) {
	case string:
		return primitiveType(v)
	case map[string]any:
		name, _ := lookup(v, "type")
		switch name {
		case "struct":
			t := &icebergType{kind: kindStruct, name: "struct"}
			if fields, ok := lookup(v, "fields"); ok && fields != nil {
				var err error
				if t.fields, err = parseFields(fields); err != nil {
					return nil, err
				}
			}
			return t, nil
		case "list":
			elem, err := nestedField(v, "element", "element-id", "element", "element-required")
			if err != nil {
				return nil, err
			}
			return &icebergType{kind: kindList, name: "list", elem: elem}, nil
		case "map":
			key, err := nestedField(v, "key", "key-id", "key", "")
			if err != nil {
				return nil, err
			}
			value, err := nestedField(v, "value", "value-id", "value", "value-required")
			if err != nil {
				return nil, err
			}
			return &icebergType{kind: kindMap, name: "map", key: key, value: value}, nil
		}
		return nil, fmt.Errorf("unknown nested type %v", name)
	}
	return nil, fmt.Errorf("a type is %s, neither a name nor an object", jsonKind(v))
}

// nestedField parses a list's element or a map's key or value, named name, from the
// keys of its id, its type and whether it is required (a map's key always is: its
// key is "").
func nestedField(obj map[string]any, name, idKey, typeKey, requiredKey string) (*schemaField, error) {
	f := &schemaField{Name: name, Required: true}
	id, ok := lookup(obj, idKey)
	if !ok || id == nil {
		return nil, fmt.Errorf("a nested type without %q", idKey)
	}
	var err error
	if f.ID, err = jsonInt(id, idKey); err != nil {
		return nil, err
	}
	typ, ok := lookup(obj, typeKey)
	if !ok || typ == nil {
		return nil, fmt.Errorf("a nested type without %q", typeKey)
	}
	if f.Type, err = parseType(typ); err != nil {
		return nil, err
	}
	if requiredKey != "" {
		if f.Required, err = requiredBool(obj, requiredKey); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// primitiveType parses a primitive type's name.
func primitiveType(name string) (*icebergType, error) {
	t := &icebergType{name: name}
	switch name {
	case "boolean":
		t.kind = kindBoolean
	case "int":
		t.kind = kindInt
	case "long":
		t.kind = kindLong
	case "float":
		t.kind = kindFloat
	case "double":
		t.kind = kindDouble
	case "date":
		t.kind = kindDate
	case "time":
		t.kind = kindTime
	case "timestamp":
		t.kind = kindTimestamp
	case "timestamptz":
		t.kind = kindTimestampTZ
	case "timestamp_ns":
		t.kind = kindTimestampNS
	case "timestamptz_ns":
		t.kind = kindTimestampTZNS
	case "string":
		t.kind = kindString
	case "uuid":
		t.kind = kindUUID
	case "binary":
		t.kind = kindBinary
	case "unknown", "variant":
		t.kind = kindUnread
	default:
		switch {
		case strings.HasPrefix(name, "fixed"):
			n, ok := strings.CutPrefix(name, "fixed[")
			if n, ok = strings.CutSuffix(n, "]"); !ok || !allDigits(n) {
				return nil, fmt.Errorf("invalid type %q", name)
			}
			if _, err := strconv.Atoi(n); err != nil {
				return nil, fmt.Errorf("invalid type %q", name)
			}
			t.kind = kindFixed
		case strings.HasPrefix(name, "decimal"):
			p, s, ok := decimalParams(name)
			if !ok {
				return nil, fmt.Errorf("invalid type %q", name)
			}
			if p < 1 || p > 38 || s < 0 || s > p {
				return nil, fmt.Errorf("%q is not a valid decimal", name)
			}
			t.kind, t.precision, t.scale = kindDecimal, p, s
		case geoType(name, "geometry", 1), geoType(name, "geography", 2):
			t.kind = kindUnread
		default:
			return nil, fmt.Errorf("unrecognized type %q", name)
		}
	}
	return t, nil
}

// jsonSpace are the characters a type name may have around its parameters.
const jsonSpace = " \t\n\f\r"

// decimalParams reads decimal(P, S).
func decimalParams(name string) (p, s int, ok bool) {
	in, ok := strings.CutPrefix(name, "decimal(")
	if in, ok = strings.CutSuffix(in, ")"); !ok {
		return 0, 0, false
	}
	ps, ss, ok := strings.Cut(in, ",")
	ps, ss = strings.Trim(ps, jsonSpace), strings.Trim(ss, jsonSpace)
	if !ok || !allDigits(ps) || !allDigits(ss) {
		return 0, 0, false
	}
	p, err1 := strconv.Atoi(ps)
	s, err2 := strconv.Atoi(ss)
	return p, s, err1 == nil && err2 == nil
}

// geoType reports whether name is the geo type word (case aside), alone or with up
// to maxParams parameters in parentheses.
func geoType(name, word string, maxParams int) bool {
	if len(name) < len(word) || !strings.EqualFold(name[:len(word)], word) {
		return false
	}
	rest := strings.TrimLeft(name[len(word):], jsonSpace)
	if rest == "" {
		return true
	}
	in, ok := strings.CutPrefix(rest, "(")
	if in, ok = strings.CutSuffix(in, ")"); !ok || strings.ContainsAny(in, "()") {
		return false
	}
	params := strings.Split(in, ",")
	if len(params) > maxParams {
		return false
	}
	for _, p := range params {
		if strings.Trim(p, jsonSpace) == "" {
			return false
		}
	}
	return true
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// checkFieldIDs reports a field id used twice in a schema, at any depth; seen holds
// the ids met so far with their fields' names. Ids not above zero are placeholders
// and may repeat.
func checkFieldIDs(fields []schemaField, seen map[int]string) error {
	for _, f := range fields {
		if f.ID > 0 {
			if prev, ok := seen[f.ID]; ok {
				return fmt.Errorf("fields %q and %q have the same id %d", prev, f.Name, f.ID)
			}
			seen[f.ID] = f.Name
		}
		var kids []schemaField
		switch t := f.Type; t.kind {
		case kindStruct:
			kids = t.fields
		case kindList:
			kids = []schemaField{*t.elem}
		case kindMap:
			kids = []schemaField{*t.key, *t.value}
		}
		if err := checkFieldIDs(kids, seen); err != nil {
			return err
		}
	}
	return nil
}

// lookup finds key in a JSON object as encoding/json matches struct fields: the key
// itself, else one equal to it but for case.
func lookup(obj map[string]any, key string) (any, bool) {
	if v, ok := obj[key]; ok {
		return v, true
	}
	for k, v := range obj {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return nil, false
}

// jsonInt reads a JSON integer that must fit an int.
func jsonInt(v any, what string) (int, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%s is %s, not a number", what, jsonKind(v))
	}
	i, err := strconv.Atoi(string(n))
	if err != nil {
		return 0, fmt.Errorf("%s %s is not an integer", what, n)
	}
	return i, nil
}

// requiredBool reads the boolean obj must hold under key.
func requiredBool(obj map[string]any, key string) (bool, error) {
	v, ok := lookup(obj, key)
	if !ok || v == nil {
		return false, fmt.Errorf("no %q", key)
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("%s is %s, not a boolean", key, jsonKind(v))
	}
	return b, nil
}

// jsonKind names the JSON kind of a decoded value, for messages.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
