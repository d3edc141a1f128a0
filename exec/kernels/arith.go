package kernels

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/loredb/lore/types"
)

// arithOp is an arithmetic operator.
type arithOp uint8

const (
	opAdd arithOp = iota
	opSub
	opMul
	opDiv    // float division (IEEE: x/0 is ±Inf or NaN, as in DuckDB 1.1+)
	opIntDiv // integer division truncating toward zero; x//0 is NULL
	opMod    // remainder with the sign of the dividend; x%0 is NULL for exact types
)

func (op arithOp) symbol() string {
	return [...]string{"+", "-", "*", "/", "//", "%"}[op]
}

// arithInt64 evaluates op over two BIGINT arrays. Overflow of a non-NULL row is an
// error; x//0 and x%0 are NULL.
func arithInt64(op arithOp, x, y arrow.Array, s *Scratch) (arrow.Array, error) {
	n := x.Len()
	a, b := x.(*array.Int64).Int64Values(), y.(*array.Int64).Int64Values()
	b = b[:len(a)]
	out := scratchValues[int64](s, n)
	valid, nulls := andValidity(n, x, y)
	overflow := false
	switch op {
	case opAdd:
		var f int64
		for i, p := range a {
			q := b[i]
			r := p + q
			f |= (p ^ r) & (q ^ r)
			out[i] = r
		}
		overflow = f < 0
	case opSub:
		var f int64
		for i, p := range a {
			q := b[i]
			r := p - q
			f |= (p ^ q) & (p ^ r)
			out[i] = r
		}
		overflow = f < 0
	case opMul:
		// Products of values below 2^31 in magnitude cannot overflow; only when a
		// larger operand appears is each row checked exactly.
		var wide int64
		for i, p := range a {
			q := b[i]
			out[i] = p * q
			wide |= ((p ^ (p >> 63)) | (q ^ (q >> 63))) >> 31
		}
		if wide != 0 {
			for i, p := range a {
				if mulOverflows(p, b[i]) && isValid(valid, 0, i) {
					overflow = true
					break
				}
			}
		}
	case opIntDiv, opMod:
		if valid == nil {
			valid = make([]byte, bitmapLen(n))
			bitutil.SetBitsTo(valid, 0, int64(n), true)
		}
		for i, p := range a {
			q := b[i]
			switch {
			case q == 0:
				out[i] = 0
				if bitutil.BitIsSet(valid, i) {
					bitutil.ClearBit(valid, i)
					nulls++
				}
			case q == -1:
				// MinInt64 // -1 overflows; MinInt64 % -1 is 0.
				if op == opMod {
					out[i] = 0
				} else if p == math.MinInt64 && bitutil.BitIsSet(valid, i) {
					return nil, outOfRange(strconv.FormatInt(p, 10)+" // -1", types.Int64)
				} else {
					out[i] = -p
				}
			case op == opIntDiv:
				out[i] = p / q
			default:
				out[i] = p % q
			}
		}
		if nulls == 0 {
			valid = nil
		}
	}
	if overflow {
		// The flag covers NULL rows too; report only a real (non-NULL) overflow.
		for i, p := range a {
			if !isValid(valid, 0, i) {
				continue
			}
			q := b[i]
			var bad bool
			switch op {
			case opAdd:
				r := p + q
				bad = (p^r)&(q^r) < 0
			case opSub:
				r := p - q
				bad = (p^q)&(p^r) < 0
			case opMul:
				bad = mulOverflows(p, q)
			}
			if bad {
				return nil, outOfRange(strconv.FormatInt(p, 10)+" "+op.symbol()+" "+strconv.FormatInt(q, 10), types.Int64)
			}
		}
	}
	return fixedArray(types.Int64, out, valid, nulls), nil
}

func mulOverflows(p, q int64) bool {
	if p == 0 || q == 0 {
		return false
	}
	hi, lo := bits.Mul64(absU(p), absU(q))
	if hi != 0 {
		return true
	}
	if (p < 0) != (q < 0) {
		return lo > 1<<63
	}
	return lo > math.MaxInt64
}

// arithUint64 evaluates op over two UBIGINT arrays.
func arithUint64(op arithOp, x, y arrow.Array) (arrow.Array, error) {
	n := x.Len()
	a, b := x.(*array.Uint64).Uint64Values(), y.(*array.Uint64).Uint64Values()
	b = b[:len(a)]
	out := make([]uint64, n)
	valid, nulls := andValidity(n, x, y)
	if valid == nil && (op == opIntDiv || op == opMod) {
		valid = make([]byte, bitmapLen(n))
		bitutil.SetBitsTo(valid, 0, int64(n), true)
	}
	for i, p := range a {
		q := b[i]
		live := isValid(valid, 0, i)
		var bad bool
		switch op {
		case opAdd:
			out[i] = p + q
			bad = out[i] < p
		case opSub:
			out[i] = p - q
			bad = q > p
		case opMul:
			hi, lo := bits.Mul64(p, q)
			out[i], bad = lo, hi != 0
		case opIntDiv, opMod:
			switch {
			case q == 0:
				if live {
					bitutil.ClearBit(valid, i)
					nulls++
				}
			case op == opIntDiv:
				out[i] = p / q
			default:
				out[i] = p % q
			}
		}
		if bad && live {
			return nil, outOfRange(strconv.FormatUint(p, 10)+" "+op.symbol()+" "+strconv.FormatUint(q, 10), types.Uint64)
		}
	}
	if nulls == 0 {
		valid = nil
	}
	return fixedArray(types.Uint64, out, valid, nulls), nil
}

// arithFloat evaluates op over two FLOAT or two DOUBLE arrays with IEEE semantics
// (DuckDB's default): division by zero gives ±Inf or NaN, x % 0 is NaN; x // y is
// x / y, NULL when y is zero (as in DuckDB).
func arithFloat[T float32 | float64](op arithOp, dt arrow.DataType, a, b []T, x, y arrow.Array, s *Scratch) arrow.Array {
	n := len(a)
	b = b[:n]
	out := scratchValues[T](s, n)
	valid, nulls := andValidity(n, x, y)
	switch op {
	case opAdd:
		for i, p := range a {
			out[i] = p + b[i]
		}
	case opSub:
		for i, p := range a {
			out[i] = p - b[i]
		}
	case opMul:
		for i, p := range a {
			out[i] = p * b[i]
		}
	case opDiv:
		for i, p := range a {
			out[i] = p / b[i]
		}
	case opIntDiv:
		// DuckDB's // over floats divides without rounding, and by zero is NULL.
		for i, p := range a {
			if b[i] == 0 {
				out[i] = 0
				if isValid(valid, 0, i) {
					valid = nullAt(valid, i)
					nulls++
				}
				continue
			}
			out[i] = p / b[i]
		}
		if valid != nil {
			valid = validRows(valid, n)
		}
	case opMod:
		for i, p := range a {
			out[i] = T(math.Mod(float64(p), float64(b[i])))
		}
	}
	return fixedArray(dt, out, valid, nulls)
}

// arithDecimal evaluates + - * % over decimals of either width, into the width of
// the result type res. For + - and % both arguments have the result's scale already
// (the caller cast them); for * the result scale is the sum of the argument scales.
// Results beyond the result precision are an error.
func arithDecimal(op arithOp, res arrow.DataType, x, y arrow.Array, s *Scratch) (arrow.Array, error) {
	n := x.Len()
	rp, _, _ := types.DecimalParams(res)
	xp, xs, _ := types.DecimalParams(x.DataType())
	yp, ys, _ := types.DecimalParams(y.DataType())
	valid, nulls := andValidity(n, x, y)
	// Operands that fit in int64 — by their type, or else by this batch's values —
	// are computed in 64-bit words.
	a, aSmall := decimalInt64s(x, xp, s)
	b, bSmall := decimalInt64s(y, yp, s)
	small := aSmall && bSmall
	// Whether a result can exceed the result's precision at all: a sum of p-digit
	// numbers has at most p+1 digits, a product of p- and q-digit numbers p+q; a sum
	// of two int64 has at most 20 digits, their product at most 38.
	check := true
	switch op {
	case opAdd, opSub:
		check = rp < max(xp, yp)+1 && !(small && rp >= 20)
	case opMul:
		check = rp < xp+yp && !(small && rp >= 38)
	}
	narrow := res.ID() == arrow.DECIMAL64
	if small && !check && op != opMod {
		// Operands of 64 bits whose results cannot overflow: one typed loop per
		// operator over every row (NULL rows compute values no one reads).
		b = b[:len(a)]
		if narrow {
			// The result has at most 18 digits: int64 arithmetic is exact.
			out := scratchValues[int64](s, n)
			switch op {
			case opAdd:
				for i := range a {
					out[i] = a[i] + b[i]
				}
			case opSub:
				for i := range a {
					out[i] = a[i] - b[i]
				}
			case opMul:
				for i := range a {
					out[i] = a[i] * b[i]
				}
			}
			return decimalArray(res, out, valid, nulls), nil
		}
		out := scratchValues[decimal128.Num](s, n)
		switch op {
		case opAdd:
			for i := range a {
				out[i] = addInt64(a[i], b[i])
			}
		case opSub:
			for i := range a {
				out[i] = subInt64(a[i], b[i])
			}
		case opMul:
			for i := range a {
				out[i] = mulInt64(a[i], b[i])
			}
		}
		return decimalArray(res, out, valid, nulls), nil
	}
	if op == opMod && valid == nil {
		valid = make([]byte, bitmapLen(n))
		bitutil.SetBitsTo(valid, 0, int64(n), true)
	}
	var out128 []decimal128.Num
	var out64 []int64
	if narrow {
		out64 = scratchValues[int64](s, n)
	} else {
		out128 = scratchValues[decimal128.Num](s, n)
	}
	for i := range n {
		if !isValid(valid, 0, i) {
			if narrow {
				out64[i] = 0
			} else {
				out128[i] = decimal128.Num{}
			}
			continue
		}
		var p, q decimal128.Num
		if small {
			p, q = decimal128.FromI64(a[i]), decimal128.FromI64(b[i])
		} else {
			p, q = decimalAt(x, i), decimalAt(y, i)
		}
		var r decimal128.Num
		ok := true
		switch op {
		case opAdd:
			if small {
				r = addInt64(a[i], b[i])
			} else {
				r = p.Add(q)
				ok = addFits(p, q, r)
			}
		case opSub:
			if small {
				r = subInt64(a[i], b[i])
			} else {
				r = p.Sub(q)
				ok = addFits(p, q.Negate(), r)
			}
		case opMul:
			if small {
				r = mulInt64(a[i], b[i])
			} else {
				r, ok = decMul(p, q)
			}
		case opMod:
			if q.Sign() == 0 {
				bitutil.ClearBit(valid, i)
				nulls++
				if narrow {
					out64[i] = 0
				} else {
					out128[i] = decimal128.Num{}
				}
				continue
			}
			if small {
				r = decimal128.FromI64(a[i] % b[i])
			} else {
				r = decimal128.FromBigInt(new(big.Int).Rem(p.BigInt(), q.BigInt()))
			}
		}
		if !ok || ((check || narrow) && !fitsWide(r, rp)) {
			return nil, outOfRange(types.FormatDecimal(p, xs)+" "+op.symbol()+" "+types.FormatDecimal(q, ys), res)
		}
		if narrow {
			out64[i] = int64(r.LowBits())
		} else {
			out128[i] = r
		}
	}
	if op == opMod && nulls == 0 {
		valid = nil
	}
	if narrow {
		return decimalArray(res, out64, valid, nulls), nil
	}
	return decimalArray(res, out128, valid, nulls), nil
}

// fitsWide is decFits, quick for the common case of a value that fits in 64 bits and
// a precision of 19 digits or more (every int64 has at most 19 digits).
func fitsWide(r decimal128.Num, prec int32) bool {
	if _, ok := fitsInt64(r); ok && prec >= 19 {
		return true
	}
	return decFits(r, prec)
}

// addFits reports whether r = p + q did not wrap around 128 bits.
func addFits(p, q, r decimal128.Num) bool {
	ps, qs, rs := p.Sign() < 0, q.Sign() < 0, r.Sign() < 0
	return ps != qs || ps == rs
}

// negate evaluates unary minus.
func negate(x arrow.Array) (arrow.Array, error) {
	n := x.Len()
	valid, nulls := copyValidity(x)
	vm, voff := validityOf(x)
	switch a := x.(type) {
	case *array.Int64:
		out := make([]int64, n)
		for i, v := range a.Int64Values() {
			if v == math.MinInt64 && isValid(vm, voff, i) {
				return nil, outOfRange("-("+strconv.FormatInt(v, 10)+")", types.Int64)
			}
			out[i] = -v
		}
		return fixedArray(x.DataType(), out, valid, nulls), nil
	case *array.Float32:
		out := make([]float32, n)
		for i, v := range a.Float32Values() {
			out[i] = -v
		}
		return fixedArray(x.DataType(), out, valid, nulls), nil
	case *array.Float64:
		out := make([]float64, n)
		for i, v := range a.Float64Values() {
			out[i] = -v
		}
		return fixedArray(x.DataType(), out, valid, nulls), nil
	case *array.Decimal128:
		out := make([]decimal128.Num, n)
		for i, v := range a.Values() {
			out[i] = v.Negate()
		}
		return decimalArray(x.DataType(), out, valid, nulls), nil
	case *array.Decimal64:
		// At most 18 digits: the negation of every valid value is an int64.
		out := make([]int64, n)
		for i, v := range a.Values() {
			out[i] = -int64(v)
		}
		return decimalArray(x.DataType(), out, valid, nulls), nil
	case *array.MonthDayNanoInterval:
		out := make([]arrow.MonthDayNanoInterval, n)
		for i, v := range a.MonthDayNanoIntervalValues() {
			out[i] = arrow.MonthDayNanoInterval{Months: -v.Months, Days: -v.Days, Nanoseconds: -v.Nanoseconds}
		}
		return decimalArray(x.DataType(), out, valid, nulls), nil
	}
	return nil, analysisf("operator does not exist: -%s", types.Name(x.DataType()))
}

// --- dates, timestamps and intervals ---

// dateAddDays evaluates DATE ± BIGINT days → DATE (sign is +1 or -1).
func dateAddDays(x, y arrow.Array, sign int64) (arrow.Array, error) {
	n := x.Len()
	d, k := x.(*array.Date32).Date32Values(), y.(*array.Int64).Int64Values()
	out := make([]int32, n)
	valid, nulls := andValidity(n, x, y)
	for i, v := range d {
		// sign*k overflows for k = -9223372036854775808 and sign -1, but then no sum
		// fits in a DATE either way; the message states the operands as written.
		if types.DateInfSign(int64(v)) != 0 {
			out[i] = int32(v) // infinity plus days is infinity, as in DuckDB
			continue
		}
		r := int64(v) + sign*k[i]
		if types.DateInfSign(r) != 0 || r != int64(int32(r)) && isValid(valid, 0, i) {
			op := " + "
			if sign < 0 {
				op = " - "
			}
			return nil, outOfRange("date "+types.FormatDate(int32(v))+op+strconv.FormatInt(k[i], 10)+" days", types.Date)
		}
		out[i] = int32(r)
	}
	return fixedArray(types.Date, out, valid, nulls), nil
}

// dateDiff evaluates DATE − DATE → BIGINT days.
func dateDiff(x, y arrow.Array) (arrow.Array, error) {
	n := x.Len()
	a, b := x.(*array.Date32).Date32Values(), y.(*array.Date32).Date32Values()
	out := make([]int64, n)
	for i, v := range a {
		out[i] = int64(v) - int64(b[i])
	}
	valid, nulls := andValidity(n, x, y)
	return fixedArray(types.Int64, out, valid, nulls), nil
}

// tsAddInterval evaluates TIMESTAMP ± INTERVAL: months first (clamping the day to
// the month's end), then days, then the time part.
func tsAddInterval(x, y arrow.Array, sign int64) (arrow.Array, error) {
	n := x.Len()
	dt := x.DataType().(*arrow.TimestampType)
	per := types.UnitsPerSecond(dt.Unit)
	dayTicks := 86400 * per
	ts, iv := x.(*array.Timestamp).TimestampValues(), y.(*array.MonthDayNanoInterval).MonthDayNanoIntervalValues()
	out := make([]int64, n)
	valid, nulls := andValidity(n, x, y)
	for i, t := range ts {
		if !isValid(valid, 0, i) {
			continue
		}
		v := int64(t)
		k := iv[i]
		if types.TimestampInfSign(v) != 0 {
			out[i] = v // an infinite timestamp moved by an interval stays infinite
			continue
		}
		ok := true
		if k.Months != 0 {
			day, rem := floorDiv(v, dayTicks), floorMod(v, dayTicks)
			nd := addMonths(day, sign*int64(k.Months))
			ok = !mulOverflows(nd, dayTicks)
			v = nd*dayTicks + rem
		}
		var o1, o2 bool
		dd := sign * int64(k.Days)
		if mulOverflows(dd, dayTicks) {
			ok = false
		}
		v, o1 = addChecked(v, dd*dayTicks)
		v, o2 = addChecked(v, sign*(k.Nanoseconds/(1e9/per)))
		if !ok || o1 || o2 || types.TimestampInfSign(v) != 0 {
			return nil, outOfRange(types.FormatTimestamp(int64(t), dt.Unit, false)+" "+map[int64]string{1: "+", -1: "-"}[sign]+" "+types.FormatInterval(k), dt)
		}
		out[i] = v
	}
	return fixedArray(dt, out, valid, nulls), nil
}

// tsDiff evaluates TIMESTAMP − TIMESTAMP → INTERVAL of days and time (no months),
// as DuckDB does.
func tsDiff(x, y arrow.Array) (arrow.Array, error) {
	n := x.Len()
	unit := x.DataType().(*arrow.TimestampType).Unit
	per := types.UnitsPerSecond(unit)
	a, b := x.(*array.Timestamp).TimestampValues(), y.(*array.Timestamp).TimestampValues()
	out := make([]arrow.MonthDayNanoInterval, n)
	valid, nulls := andValidity(n, x, y)
	for i, v := range a {
		if !isValid(valid, 0, i) {
			continue
		}
		if types.TimestampInfSign(int64(v)) != 0 || types.TimestampInfSign(int64(b[i])) != 0 {
			return nil, analysisf("cannot subtract infinite timestamps")
		}
		d, over := subChecked(int64(v), int64(b[i]))
		if over {
			return nil, outOfRange(types.FormatTimestamp(int64(v), unit, false)+" - "+types.FormatTimestamp(int64(b[i]), unit, false), types.Interval)
		}
		days := d / (86400 * per)
		rem := d % (86400 * per)
		out[i] = arrow.MonthDayNanoInterval{Days: int32(days), Nanoseconds: rem * (1e9 / per)}
	}
	return decimalArray(types.Interval, out, valid, nulls), nil
}

// intervalAdd evaluates INTERVAL ± INTERVAL componentwise.
func intervalAdd(x, y arrow.Array, sign int32) (arrow.Array, error) {
	n := x.Len()
	a, b := x.(*array.MonthDayNanoInterval).MonthDayNanoIntervalValues(), y.(*array.MonthDayNanoInterval).MonthDayNanoIntervalValues()
	out := make([]arrow.MonthDayNanoInterval, n)
	valid, nulls := andValidity(n, x, y)
	for i, v := range a {
		m := int64(v.Months) + int64(sign)*int64(b[i].Months)
		d := int64(v.Days) + int64(sign)*int64(b[i].Days)
		ns, over := addChecked(v.Nanoseconds, int64(sign)*b[i].Nanoseconds)
		if isValid(valid, 0, i) && (over || m != int64(int32(m)) || d != int64(int32(d))) {
			op := " + "
			if sign < 0 {
				op = " - "
			}
			return nil, outOfRange(types.FormatInterval(v)+op+types.FormatInterval(b[i]), types.Interval)
		}
		out[i] = arrow.MonthDayNanoInterval{Months: int32(m), Days: int32(d), Nanoseconds: ns}
	}
	return decimalArray(types.Interval, out, valid, nulls), nil
}

// addChecked adds and reports overflow.
func addChecked(a, b int64) (int64, bool) {
	r := a + b
	return r, (a^r)&(b^r) < 0
}
