package source

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// maxDecimalDigits is the widest decimal Lore holds.
const maxDecimalDigits = 38

// Widen is the type that holds every value of both a and b without loss, which a
// column whose type drifts between files is read as (DuckDB's union_by_name): the
// wider integer (a signed one wide enough for an unsigned one too); DOUBLE for two
// floats, or a float and an integer of at most 32 bits; a decimal with the larger
// scale and the more integer digits of two decimals, or of a decimal and an integer,
// when it fits in 38 digits; DOUBLE for a decimal and a float; VARCHAR for two string
// types and BLOB for two binary ones. ok is false for any other pair: their values
// have no common type, or none without loss.
func Widen(a, b arrow.DataType) (dt arrow.DataType, ok bool) {
	switch {
	case arrow.TypeEqual(a, b):
		return a, true
	case types.IsInteger(a) && types.IsInteger(b):
		return widerInteger(a, b)
	case types.IsFloat(a) && types.IsFloat(b),
		types.IsFloat(a) && types.IsInteger(b) && intBits(b) <= 32,
		types.IsInteger(a) && intBits(a) <= 32 && types.IsFloat(b):
		return types.Float64, true
	case types.IsDecimal(a) && types.IsFloat(b), types.IsFloat(a) && types.IsDecimal(b):
		return types.Float64, true
	case types.IsDecimal(a) || types.IsDecimal(b):
		pa, sa, okA := decimalDigits(a)
		pb, sb, okB := decimalDigits(b)
		if !okA || !okB {
			return nil, false
		}
		scale := max(sa, sb)
		p := max(pa-sa, pb-sb) + scale
		if p > maxDecimalDigits {
			return nil, false
		}
		return types.Decimal(p, scale), true
	case types.IsString(a) && types.IsString(b):
		return types.String, true
	case types.IsBinary(a) && types.IsBinary(b):
		return types.Binary, true
	}
	return nil, false
}

// intBits is the width of an integer type in bits.
func intBits(dt arrow.DataType) int { return dt.(arrow.FixedWidthDataType).BitWidth() }

// widerInteger is the integer type holding both a's and b's values.
func widerInteger(a, b arrow.DataType) (arrow.DataType, bool) {
	if types.IsSigned(a) == types.IsSigned(b) {
		if intBits(a) >= intBits(b) {
			return a, true
		}
		return b, true
	}
	s, u := a, b
	if types.IsUnsigned(a) {
		s, u = b, a
	}
	if intBits(s) > intBits(u) {
		return s, true
	}
	switch intBits(u) {
	case 8:
		return types.Int16, true
	case 16:
		return types.Int32, true
	case 32:
		return types.Int64, true
	}
	return nil, false // UBIGINT with a signed type: no integer holds both
}

// decimalDigits is a decimal's precision and scale, or an integer's as a decimal of
// scale 0.
func decimalDigits(dt arrow.DataType) (precision, scale int32, ok bool) {
	if p, s, ok := types.DecimalParams(dt); ok {
		return p, s, true
	}
	if !types.IsInteger(dt) {
		return 0, 0, false
	}
	switch bits := intBits(dt); {
	case bits == 8:
		return 3, 0, true
	case bits == 16:
		return 5, 0, true
	case bits == 32:
		return 10, 0, true
	case types.IsSigned(dt):
		return 19, 0, true
	}
	return 20, 0, true
}

// WidenValue converts a value of a file's column type to the wider type Widen gave
// for the table (a footer's bound, say); exact is false when the conversion may have
// rounded (a decimal to DOUBLE), and ok is false when the types are not such a pair.
func WidenValue(v types.Value, to arrow.DataType) (out types.Value, exact, ok bool) {
	from := v.Type
	if from == nil {
		return v, false, false
	}
	if arrow.TypeEqual(from, to) {
		return v, true, true
	}
	if v.Null {
		return types.NullOf(to), true, true
	}
	out = types.Value{Type: to}
	switch {
	case types.IsInteger(from) && types.IsSigned(to):
		if types.IsUnsigned(from) {
			out.I = int64(v.U)
		} else {
			out.I = v.I
		}
	case types.IsUnsigned(from) && types.IsUnsigned(to):
		out.U = v.U
	case types.IsInteger(from) && types.IsFloat(to):
		if types.IsUnsigned(from) {
			out.F = float64(v.U)
		} else {
			out.F = float64(v.I)
		}
	case types.IsFloat(from) && types.IsFloat(to):
		out.F = v.F
	case types.IsDecimal(from) && types.IsFloat(to):
		_, fs, _ := types.DecimalParams(from)
		out.F = v.D.ToFloat64(fs)
		return out, false, true
	case types.IsDecimal(to):
		_, sf, okF := decimalDigits(from)
		_, st, _ := decimalDigits(to)
		if !okF || st < sf {
			return v, false, false
		}
		d := v.D
		if types.IsInteger(from) {
			d = intDecimal(v)
		}
		out.D = d.IncreaseScaleBy(st - sf)
	case types.IsString(from) && types.IsString(to), types.IsBinary(from) && types.IsBinary(to):
		out.S = v.S
	default:
		return v, false, false
	}
	return out, true, true
}

// intDecimal is an integer value as a decimal of scale 0.
func intDecimal(v types.Value) decimal128.Num {
	if types.IsUnsigned(v.Type) {
		return decimal128.FromU64(v.U)
	}
	return decimal128.FromI64(v.I)
}

// castError reports that column name of file could not be read as the table's type:
// a CORRUPT_SOURCE error naming both types. The cast's own text is kept only when it
// says something: Arrow's decimal casts wrap an empty cause in "invalid: " once per
// layer, which would print as "invalid: invalid: %!s(<nil>)".
func castError(file, name string, from, to arrow.DataType, err error) error {
	detail := strings.ReplaceAll(err.Error(), "%!s(<nil>)", "")
	for {
		d := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(detail), "invalid:"))
		if d == strings.TrimSpace(detail) {
			break
		}
		detail = d
	}
	if detail == "" {
		detail = "a value does not fit"
	}
	return errs.New(errs.CorruptSource, "file %q: column %q: cannot read %s as %s: %s",
		file, name, types.Name(from), types.Name(to), detail)
}
