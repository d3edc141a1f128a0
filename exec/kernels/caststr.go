package kernels

import (
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

var defaultMem = vector.Allocator

// castToString renders every row as text, exactly as types.Value.String does.
func castToString(arr arrow.Array) (arrow.Array, error) {
	n := arr.Len()
	if _, ok := asStrings(arr); ok {
		return plainStrings(arr), nil
	}
	b := newStrBuilder(n, 12*n)
	var scratch []byte
	vm, voff := validityOf(arr)
	for i := 0; i < n; i++ {
		if !isValid(vm, voff, i) {
			b.addNull()
			continue
		}
		scratch = scratch[:0]
		switch a := arr.(type) {
		case *array.Boolean:
			scratch = strconv.AppendBool(scratch, a.Value(i))
		case *array.Int8:
			scratch = strconv.AppendInt(scratch, int64(a.Value(i)), 10)
		case *array.Int16:
			scratch = strconv.AppendInt(scratch, int64(a.Value(i)), 10)
		case *array.Int32:
			scratch = strconv.AppendInt(scratch, int64(a.Value(i)), 10)
		case *array.Int64:
			scratch = strconv.AppendInt(scratch, a.Value(i), 10)
		case *array.Uint8:
			scratch = strconv.AppendUint(scratch, uint64(a.Value(i)), 10)
		case *array.Uint16:
			scratch = strconv.AppendUint(scratch, uint64(a.Value(i)), 10)
		case *array.Uint32:
			scratch = strconv.AppendUint(scratch, uint64(a.Value(i)), 10)
		case *array.Uint64:
			scratch = strconv.AppendUint(scratch, a.Value(i), 10)
		case *array.Float32:
			scratch = append(scratch, types.FormatFloat(float64(a.Value(i)), true)...)
		case *array.Float64:
			scratch = append(scratch, types.FormatFloat(a.Value(i), false)...)
		case *array.Decimal128:
			scratch = append(scratch, types.FormatDecimal(a.Value(i), a.DataType().(*arrow.Decimal128Type).Scale)...)
		case *array.Date32:
			scratch = appendDate(scratch, int64(a.Value(i)))
		case *array.Timestamp:
			t := a.DataType().(*arrow.TimestampType)
			scratch = types.AppendTimestamp(scratch, int64(a.Value(i)), t.Unit, t.TimeZone != "")
		case *array.MonthDayNanoInterval:
			scratch = append(scratch, types.FormatInterval(a.Value(i))...)
		default:
			// Rare types (BLOB, TIME, nested): the boxed form, once per row.
			scratch = append(scratch, types.ValueAt(arr, i).String()...)
		}
		b.addBytes(scratch)
	}
	return b.finish(), nil
}

// appendDate renders days since the epoch as types.FormatDate does.
func appendDate(dst []byte, days int64) []byte { return types.AppendDate(dst, days) }

// castFromString parses every row as a value of to.
func castFromString(arr arrow.Array, to arrow.DataType) (arrow.Array, error) {
	s := plainStrings(arr)
	n := arr.Len()
	valid, nulls := copyValidity(arr)
	vm, voff := validityOf(arr)
	fail := func(i int) error {
		return conversionErr("string '"+s.Value(i)+"'", to)
	}
	switch to.ID() {
	case arrow.BOOL:
		bits := make([]bool, n)
		for i := 0; i < n; i++ {
			if !isValid(vm, voff, i) {
				continue
			}
			v, ok := parseBool(s.Value(i))
			if !ok {
				return nil, fail(i)
			}
			bits[i] = v
		}
		return boolArray(packBools(bits), n, valid, nulls), nil
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		ints := make([]int64, n)
		for i := 0; i < n; i++ {
			if !isValid(vm, voff, i) {
				continue
			}
			v, ok := parseInt(s.Value(i))
			if !ok {
				return nil, fail(i)
			}
			ints[i] = v
		}
		return castNumeric(fixedArray(types.Int64, ints, valid, nulls), to)
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		uints := make([]uint64, n)
		for i := 0; i < n; i++ {
			if !isValid(vm, voff, i) {
				continue
			}
			v, ok := parseUint(s.Value(i))
			if !ok {
				return nil, fail(i)
			}
			uints[i] = v
		}
		return castNumeric(fixedArray(types.Uint64, uints, valid, nulls), to)
	case arrow.FLOAT32, arrow.FLOAT64:
		f := make([]float64, n)
		for i := 0; i < n; i++ {
			if !isValid(vm, voff, i) {
				continue
			}
			v, ok := parseFloat(s.Value(i))
			if !ok {
				return nil, fail(i)
			}
			f[i] = v
		}
		return castNumeric(fixedArray(types.Float64, f, valid, nulls), to)
	case arrow.DECIMAL128:
		t := to.(*arrow.Decimal128Type)
		out := make([]decimal128.Num, n)
		for i := 0; i < n; i++ {
			if !isValid(vm, voff, i) {
				continue
			}
			v, ok := parseDecimal(s.Value(i), t.Precision, t.Scale)
			if !ok {
				return nil, fail(i)
			}
			out[i] = v
		}
		return decimalArray(to, out, valid, nulls), nil
	case arrow.DATE32:
		out := make([]int32, n)
		for i := 0; i < n; i++ {
			if !isValid(vm, voff, i) {
				continue
			}
			v, ok := parseDate(s.Value(i))
			if !ok || v != int64(int32(v)) {
				return nil, fail(i)
			}
			out[i] = int32(v)
		}
		return fixedArray(to, out, valid, nulls), nil
	case arrow.TIMESTAMP:
		unit := to.(*arrow.TimestampType).Unit
		out := make([]int64, n)
		for i := 0; i < n; i++ {
			if !isValid(vm, voff, i) {
				continue
			}
			v, ok := parseTimestamp(s.Value(i), unit)
			if !ok {
				return nil, fail(i)
			}
			out[i] = v
		}
		return fixedArray(to, out, valid, nulls), nil
	case arrow.INTERVAL_MONTH_DAY_NANO:
		out := make([]arrow.MonthDayNanoInterval, n)
		for i := 0; i < n; i++ {
			if !isValid(vm, voff, i) {
				continue
			}
			v, ok := parseInterval(s.Value(i))
			if !ok {
				return nil, fail(i)
			}
			out[i] = v
		}
		return decimalArray(to, out, valid, nulls), nil
	case arrow.BINARY, arrow.LARGE_BINARY:
		if types.IsUUID(to) {
			return stringsToUUID(s, to)
		}
		b := array.NewBuilder(defaultMem, to)
		defer b.Release()
		bb := b.(interface{ Append([]byte) })
		var buf []byte
		for i := 0; i < n; i++ {
			if !isValid(vm, voff, i) {
				b.AppendNull()
				continue
			}
			var ok bool
			if buf, ok = parseBlob(buf[:0], s.Value(i)); !ok {
				return nil, fail(i)
			}
			bb.Append(buf)
		}
		return b.NewArray(), nil
	}
	return nil, errs.New(errs.Analysis, "cannot cast %s to %s", types.Name(arr.DataType()), types.Name(to))
}

// parseBlob appends the bytes of a BLOB's text form to dst, as DuckDB reads it:
// printable ASCII stands for itself and \xHH for any byte; a backslash not starting
// such an escape, or a character outside ASCII, is an error.
func parseBlob(dst []byte, s string) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			if i+3 >= len(s) || s[i+1] != 'x' {
				return dst, false
			}
			hi, ok1 := types.HexDigit(s[i+2])
			lo, ok2 := types.HexDigit(s[i+3])
			if !ok1 || !ok2 {
				return dst, false
			}
			dst = append(dst, hi<<4|lo)
			i += 3
		case c >= 0x80:
			return dst, false
		default:
			dst = append(dst, c)
		}
	}
	return dst, true
}

// ParseLiteral types a string literal for a context type: DATE '2024-01-01',
// x = '2024-01-01' where x is a DATE, INTERVAL '1 day', '42' compared with a BIGINT.
// It accepts what Cast from VARCHAR accepts, and fails the same way.
func ParseLiteral(s string, to arrow.DataType) (types.Value, error) {
	to = types.Unwrap(to)
	if to.ID() == arrow.NULL || types.IsString(to) {
		return types.Value{Type: canonical(to), S: s}, nil
	}
	if !CanCast(types.String, to) {
		return types.Value{}, errs.New(errs.Analysis, "cannot convert a string literal to %s", types.Name(to))
	}
	b := newStrBuilder(1, len(s))
	b.add(s)
	out, err := Cast(b.finish(), to)
	if err != nil {
		return types.Value{}, err
	}
	return types.ValueAt(out, 0), nil
}
