package kernels

import (
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
	"github.com/loredb/lore/vector"
)

// CanCast reports whether Cast supports converting from to to (it may still fail on
// particular values).
func CanCast(from, to arrow.DataType) bool {
	from, to = types.Unwrap(from), types.Unwrap(to)
	switch {
	case from.ID() == arrow.NULL || arrow.TypeEqual(from, to):
		return true
	case types.IsNested(from) || types.IsNested(to):
		return canCastNested(from, to)
	case types.IsString(to):
		return !types.IsNested(from)
	case types.IsTime(to):
		return canCastTime(from)
	case types.IsString(from):
		return isScalarTarget(to)
	case isNumberLike(from) && isNumberLike(to):
		return true
	case isDateLike(from) && isDateLike(to):
		return true
	case types.IsUUID(to):
		return false // from VARCHAR only, as DuckDB has no cast from BLOB
	case types.IsBinary(from) && types.IsBinary(to):
		return true
	}
	return false
}

// isNumberLike is numbers and booleans, which cast among themselves.
func isNumberLike(dt arrow.DataType) bool {
	return types.IsNumeric(dt) && dt.ID() != arrow.DECIMAL256 || dt.ID() == arrow.BOOL
}

func isScalarTarget(dt arrow.DataType) bool {
	return isNumberLike(dt) || isDateLike(dt) || types.IsString(dt) || types.IsBinary(dt) ||
		dt.ID() == arrow.INTERVAL_MONTH_DAY_NANO || types.IsTime(dt)
}

// Cast converts arr to type to. A dictionary array no larger than its rows has its
// dictionary converted and stays a dictionary array (of value type to) with the same
// indices, so the work is done once per distinct value; callers compare types with
// types.Unwrap. A value that does not convert (CAST('abc' AS INTEGER), an integer
// out of range) is an ANALYSIS_ERROR naming the value and the type, DuckDB's
// "Conversion Error".
func Cast(arr arrow.Array, to arrow.DataType) (arrow.Array, error) {
	to = types.Unwrap(to)
	if d, ok := arr.(*array.Dictionary); ok {
		if arrow.TypeEqual(types.Unwrap(d.DataType()), to) {
			return arr, nil
		}
		// A dictionary larger than the rows (a join's whole build column) costs more
		// to convert than the rows; and one may hold values no row has (those of
		// rows a filter dropped), whose failure is not the statement's: the rows are
		// converted instead.
		if d.Dictionary().Len() <= d.Len() {
			if dict, err := Cast(d.Dictionary(), to); err == nil {
				it := d.DataType().(*arrow.DictionaryType).IndexType
				return array.NewDictionaryArray(&arrow.DictionaryType{IndexType: it, ValueType: to}, d.Indices(), dict), nil
			}
		}
		return Cast(Decode(arr), to)
	}
	from := arr.DataType()
	if arrow.TypeEqual(from, to) {
		return arr, nil
	}
	n := arr.Len()
	if from.ID() == arrow.NULL {
		return nullArray(to, n), nil
	}
	if from.ID() == arrow.DECIMAL64 || to.ID() == arrow.DECIMAL64 {
		return castDecimal64(arr, to)
	}
	if types.IsString(from) && types.IsNested(to) || types.IsNested(from) && types.IsString(to) {
		return castNestedText(arr, to, false)
	}
	switch {
	case to.ID() == arrow.STRING:
		return castToString(arr)
	case to.ID() == arrow.LARGE_STRING || to.ID() == arrow.STRING_VIEW:
		s, err := castToString(arr)
		if err != nil {
			return nil, err
		}
		return rebuildStrings(s.(*array.String), to), nil
	case types.IsTime(to):
		return castToTime(arr, to)
	case types.IsString(from):
		return castFromString(arr, to)
	case isNumberLike(from) && isNumberLike(to):
		return castNumeric(arr, to)
	case isDateLike(from) && isDateLike(to):
		return castTemporal(arr, to)
	case types.IsBinary(from) && types.IsBinary(to) && !types.IsUUID(to):
		return castBinary(arr, to)
	case types.IsNested(from) && types.IsNested(to):
		if out, ok, err := castNested(arr, to); ok || err != nil {
			return out, err
		}
	}
	return nil, errs.New(errs.Analysis, "cannot cast %s to %s", types.Name(from), types.Name(to))
}

func conversionErr(what string, to arrow.DataType) error {
	return errs.New(errs.Analysis, "could not convert %s to %s", what, types.Name(to))
}

// numeric source forms: every numeric array is read as one of these.
type numSrc struct {
	kind  byte // 'i' signed (and booleans), 'u' unsigned, 'f' float, 'd' decimal
	i     []int64
	u     []uint64
	f     []float64
	d     []decimal128.Num
	scale int32
}

func readNumeric(arr arrow.Array) numSrc {
	switch a := arr.(type) {
	case *array.Boolean:
		v := make([]int64, a.Len())
		for i := range v {
			if a.Value(i) {
				v[i] = 1
			}
		}
		return numSrc{kind: 'i', i: v}
	case *array.Int8:
		return numSrc{kind: 'i', i: widen[int8, int64](a.Int8Values())}
	case *array.Int16:
		return numSrc{kind: 'i', i: widen[int16, int64](a.Int16Values())}
	case *array.Int32:
		return numSrc{kind: 'i', i: widen[int32, int64](a.Int32Values())}
	case *array.Int64:
		return numSrc{kind: 'i', i: a.Int64Values()}
	case *array.Uint8:
		return numSrc{kind: 'u', u: widen[uint8, uint64](a.Uint8Values())}
	case *array.Uint16:
		return numSrc{kind: 'u', u: widen[uint16, uint64](a.Uint16Values())}
	case *array.Uint32:
		return numSrc{kind: 'u', u: widen[uint32, uint64](a.Uint32Values())}
	case *array.Uint64:
		return numSrc{kind: 'u', u: a.Uint64Values()}
	case *array.Float16:
		v := make([]float64, a.Len())
		for i, x := range a.Values() {
			v[i] = float64(x.Float32())
		}
		return numSrc{kind: 'f', f: v}
	case *array.Float32:
		return numSrc{kind: 'f', f: widen[float32, float64](a.Float32Values())}
	case *array.Float64:
		return numSrc{kind: 'f', f: a.Float64Values()}
	case *array.Decimal128:
		return numSrc{kind: 'd', d: a.Values(), scale: a.DataType().(*arrow.Decimal128Type).Scale}
	}
	panic("BUG: readNumeric of " + arr.DataType().String())
}

func widen[S, D fixed](s []S) []D {
	out := make([]D, len(s))
	for i, v := range s {
		out[i] = D(v)
	}
	return out
}

// castNumeric converts among integers, floats, decimals and booleans.
func castNumeric(arr arrow.Array, to arrow.DataType) (arrow.Array, error) {
	src := readNumeric(arr)
	valid, nulls := copyValidity(arr)
	vm, voff := validityOf(arr)
	n := arr.Len()
	switch to.ID() {
	case arrow.BOOL:
		bits := make([]bool, n)
		for i := 0; i < n; i++ {
			switch src.kind {
			case 'i':
				bits[i] = src.i[i] != 0
			case 'u':
				bits[i] = src.u[i] != 0
			case 'f':
				bits[i] = src.f[i] != 0
			case 'd':
				bits[i] = src.d[i].Sign() != 0
			}
		}
		return boolArray(packBools(bits), n, valid, nulls), nil
	case arrow.FLOAT32, arrow.FLOAT64:
		f := make([]float64, n)
		switch src.kind {
		case 'i':
			for i, v := range src.i {
				f[i] = float64(v)
			}
		case 'u':
			for i, v := range src.u {
				f[i] = float64(v)
			}
		case 'f':
			copy(f, src.f)
		case 'd':
			for i, v := range src.d {
				if isValid(vm, voff, i) {
					f[i] = decToFloat(v, src.scale)
				}
			}
		}
		if to.ID() == arrow.FLOAT64 {
			return fixedArray(to, f, valid, nulls), nil
		}
		f32 := make([]float32, n)
		for i, v := range f {
			f32[i] = float32(v)
			if isValid(vm, voff, i) && math.IsInf(float64(f32[i]), 0) && !math.IsInf(v, 0) {
				return nil, outOfRange(strconv.FormatFloat(v, 'g', -1, 64), to)
			}
		}
		return fixedArray(to, f32, valid, nulls), nil
	case arrow.DECIMAL128:
		t := to.(*arrow.Decimal128Type)
		out := make([]decimal128.Num, n)
		for i := 0; i < n; i++ {
			if !isValid(vm, voff, i) {
				continue
			}
			var d decimal128.Num
			ok := true
			switch src.kind {
			case 'i':
				d, ok = decScaleUp(decimal128.FromI64(src.i[i]), t.Scale)
			case 'u':
				d, ok = decScaleUp(decimal128.FromU64(src.u[i]), t.Scale)
			case 'f':
				d, ok = floatToDec(src.f[i], t.Scale)
			case 'd':
				d, ok = decRescale(src.d[i], src.scale, t.Scale)
			}
			if !ok || !decFits(d, t.Precision) {
				return nil, outOfRange(numText(src, i), to)
			}
			out[i] = d
		}
		return decimalArray(to, out, valid, nulls), nil
	}
	if !types.IsInteger(to) {
		return nil, errs.New(errs.Analysis, "cannot cast %s to %s", types.Name(arr.DataType()), types.Name(to))
	}
	// Integer targets: read every source as int64 or uint64 with a range check.
	lo, hi, uhi := intRange(to)
	signedTo := types.IsSigned(to)
	ints := make([]int64, n)   // signed targets
	uints := make([]uint64, 0) // unsigned targets
	if !signedTo {
		uints = make([]uint64, n)
	}
	for i := 0; i < n; i++ {
		if !isValid(vm, voff, i) {
			continue
		}
		var (
			sv  int64
			uv  uint64
			neg bool // the value is negative (sv holds it)
			ok  = true
		)
		switch src.kind {
		case 'i':
			sv = src.i[i]
			neg = sv < 0
			uv = uint64(sv)
		case 'u':
			uv = src.u[i]
			sv = int64(uv)
			if uv > math.MaxInt64 {
				sv, ok = 0, !signedTo // too big for any signed target
			}
		case 'f':
			f := math.RoundToEven(src.f[i]) // DuckDB rounds a float half to even when casting to an integer
			switch {
			case math.IsNaN(f) || f < -9.223372036854775808e18 || f >= 1.8446744073709551616e19:
				ok = false
			case f < 0:
				sv, neg, uv = int64(f), true, 0
			case f >= 9.223372036854775808e18:
				uv, sv = uint64(f), 0
				ok = !signedTo
			default:
				sv = int64(f)
				uv = uint64(sv)
			}
		case 'd':
			r := decScaleDown(src.d[i], src.scale)
			if x, fits := fitsInt64(r); fits {
				sv, neg, uv = x, x < 0, uint64(x)
			} else if r.HighBits() == 0 && !signedTo {
				uv = r.LowBits()
			} else {
				ok = false
			}
		}
		if signedTo {
			if !ok || sv < lo || sv > hi {
				return nil, outOfRange(numText(src, i), to)
			}
			ints[i] = sv
		} else {
			if !ok || neg || uv > uhi {
				return nil, outOfRange(numText(src, i), to)
			}
			uints[i] = uv
		}
	}
	switch to.ID() {
	case arrow.INT8:
		return fixedArray(to, narrow[int64, int8](ints), valid, nulls), nil
	case arrow.INT16:
		return fixedArray(to, narrow[int64, int16](ints), valid, nulls), nil
	case arrow.INT32:
		return fixedArray(to, narrow[int64, int32](ints), valid, nulls), nil
	case arrow.INT64:
		return fixedArray(to, ints, valid, nulls), nil
	case arrow.UINT8:
		return fixedArray(to, narrow[uint64, uint8](uints), valid, nulls), nil
	case arrow.UINT16:
		return fixedArray(to, narrow[uint64, uint16](uints), valid, nulls), nil
	case arrow.UINT32:
		return fixedArray(to, narrow[uint64, uint32](uints), valid, nulls), nil
	}
	return fixedArray(to, uints, valid, nulls), nil
}

func narrow[S, D integer](s []S) []D {
	out := make([]D, len(s))
	for i, v := range s {
		out[i] = D(v)
	}
	return out
}

// intRange is the range of an integer type: signed bounds, and the unsigned maximum.
func intRange(dt arrow.DataType) (lo, hi int64, uhi uint64) {
	switch dt.ID() {
	case arrow.INT8:
		return math.MinInt8, math.MaxInt8, 0
	case arrow.INT16:
		return math.MinInt16, math.MaxInt16, 0
	case arrow.INT32:
		return math.MinInt32, math.MaxInt32, 0
	case arrow.INT64:
		return math.MinInt64, math.MaxInt64, 0
	case arrow.UINT8:
		return 0, 0, math.MaxUint8
	case arrow.UINT16:
		return 0, 0, math.MaxUint16
	case arrow.UINT32:
		return 0, 0, math.MaxUint32
	}
	return 0, 0, math.MaxUint64
}

func numText(src numSrc, i int) string {
	switch src.kind {
	case 'i':
		return strconv.FormatInt(src.i[i], 10)
	case 'u':
		return strconv.FormatUint(src.u[i], 10)
	case 'f':
		return types.FormatFloat(src.f[i], false)
	}
	return types.FormatDecimal(src.d[i], src.scale)
}

// castTemporal converts among DATE and TIMESTAMP types (all UTC).
func castTemporal(arr arrow.Array, to arrow.DataType) (arrow.Array, error) {
	n := arr.Len()
	valid, nulls := copyValidity(arr)
	vm, voff := validityOf(arr)
	// Read the source as microsecond-free ticks: days for dates, (value, unit) for timestamps.
	var days []int64
	var ticks []int64
	var unit arrow.TimeUnit
	switch a := arr.(type) {
	case *array.Date32:
		days = widen[arrow.Date32, int64](a.Date32Values())
	case *array.Date64:
		days = make([]int64, n)
		for i, v := range a.Date64Values() {
			days[i] = floorDiv(int64(v), 86400000)
		}
	case *array.Timestamp:
		ticks = widen[arrow.Timestamp, int64](a.TimestampValues())
		unit = a.DataType().(*arrow.TimestampType).Unit
	default:
		return nil, errs.New(errs.Analysis, "cannot cast %s to %s", types.Name(arr.DataType()), types.Name(to))
	}
	switch t := to.(type) {
	case *arrow.Date32Type:
		if days == nil {
			per := 86400 * types.UnitsPerSecond(unit)
			days = make([]int64, n)
			for i, v := range ticks {
				days[i] = floorDiv(v, per)
				if s := types.TimestampInfSign(v); s != 0 {
					days[i] = int64(s) * types.DateInfinity
				}
			}
		}
		out := make([]int32, n)
		for i, d := range days {
			if isValid(vm, voff, i) && (d < math.MinInt32 || d > math.MaxInt32) {
				return nil, outOfRange(strconv.FormatInt(d, 10)+" days", to)
			}
			out[i] = int32(d)
		}
		return fixedArray(to, out, valid, nulls), nil
	case *arrow.Date64Type:
		return nil, errs.New(errs.Analysis, "cannot cast to %s with millisecond storage", types.Name(to))
	case *arrow.TimestampType:
		per := types.UnitsPerSecond(t.Unit)
		out := make([]int64, n)
		if days != nil {
			dayTicks := 86400 * per
			for i, d := range days {
				if !isValid(vm, voff, i) {
					continue
				}
				if s := types.DateInfSign(d); s != 0 {
					out[i] = int64(s) * types.TimestampInfinity
					continue
				}
				if d > math.MaxInt64/dayTicks || d < math.MinInt64/dayTicks {
					return nil, outOfRange(types.FormatDate(int32(d)), to)
				}
				out[i] = d * dayTicks
			}
			return fixedArray(to, out, valid, nulls), nil
		}
		from := types.UnitsPerSecond(unit)
		switch {
		case per == from:
			copy(out, ticks)
		case per > from:
			k := per / from
			for i, v := range ticks {
				if types.TimestampInfSign(v) != 0 {
					out[i] = v
					continue
				}
				if isValid(vm, voff, i) && (v > math.MaxInt64/k || v < math.MinInt64/k) {
					return nil, outOfRange(types.FormatTimestamp(v, unit, false), to)
				}
				out[i] = v * k
			}
		default:
			// From microseconds to a coarser unit the value rounds to the nearest
			// tick, half away from zero (DuckDB: 11:06:33.846 as TIMESTAMP_S is
			// 11:06:34); nanoseconds are truncated, as DuckDB does.
			k := from / per
			for i, v := range ticks {
				if unit == arrow.Nanosecond {
					out[i] = floorDiv(v, k)
				} else {
					out[i] = roundDiv(v, k)
				}
				if types.TimestampInfSign(v) != 0 {
					out[i] = v
				}
			}
		}
		return fixedArray(to, out, valid, nulls), nil
	}
	return nil, errs.New(errs.Analysis, "cannot cast %s to %s", types.Name(arr.DataType()), types.Name(to))
}

func castBinary(arr arrow.Array, to arrow.DataType) (arrow.Array, error) {
	b := types.NewBuilder(defaultMem, to)
	defer b.Release()
	bb, ok := b.(interface{ Append([]byte) })
	if !ok {
		return nil, errs.New(errs.Analysis, "cannot cast %s to %s", types.Name(arr.DataType()), types.Name(to))
	}
	type byteAt interface{ Value(int) []byte }
	src, ok := arr.(byteAt)
	if !ok {
		return nil, errs.New(errs.Analysis, "cannot cast %s to %s", types.Name(arr.DataType()), types.Name(to))
	}
	for i := 0; i < arr.Len(); i++ {
		if arr.IsNull(i) {
			b.AppendNull()
		} else {
			bb.Append(src.Value(i))
		}
	}
	return b.NewArray(), nil
}

// rebuildStrings converts a VARCHAR array to a large or view string array.
func rebuildStrings(s *array.String, to arrow.DataType) arrow.Array {
	b := array.NewBuilder(defaultMem, to)
	defer b.Release()
	sb := b.(interface{ Append(string) })
	for i := 0; i < s.Len(); i++ {
		if s.IsNull(i) {
			b.AppendNull()
		} else {
			sb.Append(s.Value(i))
		}
	}
	return b.NewArray()
}

// TryCast is Cast giving NULL for each value that does not convert (TRY_CAST). When
// the whole array converts it costs what Cast does; otherwise the rows are cast one
// at a time.
func TryCast(arr arrow.Array, to arrow.DataType) (arrow.Array, error) {
	out, err := Cast(arr, to)
	if err == nil {
		return out, nil
	}
	if !CanCast(arr.DataType(), to) {
		return nil, err
	}
	to = types.Unwrap(to)
	if types.IsNested(to) {
		return tryCastNested(arr, to)
	}
	vals := make([]types.Value, arr.Len())
	for i := range vals {
		vals[i] = types.NullOf(to)
		if arr.IsNull(i) {
			continue
		}
		one := array.NewSlice(arr, int64(i), int64(i+1))
		c, err := Cast(one, to)
		one.Release()
		if err != nil {
			continue
		}
		vals[i] = types.ValueAt(c, 0)
		vals[i].Type = to
	}
	return vector.FromValues(to, vals), nil
}

// roundDiv is v / k rounded to the nearest integer, half away from zero (k > 0).
func roundDiv(v, k int64) int64 {
	q, r := v/k, v%k
	if r < 0 {
		r = -r
	}
	if r >= k-r { // 2r >= k, without overflow
		if v < 0 {
			q--
		} else {
			q++
		}
	}
	return q
}
