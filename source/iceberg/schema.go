package iceberg

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"

	"github.com/loredb/lore/exec/kernels"
	"github.com/loredb/lore/source"
	"github.com/loredb/lore/types"
)

// maxDepth bounds the nesting of a schema's types.
const maxDepth = 64

// arrowType is the Lore type of an Iceberg type.
func arrowType(t ice.Type, depth int) (arrow.DataType, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("types nested deeper than %d", maxDepth)
	}
	switch t := t.(type) {
	case ice.BooleanType:
		return types.Boolean, nil
	case ice.Int32Type:
		return types.Int32, nil
	case ice.Int64Type:
		return types.Int64, nil
	case ice.Float32Type:
		return types.Float32, nil
	case ice.Float64Type:
		return types.Float64, nil
	case ice.DecimalType:
		if t.Precision() < 1 || t.Precision() > 38 || t.Scale() < 0 || t.Scale() > t.Precision() {
			return nil, fmt.Errorf("decimal(%d, %d) is not a valid decimal", t.Precision(), t.Scale())
		}
		return &arrow.Decimal128Type{Precision: int32(t.Precision()), Scale: int32(t.Scale())}, nil
	case ice.DateType:
		return types.Date, nil
	case ice.TimeType:
		return types.Time, nil
	case ice.TimestampType:
		return types.Timestamp, nil
	case ice.TimestampTzType:
		return types.TimestampTZ, nil
	case ice.TimestampNsType:
		return types.TimestampNS, nil
	case ice.TimestampTzNsType:
		return &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, nil
	case ice.StringType:
		return types.String, nil
	case ice.UUIDType:
		return types.UUID, nil
	case ice.FixedType, ice.BinaryType:
		return types.Binary, nil
	case *ice.StructType:
		fields := make([]arrow.Field, 0, len(t.FieldList))
		for _, f := range t.FieldList {
			dt, err := arrowType(f.Type, depth+1)
			if err != nil {
				return nil, err
			}
			fields = append(fields, arrow.Field{Name: f.Name, Type: dt, Nullable: true})
		}
		return arrow.StructOf(fields...), nil
	case *ice.ListType:
		dt, err := arrowType(t.Element, depth+1)
		if err != nil {
			return nil, err
		}
		return arrow.ListOfField(arrow.Field{Name: "element", Type: dt, Nullable: !t.ElementRequired}), nil
	case *ice.MapType:
		k, err := arrowType(t.KeyType, depth+1)
		if err != nil {
			return nil, err
		}
		v, err := arrowType(t.ValueType, depth+1)
		if err != nil {
			return nil, err
		}
		return arrow.MapOf(k, v), nil
	}
	return nil, fmt.Errorf("the Iceberg type %s is not one Lore reads", t)
}

// rawSchemas is what iceberg-go's parse of the metadata loses and Lore needs: the
// initial-default values of top-level fields, as the JSON states them (a long default
// beyond 2^53 would not survive a float64).
type rawSchemas struct {
	Schemas []rawSchema `json:"schemas"`
	Schema  *rawSchema  `json:"schema"`
}

type rawSchema struct {
	ID     *int `json:"schema-id"`
	Fields []struct {
		ID      int             `json:"id"`
		Default json.RawMessage `json:"initial-default"`
	} `json:"fields"`
}

// defaults are the initial-default values of schema id's top-level fields, by field
// id, unparsed.
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
		for _, f := range s.Fields {
			if len(f.Default) > 0 && string(f.Default) != "null" {
				out[f.ID] = f.Default
			}
		}
		break
	}
	return out
}

// defaultValue reads an initial-default (Iceberg's JSON single-value serialisation)
// as type dt.
func defaultValue(raw json.RawMessage, dt arrow.DataType) (types.Value, error) {
	if types.IsNested(dt) {
		return types.Value{}, fmt.Errorf("a default for a nested column")
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

// columnSources says how data files name each field of the schema: by field id, else
// the names the name mapping gives the field (else its own name), and what a file
// without it reads.
func columnSources(fields []ice.NestedField, dts []arrow.DataType, mapping ice.NameMapping, defaults map[int]json.RawMessage) ([]source.ColumnSource, error) {
	names := map[int][]string{}
	for _, m := range mapping {
		if m.FieldID != nil {
			names[*m.FieldID] = append(names[*m.FieldID], m.Names...)
		}
	}
	out := make([]source.ColumnSource, len(fields))
	for i, f := range fields {
		out[i].FieldID = int32(f.ID)
		// A field the mapping describes is found by its names alone: its own name
		// may be another field's in older files (renamed, then reused). One a
		// mapping leaves out is in no file without field ids (the spec's rule: the
		// mapping is the whole truth of such files).
		switch n, ok := names[f.ID]; {
		case ok:
			out[i].Names = n
		case mapping != nil:
			out[i].Unmapped = true
		default:
			out[i].Names = []string{f.Name}
		}
		if raw, ok := defaults[f.ID]; ok {
			v, err := defaultValue(raw, dts[i])
			if err != nil {
				return nil, fmt.Errorf("the initial-default %s of column %q: %v", raw, f.Name, err)
			}
			out[i].Default, out[i].HasDefault = v, true
		}
	}
	return out, nil
}
