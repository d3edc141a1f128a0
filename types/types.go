package types

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Frequently used types.
var (
	Boolean     arrow.DataType = arrow.FixedWidthTypes.Boolean
	Int8        arrow.DataType = arrow.PrimitiveTypes.Int8
	Int16       arrow.DataType = arrow.PrimitiveTypes.Int16
	Int32       arrow.DataType = arrow.PrimitiveTypes.Int32
	Int64       arrow.DataType = arrow.PrimitiveTypes.Int64
	Uint8       arrow.DataType = arrow.PrimitiveTypes.Uint8
	Uint16      arrow.DataType = arrow.PrimitiveTypes.Uint16
	Uint32      arrow.DataType = arrow.PrimitiveTypes.Uint32
	Uint64      arrow.DataType = arrow.PrimitiveTypes.Uint64
	Float32     arrow.DataType = arrow.PrimitiveTypes.Float32
	Float64     arrow.DataType = arrow.PrimitiveTypes.Float64
	String      arrow.DataType = arrow.BinaryTypes.String
	Binary      arrow.DataType = arrow.BinaryTypes.Binary
	Date        arrow.DataType = arrow.FixedWidthTypes.Date32
	Timestamp   arrow.DataType = &arrow.TimestampType{Unit: arrow.Microsecond}
	TimestampNS arrow.DataType = &arrow.TimestampType{Unit: arrow.Nanosecond}
	TimestampTZ arrow.DataType = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	Interval    arrow.DataType = arrow.FixedWidthTypes.MonthDayNanoInterval
	Null        arrow.DataType = arrow.Null
)

// Name is the SQL name of a type, as DuckDB spells it.
func Name(dt arrow.DataType) string {
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		return Name(t.ValueType)
	case *UUIDType:
		return "UUID"
	case *arrow.Decimal128Type:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale)
	case *arrow.Decimal256Type:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale)
	case *arrow.TimestampType:
		name := "TIMESTAMP"
		switch t.Unit {
		case arrow.Second:
			name = "TIMESTAMP_S"
		case arrow.Millisecond:
			name = "TIMESTAMP_MS"
		case arrow.Nanosecond:
			name = "TIMESTAMP_NS"
		}
		if t.TimeZone != "" {
			return name + " WITH TIME ZONE"
		}
		return name
	case *arrow.ListType:
		return innerName(t.Elem()) + "[]"
	case *arrow.LargeListType:
		return innerName(t.Elem()) + "[]"
	case *arrow.FixedSizeListType:
		return fmt.Sprintf("%s[%d]", innerName(t.Elem()), t.Len())
	case *arrow.StructType:
		parts := make([]string, t.NumFields())
		for i, f := range t.Fields() {
			parts[i] = quoteIdent(f.Name) + " " + innerName(f.Type)
		}
		return "STRUCT(" + strings.Join(parts, ", ") + ")"
	case *arrow.MapType:
		return "MAP(" + innerName(t.KeyType()) + ", " + innerName(t.ItemType()) + ")"
	}
	switch dt.ID() {
	case arrow.NULL:
		return "NULL"
	case arrow.BOOL:
		return "BOOLEAN"
	case arrow.INT8:
		return "TINYINT"
	case arrow.INT16:
		return "SMALLINT"
	case arrow.INT32:
		return "INTEGER"
	case arrow.INT64:
		return "BIGINT"
	case arrow.UINT8:
		return "UTINYINT"
	case arrow.UINT16:
		return "USMALLINT"
	case arrow.UINT32:
		return "UINTEGER"
	case arrow.UINT64:
		return "UBIGINT"
	case arrow.FLOAT16, arrow.FLOAT32:
		return "FLOAT"
	case arrow.FLOAT64:
		return "DOUBLE"
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return "VARCHAR"
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY:
		return "BLOB"
	case arrow.DATE32, arrow.DATE64:
		return "DATE"
	case arrow.TIME32, arrow.TIME64:
		return "TIME"
	case arrow.INTERVAL_MONTH_DAY_NANO, arrow.INTERVAL_MONTHS, arrow.INTERVAL_DAY_TIME, arrow.DURATION:
		return "INTERVAL"
	}
	return strings.ToUpper(dt.String())
}

// QuoteIdent writes s as a SQL identifier: as it is when it is a plain lower-case
// name, else double-quoted with inner quotes doubled.
func QuoteIdent(s string) string {
	if s != "" && strings.ToLower(s) == s && !strings.ContainsAny(s, " \"'.,()-/*+") && (s[0] < '0' || s[0] > '9') {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// QuoteString writes s as a SQL string literal.
func QuoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// innerName is the name of a type nested in another's: the NULL type is quoted
// there, as DuckDB writes it ("NULL"[]).
func innerName(dt arrow.DataType) string {
	if dt.ID() == arrow.NULL {
		return `"NULL"`
	}
	return Name(dt)
}

// quoteIdent quotes a STRUCT field name in a type's name when it is not a plain
// word (letters of any case, digits and _, not starting with a digit) or is a
// reserved word.
func quoteIdent(s string) string {
	plain := s != "" && (s[0] < '0' || s[0] > '9') && !reservedWords[strings.ToLower(s)]
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			plain = false
		}
	}
	if plain {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// reservedWords are SQL's reserved words, which a field name is quoted to be.
var reservedWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`all analyse analyze and any array as asc asymmetric both case
		cast check collate column constraint create current_catalog current_date current_role
		current_time current_timestamp current_user default deferrable desc distinct do else end
		except false fetch for foreign from grant group having in initially intersect into
		lateral leading limit localtime localtimestamp not null offset on only or order placing
		primary references returning select session_user some symmetric table then to trailing
		true union unique user using variadic when where window with`) {
		m[w] = true
	}
	return m
}()

// Parse reads a SQL type name (as written in CAST, ::, or a catalog column
// definition) and returns its Arrow type. Names are case-insensitive; the common
// PostgreSQL and DuckDB spellings are accepted.
func Parse(name string) (arrow.DataType, error) {
	n := strings.ToUpper(strings.Join(strings.Fields(name), " "))
	n = strings.TrimPrefix(n, "PG_CATALOG.")
	if strings.HasSuffix(n, "[]") {
		elem, err := Parse(n[:len(n)-2])
		if err != nil {
			return nil, err
		}
		return arrow.ListOf(elem), nil
	}
	if strings.HasPrefix(n, "DECIMAL") || strings.HasPrefix(n, "NUMERIC") {
		p, s := int32(18), int32(3)
		if i := strings.IndexByte(n, '('); i >= 0 && strings.HasSuffix(n, ")") {
			args := strings.Split(n[i+1:len(n)-1], ",")
			pv, err := strconv.Atoi(strings.TrimSpace(args[0]))
			if err != nil || pv < 1 || pv > 38 {
				return nil, fmt.Errorf("invalid decimal precision in %q", name)
			}
			p, s = int32(pv), 0
			if len(args) > 1 {
				sv, err := strconv.Atoi(strings.TrimSpace(args[1]))
				if err != nil || sv < 0 || sv > pv {
					return nil, fmt.Errorf("invalid decimal scale in %q", name)
				}
				s = int32(sv)
			}
		} else if n != "DECIMAL" && n != "NUMERIC" {
			return nil, fmt.Errorf("unknown type %q", name)
		}
		return &arrow.Decimal128Type{Precision: p, Scale: s}, nil
	}
	if i := strings.IndexByte(n, '('); i >= 0 {
		if !strings.HasSuffix(n, ")") {
			return nil, fmt.Errorf("unknown type %q", name)
		}
		// VARCHAR(10), CHAR(3): the length is not enforced.
		base := strings.TrimSpace(n[:i])
		switch base {
		case "VARCHAR", "CHAR", "CHARACTER", "CHARACTER VARYING", "BPCHAR", "TEXT", "STRING":
			return String, nil
		}
		return nil, fmt.Errorf("unknown type %q", name)
	}
	switch n {
	case "BOOLEAN", "BOOL", "LOGICAL":
		return Boolean, nil
	case "TINYINT", "INT1":
		return Int8, nil
	case "SMALLINT", "INT2", "SHORT":
		return Int16, nil
	case "INTEGER", "INT", "INT4", "SIGNED":
		return Int32, nil
	case "BIGINT", "INT8", "LONG":
		return Int64, nil
	case "UTINYINT":
		return Uint8, nil
	case "USMALLINT":
		return Uint16, nil
	case "UINTEGER":
		return Uint32, nil
	case "UBIGINT":
		return Uint64, nil
	case "REAL", "FLOAT4", "FLOAT":
		return Float32, nil
	case "DOUBLE", "DOUBLE PRECISION", "FLOAT8":
		return Float64, nil
	case "VARCHAR", "TEXT", "STRING", "CHAR", "CHARACTER", "CHARACTER VARYING", "BPCHAR":
		return String, nil
	case "BLOB", "BYTEA", "BINARY", "VARBINARY":
		return Binary, nil
	case "DATE":
		return Date, nil
	case "TIMESTAMP", "DATETIME", "TIMESTAMP WITHOUT TIME ZONE":
		return Timestamp, nil
	case "TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE":
		return TimestampTZ, nil
	case "TIMESTAMP_MS":
		return &arrow.TimestampType{Unit: arrow.Millisecond}, nil
	case "TIMESTAMP_NS":
		return &arrow.TimestampType{Unit: arrow.Nanosecond}, nil
	case "TIMESTAMP_S":
		return &arrow.TimestampType{Unit: arrow.Second}, nil
	case "INTERVAL":
		return Interval, nil
	case "UUID":
		return UUID, nil
	}
	return nil, fmt.Errorf("unknown type %q", name)
}

// Unwrap returns the value type of a dictionary type, or dt itself.
func Unwrap(dt arrow.DataType) arrow.DataType {
	if d, ok := dt.(*arrow.DictionaryType); ok {
		return d.ValueType
	}
	return dt
}

// IsSigned reports a signed integer type.
func IsSigned(dt arrow.DataType) bool {
	switch Unwrap(dt).ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return true
	}
	return false
}

// IsUnsigned reports an unsigned integer type.
func IsUnsigned(dt arrow.DataType) bool {
	switch Unwrap(dt).ID() {
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return true
	}
	return false
}

// IsInteger reports a signed or unsigned integer type.
func IsInteger(dt arrow.DataType) bool { return IsSigned(dt) || IsUnsigned(dt) }

// IsFloat reports float16/32/64.
func IsFloat(dt arrow.DataType) bool {
	switch Unwrap(dt).ID() {
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return true
	}
	return false
}

// IsDecimal reports a decimal type.
func IsDecimal(dt arrow.DataType) bool {
	switch Unwrap(dt).ID() {
	case arrow.DECIMAL128, arrow.DECIMAL256:
		return true
	}
	return false
}

// IsNumeric reports integers, floats and decimals.
func IsNumeric(dt arrow.DataType) bool { return IsInteger(dt) || IsFloat(dt) || IsDecimal(dt) }

// IsString reports character strings.
func IsString(dt arrow.DataType) bool {
	switch Unwrap(dt).ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return true
	}
	return false
}

// IsBinary reports byte strings.
func IsBinary(dt arrow.DataType) bool {
	switch Unwrap(dt).ID() {
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY:
		return true
	}
	return false
}

// IsTemporal reports date and timestamp types.
func IsTemporal(dt arrow.DataType) bool {
	switch Unwrap(dt).ID() {
	case arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP:
		return true
	}
	return false
}

// IsNested reports list, struct and map types: read and passed through, never compared.
func IsNested(dt arrow.DataType) bool {
	switch Unwrap(dt).ID() {
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.STRUCT, arrow.MAP, arrow.LIST_VIEW, arrow.LARGE_LIST_VIEW:
		return true
	}
	return false
}

// IsOrderable reports whether values of dt have a total order (and so may have bounds,
// be sorted, compared or used in MIN/MAX).
func IsOrderable(dt arrow.DataType) bool {
	dt = Unwrap(dt)
	return dt.ID() == arrow.BOOL || IsNumeric(dt) || IsString(dt) || IsBinary(dt) || IsTemporal(dt) ||
		dt.ID() == arrow.TIME32 || dt.ID() == arrow.TIME64
}
