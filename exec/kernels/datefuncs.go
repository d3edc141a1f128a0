package kernels

import (
	"math"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// Date and time functions of DuckDB's surface: date_add, date_sub, age,
// make_timestamp, epoch_ms/us/ns, to_timestamp, last_day, dayname, monthname,
// time_bucket and the to_* interval constructors. Registered by functions_date.go.

func dateFunctions() map[string]binder {
	return map[string]binder{
		"date_add":         bindDateAdd,
		"date_sub":         bindDateSub,
		"datesub":          bindDateSub,
		"age":              bindAge,
		"make_timestamp":   bindMakeTimestamp(types.Timestamp),
		"make_timestamptz": bindMakeTimestamp(types.TimestampTZ),
		"make_timestamp_ns": bindSig([]argClass{clsInt}, &arrow.TimestampType{Unit: arrow.Nanosecond}, func(in []arrow.Array, n int) (arrow.Array, error) {
			return ticksToTimestamp(in, n, &arrow.TimestampType{Unit: arrow.Nanosecond})
		}),
		"epoch_ms":        bindEpochUnit(1e3),
		"epoch_us":        bindEpochUnit(1e6),
		"epoch_ns":        bindEpochUnit(1e9),
		"to_timestamp":    bindSig([]argClass{clsDouble}, types.TimestampTZ, toTimestamp),
		"last_day":        bindDateTo(types.Date, lastDay),
		"dayname":         bindDateTo(types.String, dayName),
		"monthname":       bindDateTo(types.String, monthName),
		"time_bucket":     bindTimeBucket,
		"to_millennia":    bindToInterval(clsInt, 'M', 12000),
		"to_centuries":    bindToInterval(clsInt, 'M', 1200),
		"to_decades":      bindToInterval(clsInt, 'M', 120),
		"to_years":        bindToInterval(clsInt, 'M', 12),
		"to_quarters":     bindToInterval(clsInt, 'M', 3),
		"to_months":       bindToInterval(clsInt, 'M', 1),
		"to_weeks":        bindToInterval(clsInt, 'D', 7),
		"to_days":         bindToInterval(clsInt, 'D', 1),
		"to_hours":        bindToInterval(clsInt, 'U', microsPerHour),
		"to_minutes":      bindToInterval(clsInt, 'U', microsPerMinute),
		"to_seconds":      bindToInterval(clsDouble, 'U', microsPerSecond),
		"to_milliseconds": bindToInterval(clsDouble, 'U', 1000),
		"to_microseconds": bindToInterval(clsInt, 'U', 1),
	}
}

// bindDateAdd is date_add(x, interval), which is x + interval.
func bindDateAdd(c *call) (*Function, error) {
	if len(c.args) != 2 || !temporalish(c.args[0]) || !(isInterval(c.args[1]) || isNullType(c.args[1])) {
		return nil, c.mismatch()
	}
	a := c.args[0]
	if isNullType(a) {
		a = types.Timestamp
	}
	if f := bindTemporalArith(c, opAdd, a, types.Interval); f != nil {
		return f, nil
	}
	return nil, c.mismatch()
}

// finiteMicros reads row i of a DATE or TIMESTAMP reader as microseconds since the
// epoch (nanoseconds truncated toward the earlier microsecond).
func finiteMicros(r temporalReader, i int) (days, micros int64) {
	d, ns := r.at(i)
	return d, ns / 1e3
}

// bindDateSub is date_sub(part, a, b): the number of whole parts from a to b
// (DuckDB's definition: a month is whole when the day and time of b reach those of
// a, with the last day of a month reaching any later day).
func bindDateSub(c *call) (*Function, error) {
	if len(c.args) != 3 || !stringish(c.args[0]) || !temporalish(c.args[1]) || !temporalish(c.args[2]) {
		return nil, c.mismatch()
	}
	t, ok := commonType(c.args[1], c.args[2])
	if !ok {
		return nil, c.mismatch()
	}
	if isNullType(t) || t.ID() == arrow.DATE32 {
		t = types.Timestamp
	}
	if p, ok := c.constString(0); ok {
		if _, ok := normPart(p); !ok {
			return nil, badPart("date_sub", p)
		}
	}
	return newFunction(c, []arrow.DataType{types.String, t, t}, types.Int64, dateSubKernel, true), nil
}

func dateSubKernel(args []arrow.Array, n int) (arrow.Array, error) {
	return partwiseKernel("date_sub", args, n, partSub)
}

// partSub is date_sub of one finite row: the whole parts from a to b.
func partSub(part string, ra, rb temporalReader, i int) (int64, error) {
	da, ua := finiteMicros(ra, i)
	db, ub := finiteMicros(rb, i)
	var unit int64
	switch part {
	case "millennium", "century", "decade", "year", "quarter", "month":
		m := wholeMonths(da, ua, db, ub)
		return m / map[string]int64{"millennium": 12000, "century": 1200, "decade": 120, "year": 12, "quarter": 3, "month": 1}[part], nil
	case "week":
		unit = 7 * microsPerDay
	case "day", "dow", "isodow", "doy":
		unit = microsPerDay
	case "hour":
		unit = microsPerHour
	case "minute":
		unit = microsPerMinute
	case "second", "epoch":
		unit = microsPerSecond
	case "millisecond":
		unit = 1000
	case "microsecond":
		unit = 1
	default:
		return 0, badPart("date_sub", part)
	}
	diff, over := subChecked(db*microsPerDay+ub, da*microsPerDay+ua)
	if over {
		return 0, errs.New(errs.Analysis, "out of range: date_sub in %ss does not fit in BIGINT", part)
	}
	return diff / unit, nil
}

// wholeMonths is the number of whole months from (da, ua) to (db, ub), negative when
// b is earlier.
func wholeMonths(da, ua, db, ub int64) int64 {
	if da > db || (da == db && ua > ub) {
		return -wholeMonths(db, ub, da, ua)
	}
	ya, ma, dda := civilFromDays(da)
	yb, mb, ddb := civilFromDays(db)
	// The last day of b's month completes a month begun on any later day of a month.
	if end := daysInMonth(yb, mb); ddb == end && (dda > end || (dda == end && ua < ub)) {
		dda = end
	}
	m := (yb*12 + mb) - (ya*12 + ma)
	if ddb < dda || (ddb == dda && ub < ua) {
		m--
	}
	return m
}

// bindAge is age(a, b): the interval from b to a in years, months, days and time,
// as PostgreSQL and DuckDB count it; age(a) is from a to today's midnight.
func bindAge(c *call) (*Function, error) {
	if len(c.args) == 1 {
		if !temporalish(c.args[0]) {
			return nil, c.mismatch()
		}
		midnight := types.Value{Type: types.Timestamp, I: floorDiv(time.Now().UnixMicro(), microsPerDay) * microsPerDay}
		return newFunction(c, []arrow.DataType{types.Timestamp}, types.Interval, func(in []arrow.Array, n int) (arrow.Array, error) {
			return ageKernel([]arrow.Array{ConstArray(midnight, n), in[0]}, n)
		}, true), nil
	}
	if len(c.args) != 2 || !temporalish(c.args[0]) || !temporalish(c.args[1]) {
		return nil, c.mismatch()
	}
	t, ok := commonType(c.args[0], c.args[1])
	if !ok {
		return nil, c.mismatch()
	}
	if isNullType(t) || t.ID() == arrow.DATE32 {
		t = types.Timestamp
	}
	return newFunction(c, []arrow.DataType{t, t}, types.Interval, ageKernel, true), nil
}

func ageKernel(args []arrow.Array, n int) (arrow.Array, error) {
	ra, _ := newTemporalReader(args[0])
	rb, _ := newTemporalReader(args[1])
	valid, nulls := andValidity(n, args...)
	out := make([]arrow.MonthDayNanoInterval, n)
	for i := 0; i < n; i++ {
		if !isValid(valid, 0, i) {
			continue
		}
		if ra.inf(i) != 0 || rb.inf(i) != 0 {
			return nil, errs.New(errs.Analysis, "age: cannot subtract infinite timestamps")
		}
		da, ua := finiteMicros(ra, i)
		db, ub := finiteMicros(rb, i)
		out[i] = age(da, ua, db, ub)
	}
	return decimalArray(types.Interval, out, valid, nulls), nil
}

// age computes the interval from (db, ub) to (da, ua): field differences, each
// negative field borrowing from the next larger one (a day borrows the length of
// the earlier value's month).
func age(da, ua, db, ub int64) arrow.MonthDayNanoInterval {
	y1, m1, d1 := civilFromDays(da)
	y2, m2, d2 := civilFromDays(db)
	flip := da < db || (da == db && ua < ub)
	year, month, day, us := y1-y2, m1-m2, d1-d2, ua-ub
	borrowY, borrowM := y2, m2
	if flip {
		year, month, day, us = -year, -month, -day, -us
		borrowY, borrowM = y1, m1
	}
	for us < 0 {
		us += microsPerDay
		day--
	}
	for day < 0 {
		day += daysInMonth(borrowY, borrowM)
		month--
	}
	for month < 0 {
		month += 12
		year--
	}
	if flip {
		year, month, day, us = -year, -month, -day, -us
	}
	return arrow.MonthDayNanoInterval{Months: int32(year*12 + month), Days: int32(day), Nanoseconds: us * 1e3}
}

// bindMakeTimestamp is make_timestamp(year, month, day, hour, minute, seconds) or
// make_timestamp(microseconds since the epoch) → res (TIMESTAMP, or TIMESTAMP WITH
// TIME ZONE for make_timestamptz, whose fields are read in UTC).
func bindMakeTimestamp(res arrow.DataType) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) == 1 {
			return bindSig([]argClass{clsInt}, res, func(in []arrow.Array, n int) (arrow.Array, error) {
				return ticksToTimestamp(in, n, res)
			})(c)
		}
		return bindSig([]argClass{clsInt, clsInt, clsInt, clsInt, clsInt, clsDouble}, res, func(in []arrow.Array, n int) (arrow.Array, error) {
			out, err := makeTimestamp(in, n)
			if err != nil || arrow.TypeEqual(res, types.Timestamp) {
				return out, err
			}
			return Cast(out, res)
		})(c)
	}
}

// ticksToTimestamp reads BIGINT ticks as a timestamp of type res; the values that
// stand for ±infinity are out of range.
func ticksToTimestamp(in []arrow.Array, n int, res arrow.DataType) (arrow.Array, error) {
	out := make([]int64, n)
	copy(out, i64(in[0]).Int64Values())
	valid, nulls := andValidity(n, in...)
	for i, v := range out {
		if isValid(valid, 0, i) && types.TimestampInfSign(v) != 0 {
			return nil, outOfRange(strconv.FormatInt(v, 10), res)
		}
	}
	return fixedArray(res, out, valid, nulls), nil
}

func makeTimestamp(args []arrow.Array, n int) (arrow.Array, error) {
	y, mo, d := i64(args[0]).Int64Values(), i64(args[1]).Int64Values(), i64(args[2]).Int64Values()
	h, mi := i64(args[3]).Int64Values(), i64(args[4]).Int64Values()
	s := args[5].(*array.Float64).Float64Values()
	valid, nulls := andValidity(n, args...)
	out := make([]int64, n)
	for i := 0; i < n; i++ {
		if !isValid(valid, 0, i) {
			continue
		}
		us := math.Round(s[i] * 1e6)
		ok := mo[i] >= 1 && mo[i] <= 12 && d[i] >= 1 && y[i] > -300000 && y[i] < 300000 && d[i] <= daysInMonth(y[i], mo[i]) &&
			h[i] >= 0 && h[i] <= 24 && mi[i] >= 0 && mi[i] < 60 && us >= 0 && us <= 60e6
		if ok {
			days := daysFromCivil(y[i], mo[i], d[i])
			t := days*microsPerDay + h[i]*microsPerHour + mi[i]*microsPerMinute + int64(us)
			if ok = days > -maxTimestampDays && days < maxTimestampDays; ok {
				out[i] = t
				continue
			}
		}
		return nil, errs.New(errs.Analysis, "out of range: make_timestamp(%d, %d, %d, %d, %d, %s) is not a valid TIMESTAMP", y[i], mo[i], d[i], h[i], mi[i], types.FormatFloat(s[i], false))
	}
	return fixedArray(types.Timestamp, out, valid, nulls), nil
}

// bindEpochUnit is epoch_ms / epoch_us / epoch_ns: of a DATE, TIMESTAMP or INTERVAL
// the BIGINT count of units since the epoch (truncated toward zero); epoch_ms of a
// BIGINT is the TIMESTAMP that many milliseconds after the epoch.
func bindEpochUnit(per int64) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 1 {
			return nil, c.mismatch()
		}
		t := c.args[0]
		switch {
		case per == 1e3 && types.IsInteger(t):
			return newFunction(c, []arrow.DataType{types.Int64}, types.Timestamp, func(in []arrow.Array, n int) (arrow.Array, error) {
				ms := i64(in[0]).Int64Values()
				valid, nulls := andValidity(n, in...)
				out := make([]int64, n)
				for i, v := range ms {
					if isValid(valid, 0, i) && (mulOverflows(v, 1000) || types.TimestampInfSign(v*1000) != 0) {
						return nil, outOfRange("epoch_ms("+types.FormatFloat(float64(v), false)+")", types.Timestamp)
					}
					out[i] = v * 1000
				}
				return fixedArray(types.Timestamp, out, valid, nulls), nil
			}, true), nil
		case isInterval(t):
			return newFunction(c, []arrow.DataType{t}, types.Int64, func(in []arrow.Array, n int) (arrow.Array, error) {
				vals := in[0].(*array.MonthDayNanoInterval).MonthDayNanoIntervalValues()
				return evalInts(in, n, func(i int) int64 {
					v := vals[i]
					us := (int64(v.Months)*30+int64(v.Days))*microsPerDay + v.Nanoseconds/1e3
					if per == 1e9 {
						return us * 1000
					}
					return us / (1e6 / per)
				}), nil
			}, true), nil
		case !temporalish(t):
			return nil, c.mismatch()
		}
		if isNullType(t) {
			t = types.Timestamp
		}
		return newFunction(c, []arrow.DataType{t}, types.Int64, func(in []arrow.Array, n int) (arrow.Array, error) {
			r, _ := newTemporalReader(in[0])
			z := newNullRows(n, in...)
			out := make([]int64, n)
			for i := 0; i < n; i++ {
				if !z.ok(i) {
					continue
				}
				if r.inf(i) != 0 {
					z.set(i)
					continue
				}
				days, nanos := r.at(i)
				secs := days*86400 + nanos/1e9
				frac := nanos % 1e9
				if secs < 0 && frac > 0 {
					secs++
					frac -= 1e9
				}
				v := secs * per
				if mulOverflows(secs, per) {
					return nil, outOfRange("the epoch of "+types.ValueAt(in[0], i).String(), types.Int64)
				}
				v, over := addChecked(v, frac/(1e9/per))
				if over {
					return nil, outOfRange("the epoch of "+types.ValueAt(in[0], i).String(), types.Int64)
				}
				out[i] = v
			}
			return fixedArray(types.Int64, out, z.valid, z.nulls), nil
		}, true), nil
	}
}

// toTimestamp is to_timestamp(seconds) → TIMESTAMP WITH TIME ZONE, to the nearest
// microsecond.
func toTimestamp(args []arrow.Array, n int) (arrow.Array, error) {
	secs := args[0].(*array.Float64).Float64Values()
	valid, nulls := andValidity(n, args...)
	out := make([]int64, n)
	for i, s := range secs {
		if !isValid(valid, 0, i) {
			continue
		}
		us := math.Round(s * 1e6)
		if math.IsNaN(us) || math.Abs(us) >= float64(maxTimestampDays)*float64(microsPerDay) {
			return nil, outOfRange("to_timestamp("+types.FormatFloat(s, false)+")", types.TimestampTZ)
		}
		out[i] = int64(us)
	}
	return fixedArray(types.TimestampTZ, out, valid, nulls), nil
}

// bindDateTo binds a function of one DATE or TIMESTAMP computed from its day number
// (NULL for an infinite value, as in DuckDB).
func bindDateTo(res arrow.DataType, f func(days int64) (int64, string)) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) != 1 || !temporalish(c.args[0]) {
			return nil, c.mismatch()
		}
		t := c.args[0]
		if isNullType(t) {
			t = types.Date
		}
		return newFunction(c, []arrow.DataType{t}, res, func(in []arrow.Array, n int) (arrow.Array, error) {
			r, _ := newTemporalReader(in[0])
			z := newNullRows(n, in...)
			if res.ID() == arrow.STRING {
				b := newStrBuilder(n, 8*n)
				for i := 0; i < n; i++ {
					if !z.ok(i) || r.inf(i) != 0 {
						b.addNull()
						continue
					}
					days, _ := r.at(i)
					_, s := f(days)
					b.add(s)
				}
				return b.finish(), nil
			}
			out := make([]int32, n)
			for i := 0; i < n; i++ {
				if !z.ok(i) {
					continue
				}
				if r.inf(i) != 0 {
					z.set(i)
					continue
				}
				days, _ := r.at(i)
				v, _ := f(days)
				out[i] = int32(v)
			}
			return fixedArray(res, out, z.valid, z.nulls), nil
		}, true), nil
	}
}

func lastDay(days int64) (int64, string) {
	y, m, _ := civilFromDays(days)
	return daysFromCivil(y, m, daysInMonth(y, m)), ""
}

func dayName(days int64) (int64, string) { return 0, dayNames[isoWeekday(days)%7] }

func monthName(days int64) (int64, string) {
	_, m, _ := civilFromDays(days)
	return 0, monthNames[m-1]
}

// bindToInterval binds a to_* constructor: n of a unit as an INTERVAL of months
// ('M'), days ('D') or microseconds ('U'); a result that does not fit is an error.
func bindToInterval(cls argClass, kind byte, mul int64) binder {
	return bindSig([]argClass{cls}, types.Interval, func(in []arrow.Array, n int) (arrow.Array, error) {
		valid, nulls := andValidity(n, in...)
		out := make([]arrow.MonthDayNanoInterval, n)
		for i := 0; i < n; i++ {
			if !isValid(valid, 0, i) {
				continue
			}
			var iv arrow.MonthDayNanoInterval
			ok := true
			if cls == clsDouble {
				us := math.Round(in[0].(*array.Float64).Value(i) * float64(mul))
				ok = !math.IsNaN(us) && math.Abs(us) < 9.2e15
				iv.Nanoseconds = int64(us) * 1e3
			} else {
				v := i64(in[0]).Value(i)
				r := v * mul
				ok = !mulOverflows(v, mul)
				switch kind {
				case 'M':
					ok = ok && r == int64(int32(r))
					iv.Months = int32(r)
				case 'D':
					ok = ok && r == int64(int32(r))
					iv.Days = int32(r)
				default:
					ok = ok && !mulOverflows(r, 1000)
					iv.Nanoseconds = r * 1000
				}
			}
			if !ok {
				return nil, outOfRange("the interval", types.Interval)
			}
			out[i] = iv
		}
		return decimalArray(types.Interval, out, valid, nulls), nil
	})
}

// The default origins of time_bucket: 2000-01-03 (a Monday) for buckets of days
// and time, 2000-01-01 for buckets of months.
const (
	bucketOriginMicros = 946857600000000
	bucketOriginMonths = 360 // months from 1970-01 to 2000-01
)

// bindTimeBucket is time_bucket(width, x [, origin | offset]): the start of the
// bucket of width holding x, buckets counted from the origin (a TIMESTAMP or DATE),
// or from the default origin moved by offset (an INTERVAL). The result has x's type.
func bindTimeBucket(c *call) (*Function, error) {
	if len(c.args) < 2 || len(c.args) > 3 || !(isInterval(c.args[0]) || isNullType(c.args[0])) || !temporalish(c.args[1]) {
		return nil, c.mismatch()
	}
	t := c.args[1]
	if isNullType(t) {
		t = types.Timestamp
	}
	args := []arrow.DataType{types.Interval, t}
	mode := byte(0)
	if len(c.args) == 3 {
		switch third := c.args[2]; {
		case isInterval(third):
			mode = 'o'
			args = append(args, types.Interval)
		case temporalish(third):
			mode = 'r'
			args = append(args, types.Timestamp)
		default:
			return nil, c.mismatch()
		}
	}
	return newFunction(c, args, t, func(in []arrow.Array, n int) (arrow.Array, error) {
		return timeBucket(in, n, t, mode)
	}, true), nil
}

func timeBucket(in []arrow.Array, n int, t arrow.DataType, mode byte) (arrow.Array, error) {
	widths := in[0].(*array.MonthDayNanoInterval).MonthDayNanoIntervalValues()
	r, _ := newTemporalReader(in[1])
	var offsets []arrow.MonthDayNanoInterval
	var origins []arrow.Timestamp
	switch mode {
	case 'o':
		offsets = in[2].(*array.MonthDayNanoInterval).MonthDayNanoIntervalValues()
	case 'r':
		origins = in[2].(*array.Timestamp).TimestampValues()
	}
	z := newNullRows(n, in...)
	out := make([]int64, n)
	// A DATE's bucket of months is found and kept in days: the dates far beyond the
	// TIMESTAMP range (5877642 BC, 5881580 AD) have their month too.
	isDate := arrow.TypeEqual(t, types.Date)
	var outDays []int32
	if isDate {
		outDays = make([]int32, n)
	}
	for i := 0; i < n; i++ {
		if !z.ok(i) {
			continue
		}
		w := widths[i]
		if w.Months != 0 && (w.Days != 0 || w.Nanoseconds != 0) {
			return nil, errs.New(errs.Analysis, "time_bucket: a width cannot mix months with days or time (%s)", types.FormatInterval(w))
		}
		wus := int64(w.Days)*microsPerDay + w.Nanoseconds/1e3
		if w.Months < 0 || (w.Months == 0 && wus <= 0) {
			return nil, errs.New(errs.Analysis, "time_bucket: the width must be greater than 0 (%s)", types.FormatInterval(w))
		}
		if s := r.inf(i); s != 0 {
			out[i] = int64(s) * types.TimestampInfinity
			if isDate {
				outDays[i] = int32(s) * types.DateInfinity
			}
			continue
		}
		days, us := finiteMicros(r, i)
		if isDate && w.Months != 0 && offsets == nil && origins == nil {
			y, m, _ := civilFromDays(days)
			months := (y-1970)*12 + m - 1
			width := int64(w.Months)
			origin := int64(bucketOriginMonths) % width
			bucket := floorDiv(months-origin, width)*width + origin
			outDays[i] = int32(daysFromCivil(1970+floorDiv(bucket, 12), floorMod(bucket, 12)+1, 1))
			continue
		}
		if mulOverflows(days, microsPerDay) {
			return nil, outOfRange("time_bucket", t)
		}
		ts := days*microsPerDay + us
		var off arrow.MonthDayNanoInterval
		if offsets != nil {
			off = offsets[i]
			var ok bool
			if ts, ok = shiftMicros(ts, off, -1); !ok {
				return nil, outOfRange("time_bucket offset", t)
			}
		}
		var res int64
		if w.Months != 0 {
			origin := int64(bucketOriginMonths)
			if origins != nil {
				if types.TimestampInfSign(int64(origins[i])) != 0 {
					z.set(i)
					continue
				}
				y, m, _ := civilFromDays(floorDiv(int64(origins[i]), microsPerDay))
				origin = (y-1970)*12 + m - 1
			}
			y, m, _ := civilFromDays(floorDiv(ts, microsPerDay))
			months := (y-1970)*12 + m - 1
			width := int64(w.Months)
			origin %= width
			bucket := floorDiv(months-origin, width)*width + origin
			res = daysFromCivil(1970+floorDiv(bucket, 12), floorMod(bucket, 12)+1, 1) * microsPerDay
		} else {
			origin := int64(bucketOriginMicros)
			if origins != nil {
				if types.TimestampInfSign(int64(origins[i])) != 0 {
					z.set(i)
					continue
				}
				origin = int64(origins[i])
			}
			origin %= wus
			diff, over := subChecked(ts, origin)
			if over {
				return nil, outOfRange("time_bucket", t)
			}
			res = floorDiv(diff, wus)*wus + origin
		}
		if offsets != nil {
			var ok bool
			if res, ok = shiftMicros(res, off, 1); !ok {
				return nil, outOfRange("time_bucket offset", t)
			}
		}
		out[i] = res
		if isDate {
			outDays[i] = int32(floorDiv(res, microsPerDay))
		}
	}
	if isDate {
		return fixedArray(types.Date, outDays, z.valid, z.nulls), nil
	}
	res := fixedArray(types.Timestamp, out, z.valid, z.nulls)
	if arrow.TypeEqual(t, types.Timestamp) {
		return res, nil
	}
	return Cast(res, t)
}

// shiftMicros moves microseconds since the epoch by sign × an interval (months,
// then days, then time), reporting overflow.
func shiftMicros(us int64, iv arrow.MonthDayNanoInterval, sign int64) (int64, bool) {
	day, rem := floorDiv(us, microsPerDay), floorMod(us, microsPerDay)
	day = addMonths(day, sign*int64(iv.Months)) + sign*int64(iv.Days)
	if mulOverflows(day, microsPerDay) {
		return 0, false
	}
	v, o1 := addChecked(day*microsPerDay, rem)
	v, o2 := addChecked(v, sign*(iv.Nanoseconds/1e3))
	return v, !o1 && !o2
}
