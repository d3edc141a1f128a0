package kernels

import (
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// The date and time functions beyond date_part, date_trunc and date_diff, added to
// the registry after functions.go's table is made (this file's init runs after
// that one's).

func init() {
	for name, b := range map[string]binder{
		"strptime":     bindStrptime(false),
		"try_strptime": bindStrptime(true),
	} {
		registry[name] = b
	}
	for name, b := range dateFunctions() {
		registry[name] = b
	}
	// isinf and isfinite of a number are the math functions' own.
	addTemporalOverload("isinf", bindInfTest(true))
	addTemporalOverload("isfinite", bindInfTest(false))
}

// addTemporalOverload makes name call b for a DATE or TIMESTAMP first argument and
// whatever name already was for any other.
func addTemporalOverload(name string, b binder) {
	prev := registry[name]
	registry[name] = func(c *call) (*Function, error) {
		if prev == nil || (len(c.args) > 0 && isDateLike(c.args[0])) {
			return b(c)
		}
		return prev(c)
	}
}

// constFormat compiles argument i as a strftime/strptime format, which must be a
// constant; ok is false when it is the NULL constant.
func (c *call) constFormat(i int) (tf *timeFormat, ok bool, err error) {
	if i < len(c.consts) && c.consts[i] != nil && c.consts[i].Null {
		return nil, false, nil
	}
	f, isConst := c.constString(i)
	if !isConst {
		return nil, false, errs.New(errs.Analysis, "%s: the format must be a constant", c.name)
	}
	tf, err = compileTimeFormat(c.name, f)
	return tf, err == nil, err
}

// bindStrftime binds strftime(x, format) (or strftime(format, x), which DuckDB also
// takes) → VARCHAR. An infinite value is rendered infinity or -infinity.
func bindStrftime(c *call) (*Function, error) {
	if len(c.args) != 2 {
		return nil, c.mismatch()
	}
	xi, fi := 0, 1
	if stringish(c.args[0]) && isDateLike(c.args[1]) {
		xi, fi = 1, 0
	}
	if !temporalish(c.args[xi]) || !stringish(c.args[fi]) {
		return nil, c.mismatch()
	}
	t := c.args[xi]
	if isNullType(t) {
		t = types.Timestamp
	}
	tf, ok, err := c.constFormat(fi)
	if err != nil {
		return nil, err
	}
	args := make([]arrow.DataType, 2)
	args[xi], args[fi] = t, types.String
	tz := t.ID() == arrow.TIMESTAMP && t.(*arrow.TimestampType).TimeZone != ""
	return newFunction(c, args, types.String, func(in []arrow.Array, n int) (arrow.Array, error) {
		if !ok {
			return nullArray(types.String, n), nil
		}
		r, _ := newTemporalReader(in[xi])
		var buf []byte
		return evalStrings(in, n, func(i int) (string, error) {
			if s := r.inf(i); s != 0 {
				return infName(s), nil
			}
			days, nanos := r.at(i)
			buf = tf.appendFormat(buf[:0], days, nanos, tz)
			return string(buf), nil
		})
	}, true), nil
}

func infName(sign int) string {
	if sign > 0 {
		return "infinity"
	}
	return "-infinity"
}

// bindStrptime binds strptime(text, format) → TIMESTAMP (WITH TIME ZONE when the
// format has %z); try_strptime gives NULL where strptime fails on a value.
func bindStrptime(try bool) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 2 || !stringish(c.args[0]) || !stringish(c.args[1]) {
			return nil, c.mismatch()
		}
		tf, ok, err := c.constFormat(1)
		if err != nil {
			return nil, err
		}
		res := types.Timestamp
		switch {
		case ok && tf.zone:
			res = types.TimestampTZ
		case ok && tf.nanos:
			res = types.TimestampNS
		}
		return newFunction(c, []arrow.DataType{types.String, types.String}, res, func(in []arrow.Array, n int) (arrow.Array, error) {
			if !ok {
				return nullArray(res, n), nil
			}
			s := str(in[0])
			z := newNullRows(n, in...)
			out := make([]int64, n)
			for i := 0; i < n; i++ {
				if !z.ok(i) {
					continue
				}
				v, ns, err := tf.parseFine(s.Value(i))
				if err == nil && res == types.TimestampNS {
					v, err = nanosOfMicros(v, ns)
				}
				if err != nil {
					if try {
						z.set(i)
						continue
					}
					return nil, err
				}
				out[i] = v
			}
			return fixedArray(res, out, z.valid, z.nulls), nil
		}, true), nil
	}
}

// nanosOfMicros is a microsecond timestamp and the nanoseconds past it as
// nanoseconds, an infinity staying one; a time beyond TIMESTAMP_NS's range (years
// 1677 to 2262) is an error.
func nanosOfMicros(us, ns int64) (int64, error) {
	if sign := types.TimestampInfSign(us); sign != 0 {
		if sign > 0 {
			return types.TimestampInfinity, nil
		}
		return types.TimestampNegInfinity, nil
	}
	if us > math.MaxInt64/1000-1 || us < math.MinInt64/1000+1 {
		return 0, errs.New(errs.Analysis, "timestamp %s is out of the range of TIMESTAMP_NS", types.FormatTimestamp(us, arrow.Microsecond, false))
	}
	return us*1000 + ns, nil
}

// bindInfTest binds isinf(x) (want true) or isfinite(x) of a DATE or TIMESTAMP.
func bindInfTest(inf bool) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 1 || !temporalish(c.args[0]) {
			return nil, c.mismatch()
		}
		t := c.args[0]
		if isNullType(t) {
			t = types.Timestamp
		}
		return newFunction(c, []arrow.DataType{t}, types.Boolean, func(in []arrow.Array, n int) (arrow.Array, error) {
			r, _ := newTemporalReader(in[0])
			bits := make([]bool, n)
			for i := range bits {
				bits[i] = (r.inf(i) != 0) == inf
			}
			valid, nulls := andValidity(n, in...)
			return boolArray(packBools(bits), n, valid, nulls), nil
		}, true), nil
	}
}

// microTimestamp is the type of DATE or TIMESTAMP ± INTERVAL: a TIMESTAMP in
// microseconds (DuckDB computes TIMESTAMP_NS, _MS and _S ± INTERVAL as TIMESTAMP),
// keeping WITH TIME ZONE.
func microTimestamp(t arrow.DataType) arrow.DataType {
	if ts, ok := t.(*arrow.TimestampType); ok && ts.TimeZone != "" {
		return types.TimestampTZ
	}
	return types.Timestamp
}

// bindIntervalScale binds INTERVAL * number, number * INTERVAL and INTERVAL /
// number; nil when no side is an INTERVAL.
func bindIntervalScale(c *call, op arithOp, a, b arrow.DataType) *Function {
	if !isInterval(a) && !isInterval(b) {
		return nil
	}
	iv, num := 0, 1
	if isInterval(b) {
		if op == opDiv || isInterval(a) {
			return nil
		}
		iv, num = 1, 0
	}
	nt := c.args[num]
	if !numericish(nt) {
		return nil
	}
	k := types.Float64
	if isNullType(nt) || types.IsInteger(nt) {
		k = types.Int64
	}
	args := make([]arrow.DataType, 2)
	args[iv], args[num] = types.Interval, k
	return newFunction(c, args, types.Interval, func(in []arrow.Array, n int) (arrow.Array, error) {
		return scaleInterval(in[iv].(*array.MonthDayNanoInterval), in[num], op == opDiv, n)
	}, true)
}

// scaleInterval multiplies or divides each interval by a number. An integer factor
// multiplies each field exactly (an overflow is an error); a division, or a
// fractional factor, carries the fraction of months into days (30 to a month) and
// of days into the time, as DuckDB does. Division by zero is NULL.
func scaleInterval(iv *array.MonthDayNanoInterval, num arrow.Array, div bool, n int) (arrow.Array, error) {
	vals := iv.MonthDayNanoIntervalValues()
	z := newNullRows(n, iv, num)
	out := make([]arrow.MonthDayNanoInterval, n)
	ints, isInt := num.(*array.Int64)
	for i := 0; i < n; i++ {
		if !z.ok(i) {
			continue
		}
		v := vals[i]
		if isInt && !div {
			k := ints.Value(i)
			m, d := int64(v.Months)*k, int64(v.Days)*k
			ns := v.Nanoseconds * k
			if mulOverflows(int64(v.Months), k) || mulOverflows(int64(v.Days), k) || mulOverflows(v.Nanoseconds, k) ||
				m != int64(int32(m)) || d != int64(int32(d)) {
				return nil, outOfRange(types.FormatInterval(v)+" * "+strconv.FormatInt(k, 10), types.Interval)
			}
			out[i] = arrow.MonthDayNanoInterval{Months: int32(m), Days: int32(d), Nanoseconds: ns}
			continue
		}
		var f float64
		if isInt {
			f = float64(ints.Value(i))
		} else {
			f = num.(*array.Float64).Value(i)
		}
		if div {
			if f == 0 {
				z.set(i)
				continue
			}
		}
		r, ok := scaleFrac(v, f, div)
		if !ok {
			return nil, outOfRange(types.FormatInterval(v)+" scaled by "+types.FormatFloat(f, false), types.Interval)
		}
		out[i] = r
	}
	return decimalArray(types.Interval, out, z.valid, z.nulls), nil
}

// scaleFrac is v × f (or v ÷ f) with fractions carried downwards, to microseconds.
func scaleFrac(v arrow.MonthDayNanoInterval, f float64, div bool) (arrow.MonthDayNanoInterval, bool) {
	apply := func(x float64) float64 {
		if div {
			return x / f
		}
		return x * f
	}
	months := apply(float64(v.Months))
	wm := math.Trunc(months)
	days := apply(float64(v.Days)) + (months-wm)*30
	wd := math.Trunc(days)
	micros := apply(float64(v.Nanoseconds)/1e3) + (days-wd)*float64(microsPerDay)
	wu := math.Trunc(micros)
	if math.Abs(wm) > math.MaxInt32 || math.Abs(wd) > math.MaxInt32 || math.Abs(wu) > 9.2e15 || math.IsNaN(wu) {
		return arrow.MonthDayNanoInterval{}, false
	}
	return arrow.MonthDayNanoInterval{Months: int32(wm), Days: int32(wd), Nanoseconds: int64(wu) * 1e3}, true
}
