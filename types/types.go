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
	// Time is TIME, a time of day in microseconds since midnight (24:00:00 included).
	Time arrow.DataType = arrow.FixedWidthTypes.Time64us
	// Hugeint is what HUGEINT and UHUGEINT name: DECIMAL(38,0).
	Hugeint arrow.DataType = &arrow.Decimal128Type{Precision: 38, Scale: 0}
)

// Name is the SQL name of a type, as DuckDB spells it.
func Name(dt arrow.DataType) string {
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		return Name(t.ValueType)
	case *UUIDType:
		return "UUID"
	case *arrow.Decimal64Type:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale)
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
	if t, ok, err := parseNested(strings.TrimSpace(name)); ok {
		if err != nil {
			return nil, err
		}
		return WideInside(t), nil
	}
	n := strings.ToUpper(strings.Join(strings.Fields(name), " "))
	n = strings.TrimPrefix(n, "PG_CATALOG.")
	if strings.HasSuffix(n, "[]") {
		elem, err := Parse(n[:len(n)-2])
		if err != nil {
			return nil, err
		}
		return WideInside(arrow.ListOf(elem)), nil
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
		return Decimal(p, s), nil
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
	case "HUGEINT", "INT128", "UHUGEINT", "UINT128":
		// Lore has no 128-bit integers: DECIMAL(38,0) holds the same digits up to
		// 38 of them, prints them the same way and keeps integer arithmetic exact.
		return Hugeint, nil
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
	case "TIME", "TIME WITHOUT TIME ZONE":
		return Time, nil
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

// Decimal is the type of DECIMAL(p,s): 64-bit values up to 18 digits, which every
// int64 holds, and 128-bit values above. Every decimal type Lore makes comes from
// here, so that one precision has one type: values read from files, computed, cast
// and stored agree on it.
func Decimal(p, s int32) arrow.DataType {
	if p <= MaxDecimal64Digits {
		return &arrow.Decimal64Type{Precision: p, Scale: s}
	}
	return &arrow.Decimal128Type{Precision: p, Scale: s}
}

// MaxDecimal64Digits is the largest precision held in 64 bits.
const MaxDecimal64Digits = 18

// DecimalParams returns the precision and scale of a decimal type (false for other
// types).
func DecimalParams(dt arrow.DataType) (p, s int32, ok bool) {
	d, ok := Unwrap(dt).(arrow.DecimalType)
	if !ok {
		return 0, 0, false
	}
	return d.GetPrecision(), d.GetScale(), true
}

// Wide is dt, when a 64-bit decimal type, as the 128-bit type of the same precision
// and scale, for code that computes in 128 bits; any other type is returned as it
// is. Only top-level values are 64-bit: the decimals inside nested types are 128-bit
// (see WideInside).
func Wide(dt arrow.DataType) arrow.DataType {
	if t, ok := dt.(*arrow.Decimal64Type); ok {
		return &arrow.Decimal128Type{Precision: t.Precision, Scale: t.Scale}
	}
	return dt
}

// Narrow is dt, when a 128-bit decimal type of at most 18 digits, as its 64-bit
// type (see Decimal); any other type is returned as it is.
func Narrow(dt arrow.DataType) arrow.DataType {
	if t, ok := dt.(*arrow.Decimal128Type); ok && t.Precision <= MaxDecimal64Digits {
		return &arrow.Decimal64Type{Precision: t.Precision, Scale: t.Scale}
	}
	return dt
}

// WideInside is a nested type with the decimals among its elements, fields, keys and
// values (at any depth) 128-bit, as nested values keep them; any other type is
// returned as it is.
func WideInside(dt arrow.DataType) arrow.DataType {
	if !IsNested(dt) {
		return dt
	}
	return mapDecimals(dt, Wide)
}

// mapDecimals rebuilds dt with f applied to each decimal type in it, returning dt
// itself when f changes none.
func mapDecimals(dt arrow.DataType, f func(arrow.DataType) arrow.DataType) arrow.DataType {
	switch t := dt.(type) {
	case *arrow.Decimal64Type, *arrow.Decimal128Type:
		return f(dt)
	case *arrow.ListType:
		if e := mapDecimals(t.Elem(), f); e != t.Elem() {
			return arrow.ListOfField(arrow.Field{Name: t.ElemField().Name, Type: e, Nullable: t.ElemField().Nullable, Metadata: t.ElemField().Metadata})
		}
	case *arrow.LargeListType:
		if e := mapDecimals(t.Elem(), f); e != t.Elem() {
			return arrow.LargeListOfField(arrow.Field{Name: t.ElemField().Name, Type: e, Nullable: t.ElemField().Nullable, Metadata: t.ElemField().Metadata})
		}
	case *arrow.FixedSizeListType:
		if e := mapDecimals(t.Elem(), f); e != t.Elem() {
			return arrow.FixedSizeListOfField(t.Len(), arrow.Field{Name: t.ElemField().Name, Type: e, Nullable: t.ElemField().Nullable, Metadata: t.ElemField().Metadata})
		}
	case *arrow.MapType:
		k, v := mapDecimals(t.KeyType(), f), mapDecimals(t.ItemType(), f)
		if k != t.KeyType() || v != t.ItemType() {
			m := arrow.MapOf(k, v)
			m.KeysSorted = t.KeysSorted
			return m
		}
	case *arrow.StructType:
		fields := t.Fields()
		changed := false
		for i, fd := range fields {
			if ft := mapDecimals(fd.Type, f); ft != fd.Type {
				fields[i].Type, changed = ft, true
			}
		}
		if changed {
			return arrow.StructOf(fields...)
		}
	}
	return dt
}

// IsDecimal reports a decimal type.
func IsDecimal(dt arrow.DataType) bool {
	switch Unwrap(dt).ID() {
	case arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256:
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

// IsTime reports a time of day (TIME), in any unit.
func IsTime(dt arrow.DataType) bool {
	switch Unwrap(dt).ID() {
	case arrow.TIME32, arrow.TIME64:
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
