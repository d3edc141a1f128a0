package kernels

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/loredb/lore/types"
)

// CommonType is the type two values are compared or unified as (CASE branches,
// COALESCE, IN lists, UNION columns, join keys). Dictionary types count as their
// value types. ok is false when the two types have no common type.
//
// The rules, after DuckDB's implicit casts:
//   - NULL with X is X; equal types are themselves;
//   - integers widen: two signed or two unsigned to the wider; unsigned with signed
//     to a signed type wide enough for both (UBIGINT with a signed type has none and
//     becomes DECIMAL(20,0));
//   - DOUBLE with any number is DOUBLE; FLOAT with FLOAT, an integer or a DECIMAL
//     is FLOAT;
//   - an integer with a DECIMAL is a DECIMAL wide enough for both; two decimals keep
//     the larger scale and enough integer digits for both (precision at most 38);
//   - DATE with TIMESTAMP is that TIMESTAMP; two timestamps take the finer unit and
//     are WITH TIME ZONE when either is;
//   - strings (plain, large, view) are VARCHAR; binaries are BLOB.
func CommonType(a, b arrow.DataType) (arrow.DataType, bool) {
	t, ok := commonType(a, b)
	return types.Narrow(t), ok
}

// commonType is CommonType with decimals in their 128-bit types, as the kernels
// that compute in 128 bits declare them.
func commonType(a, b arrow.DataType) (arrow.DataType, bool) {
	a, b = types.Wide(types.Unwrap(a)), types.Wide(types.Unwrap(b))
	if a.ID() == arrow.NULL {
		return canonical(b), true
	}
	if b.ID() == arrow.NULL {
		return canonical(a), true
	}
	if arrow.TypeEqual(a, b) {
		return canonical(a), true
	}
	switch {
	case types.IsInteger(a) && types.IsInteger(b):
		return commonInteger(a, b), true
	case types.IsFloat(a) && types.IsFloat(b):
		if a.ID() == arrow.FLOAT64 || b.ID() == arrow.FLOAT64 {
			return types.Float64, true
		}
		return types.Float32, true
	case types.IsNumeric(a) && types.IsNumeric(b):
		if a.ID() == arrow.FLOAT64 || b.ID() == arrow.FLOAT64 {
			return types.Float64, true
		}
		if types.IsFloat(a) || types.IsFloat(b) {
			return types.Float32, true
		}
		// Integers with decimals, or two decimals.
		return commonDecimal(decimalOf(a), decimalOf(b)), true
	case types.IsString(a) && types.IsString(b):
		return types.String, true
	case types.IsBinary(a) && types.IsBinary(b):
		return types.Binary, true
	case isDateLike(a) && isDateLike(b):
		return commonTemporal(a, b), true
	case types.IsNested(a) && types.IsNested(b):
		return commonNested(a, b)
	case types.IsTime(a) && types.IsTime(b):
		return types.Time, true
	}
	return nil, false
}

// canonical maps types with several physical forms to the one kernels work on:
// large and view strings to VARCHAR, DATE64 to DATE, FLOAT16 to FLOAT.
func canonical(dt arrow.DataType) arrow.DataType {
	switch dt.ID() {
	case arrow.LARGE_STRING, arrow.STRING_VIEW:
		return types.String
	case arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return types.Binary
	case arrow.DATE64:
		return types.Date
	case arrow.FLOAT16:
		return types.Float32
	}
	return types.Wide(dt)
}

func isDateLike(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP:
		return true
	}
	return false
}

func commonTemporal(a, b arrow.DataType) arrow.DataType {
	ta, aok := a.(*arrow.TimestampType)
	tb, bok := b.(*arrow.TimestampType)
	switch {
	case !aok && !bok:
		return types.Date
	case !aok:
		return tb
	case !bok:
		return ta
	}
	unit := max(ta.Unit, tb.Unit)
	tz := ""
	if ta.TimeZone != "" {
		tz = ta.TimeZone
	} else if tb.TimeZone != "" {
		tz = tb.TimeZone
	}
	return &arrow.TimestampType{Unit: unit, TimeZone: tz}
}

// intWidth is the byte width of an integer type.
func intWidth(dt arrow.DataType) int {
	return dt.(arrow.FixedWidthDataType).BitWidth() / 8
}

var signedOfWidth = map[int]arrow.DataType{1: types.Int8, 2: types.Int16, 4: types.Int32, 8: types.Int64}
var unsignedOfWidth = map[int]arrow.DataType{1: types.Uint8, 2: types.Uint16, 4: types.Uint32, 8: types.Uint64}

func commonInteger(a, b arrow.DataType) arrow.DataType {
	wa, wb := intWidth(a), intWidth(b)
	sa, sb := types.IsSigned(a), types.IsSigned(b)
	switch {
	case sa && sb:
		return signedOfWidth[max(wa, wb)]
	case !sa && !sb:
		return unsignedOfWidth[max(wa, wb)]
	}
	// Mixed: the signed type must hold every value of the unsigned one.
	ws, wu := wa, wb
	if !sa {
		ws, wu = wb, wa
	}
	need := max(ws, 2*wu)
	if need > 8 {
		return &arrow.Decimal128Type{Precision: 20, Scale: 0}
	}
	return signedOfWidth[need]
}

// decimalOf is the decimal type an integer or decimal type is unified as.
func decimalOf(dt arrow.DataType) *arrow.Decimal128Type {
	switch t := dt.(type) {
	case *arrow.Decimal128Type:
		return t
	case *arrow.Decimal256Type:
		return &arrow.Decimal128Type{Precision: min(t.Precision, 38), Scale: t.Scale}
	}
	return &arrow.Decimal128Type{Precision: intDigits(dt), Scale: 0}
}

// intDigits is the number of decimal digits an integer type needs.
func intDigits(dt arrow.DataType) int32 {
	switch dt.ID() {
	case arrow.INT8, arrow.UINT8:
		return 3
	case arrow.INT16, arrow.UINT16:
		return 5
	case arrow.INT32, arrow.UINT32:
		return 10
	case arrow.INT64:
		return 19
	}
	return 20
}

func commonDecimal(a, b *arrow.Decimal128Type) arrow.DataType {
	scale := max(a.Scale, b.Scale)
	digits := max(a.Precision-a.Scale, b.Precision-b.Scale)
	return &arrow.Decimal128Type{Precision: min(38, digits+scale), Scale: scale}
}
