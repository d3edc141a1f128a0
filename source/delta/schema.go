package delta

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/types"
)

// field is one field of a Delta schema (metaData.schemaString): its logical name, type
// and column-mapping metadata.
type field struct {
	Name     string          `json:"name"`
	Type     json.RawMessage `json:"type"`
	Nullable bool            `json:"nullable"`
	Metadata map[string]any  `json:"metadata"`
}

// structType is a Delta struct type; a table's schema is one.
type structType struct {
	Type   string  `json:"type"`
	Fields []field `json:"fields"`
}

// complexType is any Delta type written as an object.
type complexType struct {
	Type              string          `json:"type"`
	Fields            []field         `json:"fields"`
	ElementType       json.RawMessage `json:"elementType"`
	ContainsNull      bool            `json:"containsNull"`
	KeyType           json.RawMessage `json:"keyType"`
	ValueType         json.RawMessage `json:"valueType"`
	ValueContainsNull bool            `json:"valueContainsNull"`
}

// column is one top-level column of a table as Lore reads it.
type column struct {
	name     string
	physical string // the name in data files, stats and partition values
	id       int32  // the column-mapping field id, 0 when none
	typ      arrow.DataType
	nullable bool
	// nested says how files name the fields inside the column under column mapping
	// (source.ColumnSource.Children); nil without it.
	nested []source.ColumnSource
}

// parseSchema reads a schemaString into the table's columns. mode is the column
// mapping mode ("", "none", "name" or "id").
func parseSchema(schemaString, mode string) ([]column, error) {
	var st structType
	if err := json.Unmarshal([]byte(schemaString), &st); err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %v", err)
	}
	if st.Type != "struct" {
		return nil, fmt.Errorf("schema is a %q, not a struct", st.Type)
	}
	cols := make([]column, 0, len(st.Fields))
	seen := map[string]bool{}
	for _, f := range st.Fields {
		if f.Name == "" || seen[strings.ToLower(f.Name)] {
			return nil, fmt.Errorf("schema has an empty or repeated column name %q", f.Name)
		}
		seen[strings.ToLower(f.Name)] = true
		dt, err := parseType(f.Type, 0)
		if err != nil {
			return nil, fmt.Errorf("column %q: %v", f.Name, err)
		}
		c := column{name: f.Name, physical: f.Name, typ: dt, nullable: f.Nullable}
		if mode == "name" || mode == "id" {
			p, ok := f.Metadata["delta.columnMapping.physicalName"].(string)
			if !ok || p == "" {
				return nil, fmt.Errorf("column %q has no physical name under column mapping mode %q", f.Name, mode)
			}
			c.physical = p
			if id, ok := f.Metadata["delta.columnMapping.id"].(float64); ok && id > 0 && id <= 1<<31-1 {
				c.id = int32(id)
			} else if mode == "id" {
				return nil, fmt.Errorf("column %q has no field id under column mapping mode \"id\"", f.Name)
			}
			if c.nested, err = nestedSources(f.Type, mode, 0); err != nil {
				return nil, fmt.Errorf("column %q: %v", f.Name, err)
			}
		}
		cols = append(cols, c)
	}
	return cols, nil
}

// nestedSources says how files name the fields nested in a type under column
// mapping: a struct's fields by their physical names, and in id mode by their field
// ids, at any depth (inside lists and maps too). nil for a type with no struct inside.
func nestedSources(raw json.RawMessage, mode string, depth int) ([]source.ColumnSource, error) {
	if depth > maxDepth || len(raw) == 0 || raw[0] != '{' {
		return nil, nil // a primitive's name; parseType refuses what is too deep
	}
	var ct complexType
	if err := json.Unmarshal(raw, &ct); err != nil {
		return nil, nil // parseType says what is wrong
	}
	var out []source.ColumnSource
	switch ct.Type {
	case "struct":
		out = make([]source.ColumnSource, len(ct.Fields))
		for i, f := range ct.Fields {
			// A field without a physical name (written before column mapping was
			// enabled, by a writer that did not assign one) is found by its name.
			name := f.Name
			if p, ok := f.Metadata["delta.columnMapping.physicalName"].(string); ok && p != "" {
				name = p
			}
			out[i].Names = []string{name}
			if id, ok := f.Metadata["delta.columnMapping.id"].(float64); ok && mode == "id" && id > 0 && id <= 1<<31-1 {
				out[i].FieldID = int32(id)
			}
			kids, err := nestedSources(f.Type, mode, depth+1)
			if err != nil {
				return nil, fmt.Errorf("field %q: %v", f.Name, err)
			}
			out[i].Children = kids
		}
	case "array":
		kids, err := nestedSources(ct.ElementType, mode, depth+1)
		if err != nil || kids == nil {
			return nil, err
		}
		out = []source.ColumnSource{{Children: kids}}
	case "map":
		key, err := nestedSources(ct.KeyType, mode, depth+1)
		if err != nil {
			return nil, err
		}
		value, err := nestedSources(ct.ValueType, mode, depth+1)
		if err != nil || (key == nil && value == nil) {
			return nil, err
		}
		out = []source.ColumnSource{{Children: key}, {Children: value}}
	}
	return out, nil
}

// maxDepth bounds the nesting of types a schema may declare.
const maxDepth = 64

// parseType maps a Delta type to the Arrow type Lore reads it as.
func parseType(raw json.RawMessage, depth int) (arrow.DataType, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("types nested deeper than %d", maxDepth)
	}
	var name string
	if err := json.Unmarshal(raw, &name); err == nil {
		return primitive(name)
	}
	var ct complexType
	if err := json.Unmarshal(raw, &ct); err != nil {
		return nil, fmt.Errorf("type %s is neither a name nor an object", raw)
	}
	switch ct.Type {
	case "struct":
		fields := make([]arrow.Field, len(ct.Fields))
		for i, f := range ct.Fields {
			dt, err := parseType(f.Type, depth+1)
			if err != nil {
				return nil, fmt.Errorf("field %q: %v", f.Name, err)
			}
			fields[i] = arrow.Field{Name: f.Name, Type: dt, Nullable: f.Nullable}
		}
		// Decimals inside nested values are 128-bit (types.WideInside).
		return types.WideInside(arrow.StructOf(fields...)), nil
	case "array":
		elem, err := parseType(ct.ElementType, depth+1)
		if err != nil {
			return nil, err
		}
		return types.WideInside(arrow.ListOfField(arrow.Field{Name: "element", Type: elem, Nullable: ct.ContainsNull})), nil
	case "map":
		k, err := parseType(ct.KeyType, depth+1)
		if err != nil {
			return nil, err
		}
		v, err := parseType(ct.ValueType, depth+1)
		if err != nil {
			return nil, err
		}
		m := arrow.MapOf(types.WideInside(k), types.WideInside(v))
		if t, ok := k.(*arrow.Decimal64Type); ok {
			m = arrow.MapOf(types.Wide(t), types.WideInside(v))
		}
		if t, ok := v.(*arrow.Decimal64Type); ok {
			m = arrow.MapOf(m.KeyType(), types.Wide(t))
		}
		m.SetItemNullable(ct.ValueContainsNull)
		return m, nil
	}
	return nil, fmt.Errorf("unknown type %q", ct.Type)
}

// primitive maps a Delta primitive type name.
func primitive(name string) (arrow.DataType, error) {
	switch name {
	case "string":
		return types.String, nil
	case "long":
		return types.Int64, nil
	case "integer":
		return types.Int32, nil
	case "short":
		return types.Int16, nil
	case "byte":
		return types.Int8, nil
	case "float":
		return types.Float32, nil
	case "double":
		return types.Float64, nil
	case "boolean":
		return types.Boolean, nil
	case "binary":
		return types.Binary, nil
	case "date":
		return types.Date, nil
	case "timestamp":
		return types.TimestampTZ, nil
	case "timestamp_ntz":
		return types.Timestamp, nil
	}
	if rest, ok := strings.CutPrefix(name, "decimal("); ok && strings.HasSuffix(rest, ")") {
		p, s, ok := strings.Cut(strings.TrimSuffix(rest, ")"), ",")
		precision, err1 := strconv.Atoi(strings.TrimSpace(p))
		scale, err2 := strconv.Atoi(strings.TrimSpace(s))
		if ok && err1 == nil && err2 == nil && precision >= 1 && precision <= 38 && scale >= 0 && scale <= precision {
			return types.Decimal(int32(precision), int32(scale)), nil
		}
		return nil, fmt.Errorf("invalid decimal type %q", name)
	}
	if name == "decimal" {
		return types.Decimal(10, 0), nil
	}
	return nil, fmt.Errorf("type %q is not supported", name)
}

// partitionValue types a partition value from the log, where every value is a
// string; NULL and the empty string both mean NULL. Timestamps are UTC instants,
// written with a space or a T and with or without a trailing Z.
func partitionValue(s *string, dt arrow.DataType) (types.Value, error) {
	if s == nil || *s == "" {
		return types.NullOf(dt), nil
	}
	return parseText(*s, dt)
}

// parseText reads a value the log writes as text (a partition value, a bound) as
// type dt.
func parseText(s string, dt arrow.DataType) (types.Value, error) {
	if dt.ID() == arrow.TIMESTAMP {
		t := strings.Replace(s, "T", " ", 1)
		if z, ok := strings.CutSuffix(t, "Z"); ok {
			t = z
		}
		v, err := kernels.ParseLiteral(t, types.Timestamp)
		if err != nil {
			// An explicit offset: read as an instant.
			if v, err = kernels.ParseLiteral(t, types.TimestampTZ); err != nil {
				return types.Value{}, err
			}
		}
		v.Type = dt
		return v, nil
	}
	if dt.ID() == arrow.BINARY {
		return types.Value{Type: dt, S: s}, nil
	}
	// Integers, the bounds of most tables, are read directly: the general cast
	// builds an array per value, and a snapshot reads a bound or two per file.
	if bits := intBits(dt); bits > 0 {
		if n, err := strconv.ParseInt(s, 10, bits); err == nil {
			return types.Value{Type: dt, I: n}, nil
		}
	}
	v, err := kernels.ParseLiteral(s, dt)
	if err != nil {
		return types.Value{}, err
	}
	v.Type = dt
	return v, nil
}

// intBits is the width of a signed integer type, 0 for any other type.
func intBits(dt arrow.DataType) int {
	switch dt.ID() {
	case arrow.INT8:
		return 8
	case arrow.INT16:
		return 16
	case arrow.INT32:
		return 32
	case arrow.INT64:
		return 64
	}
	return 0
}

// sources says how data files name each column: their physical names, and field ids
// in id mode.
func sources(cols []column, mode string) []source.ColumnSource {
	out := make([]source.ColumnSource, len(cols))
	for i, c := range cols {
		if mode == "name" || mode == "id" {
			out[i].Names = []string{c.physical}
		}
		if mode == "id" {
			out[i].FieldID = c.id
		}
		out[i].Children = c.nested
	}
	return out
}

// corrupt is the error of a log that cannot be read as the protocol defines it.
func corrupt(file string, format string, args ...any) error {
	return errs.New(errs.CorruptSource, "Delta log %q: %s", file, fmt.Sprintf(format, args...))
}
