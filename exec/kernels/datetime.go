package kernels

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// Date and time functions over DATE and TIMESTAMP (any unit; WITH TIME ZONE values
// are UTC instants and are read in UTC). Rows are split into a day number and
// nanoseconds since midnight once, then the part is computed with integer calendar
// arithmetic (civil.go).

// temporalReader splits row i of a DATE or TIMESTAMP array into days since the
// epoch and nanoseconds since midnight.
type temporalReader struct {
	dates []arrow.Date32
	ts    []arrow.Timestamp
	per   int64 // ticks per second of ts
}

func newTemporalReader(x arrow.Array) (temporalReader, bool) {
	switch a := x.(type) {
	case *array.Date32:
		return temporalReader{dates: a.Date32Values()}, true
	case *array.Timestamp:
		return temporalReader{ts: a.TimestampValues(), per: types.UnitsPerSecond(a.DataType().(*arrow.TimestampType).Unit)}, true
	}
	return temporalReader{}, false
}

// inf is +1 or -1 when row i is an infinite date or timestamp, else 0.
func (r temporalReader) inf(i int) int {
	if r.dates != nil {
		return types.DateInfSign(int64(r.dates[i]))
	}
	return types.TimestampInfSign(int64(r.ts[i]))
}

// nullRows marks rows NULL in a validity bitmap from andValidity, making one when
// there is none.
type nullRows struct {
	valid []byte
	nulls int
	n     int
}

func newNullRows(n int, args ...arrow.Array) *nullRows {
	v, k := andValidity(n, args...)
	return &nullRows{valid: v, nulls: k, n: n}
}

func (z *nullRows) set(i int) {
	if z.valid == nil {
		z.valid = make([]byte, bitmapLen(z.n))
		bitutil.SetBitsTo(z.valid, 0, int64(z.n), true)
	}
	if bitutil.BitIsSet(z.valid, i) {
		bitutil.ClearBit(z.valid, i)
		z.nulls++
	}
}

func (z *nullRows) ok(i int) bool { return isValid(z.valid, 0, i) }

func (r temporalReader) at(i int) (days, nanos int64) {
	if r.dates != nil {
		return int64(r.dates[i]), 0
	}
	v := int64(r.ts[i])
	dayTicks := 86400 * r.per
	return floorDiv(v, dayTicks), floorMod(v, dayTicks) * (1e9 / r.per)
}

// normPart maps a part name and its synonyms to a canonical name.
func normPart(p string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(p)) {
	case "millennium", "millennia", "millenniums", "mil", "mils", "millenium":
		return "millennium", true
	case "century", "centuries", "cent", "c":
		return "century", true
	case "decade", "decades", "dec", "decs":
		return "decade", true
	case "year", "years", "yr", "yrs", "y":
		return "year", true
	case "quarter", "quarters":
		return "quarter", true
	case "month", "months", "mon", "mons":
		return "month", true
	case "week", "weeks", "w", "weekofyear":
		return "week", true
	case "day", "days", "d", "dayofmonth":
		return "day", true
	case "hour", "hours", "hr", "hrs", "h":
		return "hour", true
	case "minute", "minutes", "min", "mins", "m":
		return "minute", true
	case "second", "seconds", "sec", "secs", "s":
		return "second", true
	case "millisecond", "milliseconds", "ms", "msec", "msecs", "msecond", "mseconds":
		return "millisecond", true
	case "microsecond", "microseconds", "us", "usec", "usecs", "usecond", "useconds":
		return "microsecond", true
	case "dow", "dayofweek", "weekday":
		return "dow", true
	case "isodow":
		return "isodow", true
	case "doy", "dayofyear":
		return "doy", true
	case "isoyear":
		return "isoyear", true
	case "yearweek":
		return "yearweek", true
	case "epoch":
		return "epoch", true
	case "era":
		return "era", true
	case "julian":
		return "julian", true
	case "timezone", "timezone_hour", "timezone_minute":
		// Values WITH TIME ZONE are held in UTC: every offset is 0.
		return "timezone", true
	}
	return "", false
}

func badPart(fn, p string) error {
	return errs.New(errs.Analysis, "%s: unknown date part %q", fn, p)
}

// partCache resolves the part argument row by row, normalising each distinct
// spelling once (the part is almost always a constant).
type partCache struct {
	last, norm string
	fn         string
}

func (c *partCache) get(p string) (string, error) {
	if p == c.last && c.norm != "" {
		return c.norm, nil
	}
	norm, ok := normPart(p)
	if !ok {
		return "", badPart(c.fn, p)
	}
	c.last, c.norm = p, norm
	return norm, nil
}

// extractPart computes one part of a day and time of day as an integer.
func extractPart(part string, days, nanos int64) (int64, bool) {
	switch part {
	case "hour":
		return nanos / 3600e9, true
	case "minute":
		return nanos / 60e9 % 60, true
	case "second":
		return nanos / 1e9 % 60, true
	case "millisecond":
		return nanos / 1e6 % 60000, true
	case "microsecond":
		return nanos / 1e3 % 60000000, true
	case "dow":
		return isoWeekday(days) % 7, true
	case "isodow":
		return isoWeekday(days), true
	case "week":
		_, w := isoYearWeek(days)
		return w, true
	case "isoyear":
		y, _ := isoYearWeek(days)
		return y, true
	case "yearweek":
		y, w := isoYearWeek(days)
		return y*100 + w, true
	case "epoch":
		return days*86400 + nanos/1e9, true
	case "timezone":
		return 0, true
	case "julian":
		return days + julianEpoch, true
	}
	y, m, d := civilFromDays(days)
	switch part {
	case "year":
		return y, true
	case "era":
		if y > 0 {
			return 1, true
		}
		return 0, true
	case "month":
		return m, true
	case "day":
		return d, true
	case "quarter":
		return (m-1)/3 + 1, true
	case "doy":
		return days - daysFromCivil(y, 1, 1) + 1, true
	case "decade":
		return y / 10, true
	case "century":
		if y > 0 {
			return (y-1)/100 + 1, true
		}
		return -((-y)/100 + 1), true
	case "millennium":
		if y > 0 {
			return (y-1)/1000 + 1, true
		}
		return -((-y)/1000 + 1), true
	}
	return 0, false
}

// datePart is date_part(part, x) / extract(part FROM x) → BIGINT (epoch as whole
// seconds; the DOUBLE epoch is datePartEpoch).
func datePart(args []arrow.Array, n int) (arrow.Array, error) {
	parts := str(args[0])
	if iv, ok := args[1].(*array.MonthDayNanoInterval); ok {
		return intervalPart(parts, iv, n)
	}
	r, ok := newTemporalReader(args[1])
	if !ok {
		return nil, errs.New(errs.Analysis, "no function matches date_part(VARCHAR, %s)", types.Name(args[1].DataType()))
	}
	pc := partCache{fn: "date_part"}
	z := newNullRows(n, args...)
	out := make([]int64, n)
	for i := 0; i < n; i++ {
		if !z.ok(i) {
			continue
		}
		part, err := pc.get(parts.Value(i))
		if err != nil {
			return nil, err
		}
		if r.inf(i) != 0 {
			// Every part of an infinite value is NULL, as in DuckDB.
			z.set(i)
			continue
		}
		days, nanos := r.at(i)
		v, ok := extractPart(part, days, nanos)
		if !ok {
			return nil, badPart("date_part", parts.Value(i))
		}
		out[i] = v
	}
	return fixedArray(types.Int64, out, z.valid, z.nulls), nil
}

// datePartEpoch is date_part('epoch', x) → DOUBLE seconds with the fraction.
func datePartEpoch(args []arrow.Array, n int) (arrow.Array, error) {
	x := args[len(args)-1]
	out := make([]float64, n)
	z := newNullRows(n, args...)
	switch a := x.(type) {
	case *array.Date32:
		for i, d := range a.Date32Values() {
			out[i] = float64(int64(d) * 86400)
			if types.DateInfSign(int64(d)) != 0 {
				z.set(i)
			}
		}
	case *array.Timestamp:
		per := float64(types.UnitsPerSecond(a.DataType().(*arrow.TimestampType).Unit))
		for i, v := range a.TimestampValues() {
			out[i] = float64(v) / per
			if types.TimestampInfSign(int64(v)) != 0 {
				z.set(i)
			}
		}
	case *array.MonthDayNanoInterval:
		for i, v := range a.MonthDayNanoIntervalValues() {
			out[i] = float64(v.Months)*30*86400 + float64(v.Days)*86400 + float64(v.Nanoseconds)/1e9
		}
	}
	return fixedArray(types.Float64, out, z.valid, z.nulls), nil
}

func intervalPart(parts *array.String, iv *array.MonthDayNanoInterval, n int) (arrow.Array, error) {
	vals := iv.MonthDayNanoIntervalValues()
	valid, nulls := andValidity(n, parts, iv)
	out := make([]int64, n)
	pc := partCache{fn: "date_part"}
	for i := 0; i < n; i++ {
		if !isValid(valid, 0, i) {
			continue
		}
		part, err := pc.get(parts.Value(i))
		if err != nil {
			return nil, err
		}
		v := vals[i]
		var r int64
		switch part {
		case "millennium":
			r = int64(v.Months) / 12000
		case "century":
			r = int64(v.Months) / 1200
		case "decade":
			r = int64(v.Months) / 120
		case "year":
			r = int64(v.Months) / 12
		case "quarter":
			r = int64(v.Months)%12/3 + 1
		case "month":
			r = int64(v.Months) % 12
		case "day":
			r = int64(v.Days)
		case "hour":
			r = v.Nanoseconds / 3600e9
		case "minute":
			r = v.Nanoseconds / 60e9 % 60
		case "second":
			r = v.Nanoseconds / 1e9 % 60
		case "millisecond":
			r = v.Nanoseconds / 1e6 % 60000
		case "microsecond":
			r = v.Nanoseconds / 1e3 % 60000000
		case "epoch":
			r = int64(v.Months)*30*86400 + int64(v.Days)*86400 + v.Nanoseconds/1e9
		default:
			return nil, errs.New(errs.Analysis, "date_part: part %q is not defined for INTERVAL", parts.Value(i))
		}
		out[i] = r
	}
	return fixedArray(types.Int64, out, valid, nulls), nil
}

// truncDay truncates a day number to the start of part (for parts of a day or
// longer) and returns the new day number.
func truncDay(part string, days int64) int64 {
	switch part {
	case "week":
		return days - isoWeekday(days) + 1
	case "day":
		return days
	}
	y, m, _ := civilFromDays(days)
	switch part {
	case "month":
		return daysFromCivil(y, m, 1)
	case "quarter":
		return daysFromCivil(y, (m-1)/3*3+1, 1)
	case "year":
		return daysFromCivil(y, 1, 1)
	// DuckDB truncates the (astronomical) year toward zero: 2000 and 2001 both
	// begin the century 2000, and -44 the decade -40.
	case "decade":
		return daysFromCivil(y/10*10, 1, 1)
	case "century":
		return daysFromCivil(y/100*100, 1, 1)
	case "millennium":
		return daysFromCivil(y/1000*1000, 1, 1)
	}
	return days
}

// truncNanos truncates nanoseconds since midnight to part (hour and below).
func truncNanos(part string, nanos int64) (int64, bool) {
	var q int64
	switch part {
	case "hour":
		q = 3600e9
	case "minute":
		q = 60e9
	case "second":
		q = 1e9
	case "millisecond":
		q = 1e6
	case "microsecond":
		q = 1e3
	default:
		return 0, false
	}
	return nanos - nanos%q, true
}

func isDayOrLonger(part string) bool {
	switch part {
	case "millennium", "century", "decade", "year", "quarter", "month", "week", "day":
		return true
	}
	return false
}

// dateTrunc is date_trunc(part, x). The result has type res: a TIMESTAMP (the
// argument's, or microseconds for a DATE) or, when the caller knows the part is a
// day or longer, DATE.
func dateTrunc(res arrow.DataType) func(args []arrow.Array, n int) (arrow.Array, error) {
	return func(args []arrow.Array, n int) (arrow.Array, error) {
		parts := str(args[0])
		r, ok := newTemporalReader(args[1])
		if !ok {
			return nil, errs.New(errs.Analysis, "no function matches date_trunc(VARCHAR, %s)", types.Name(args[1].DataType()))
		}
		pc := partCache{fn: "date_trunc"}
		valid, nulls := andValidity(n, args...)
		if ts, ok := args[1].(*array.Timestamp); ok && n > 0 && args[0].IsValid(0) && constantValue(args[0]) {
			part, err := pc.get(parts.Value(0))
			if err != nil {
				return nil, err
			}
			if out, ok := truncTimestamps(part, ts, res, valid, nulls); ok {
				return out, nil
			}
		}
		var outTs []int64
		var outDates []int32
		var per int64
		if t, ok := res.(*arrow.TimestampType); ok {
			outTs = make([]int64, n)
			per = types.UnitsPerSecond(t.Unit)
		} else {
			outDates = make([]int32, n)
		}
		for i := 0; i < n; i++ {
			if !isValid(valid, 0, i) {
				continue
			}
			part, err := pc.get(parts.Value(i))
			if err != nil {
				return nil, err
			}
			if s := r.inf(i); s != 0 {
				// An infinite value truncates to itself.
				if outDates != nil {
					outDates[i] = int32(s) * types.DateInfinity
				} else {
					outTs[i] = int64(s) * types.TimestampInfinity
				}
				continue
			}
			days, nanos := r.at(i)
			if isDayOrLonger(part) {
				days, nanos = truncDay(part, days), 0
			} else if nanos, ok = truncNanos(part, nanos); !ok {
				return nil, badPart("date_trunc", parts.Value(i))
			}
			if outDates != nil {
				outDates[i] = int32(days)
			} else {
				outTs[i] = days*86400*per + nanos/(1e9/per)
			}
		}
		if outDates != nil {
			return fixedArray(res, outDates, valid, nulls), nil
		}
		return fixedArray(res, outTs, valid, nulls), nil
	}
}

// truncTimestamps is date_trunc of timestamps to one part of fixed width — a day
// or shorter — in one loop of floor divisions: into a DATE for a day, else into
// timestamps of the argument's unit. ok is false for other parts and result types,
// which the general loop takes.
func truncTimestamps(part string, a *array.Timestamp, res arrow.DataType, valid []byte, nulls int) (arrow.Array, bool) {
	per := types.UnitsPerSecond(a.DataType().(*arrow.TimestampType).Unit)
	var q int64
	switch part {
	case "day":
		q = 86400 * per
	case "hour":
		q = 3600 * per
	case "minute":
		q = 60 * per
	case "second":
		q = per
	case "millisecond":
		q = per / 1000
	case "microsecond":
		q = per / 1_000_000
	}
	if q <= 0 {
		return nil, false
	}
	vals := a.TimestampValues()
	switch t := res.(type) {
	case *arrow.Date32Type:
		if part != "day" {
			return nil, false
		}
		out := make([]int32, len(vals))
		for i, v := range vals {
			if s := types.TimestampInfSign(int64(v)); s != 0 {
				out[i] = int32(s) * types.DateInfinity
				continue
			}
			out[i] = int32(floorDiv(int64(v), q))
		}
		return fixedArray(res, out, valid, nulls), true
	case *arrow.TimestampType:
		if types.UnitsPerSecond(t.Unit) != per {
			return nil, false
		}
		out := make([]int64, len(vals))
		for i, v := range vals {
			if types.TimestampInfSign(int64(v)) != 0 {
				out[i] = int64(v)
				continue
			}
			out[i] = floorDiv(int64(v), q) * q
		}
		return fixedArray(res, out, valid, nulls), true
	}
	return nil, false
}

// dateDiffKernel is date_diff(part, a, b): the number of part boundaries crossed
// going from a to b (DuckDB's definition: month difference ignores the day; decades,
// centuries and millennia are the year truncated toward zero). An infinite argument
// gives NULL; a difference that does not fit in a BIGINT is an error.
func dateDiffKernel(args []arrow.Array, n int) (arrow.Array, error) {
	return partwiseKernel("date_diff", args, n, partDiff)
}

// partwiseKernel computes fn(part, a, b) row by row with f, over finite rows: an
// infinite argument gives NULL.
func partwiseKernel(fn string, args []arrow.Array, n int, f func(part string, ra, rb temporalReader, i int) (int64, error)) (arrow.Array, error) {
	parts := str(args[0])
	ra, ok1 := newTemporalReader(args[1])
	rb, ok2 := newTemporalReader(args[2])
	if !ok1 || !ok2 {
		return nil, errs.New(errs.Analysis, "no function matches %s(VARCHAR, %s, %s)", fn, types.Name(args[1].DataType()), types.Name(args[2].DataType()))
	}
	pc := partCache{fn: fn}
	z := newNullRows(n, args...)
	out := make([]int64, n)
	for i := 0; i < n; i++ {
		if !z.ok(i) {
			continue
		}
		part, err := pc.get(parts.Value(i))
		if err != nil {
			return nil, err
		}
		if ra.inf(i) != 0 || rb.inf(i) != 0 {
			z.set(i)
			continue
		}
		v, err := f(part, ra, rb, i)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return fixedArray(types.Int64, out, z.valid, z.nulls), nil
}

// partDiff is date_diff of one finite row.
func partDiff(part string, ra, rb temporalReader, i int) (int64, error) {
	da, na := ra.at(i)
	db, nb := rb.at(i)
	ya, ma, _ := civilFromDays(da)
	yb, mb, _ := civilFromDays(db)
	switch part {
	case "year", "isoyear":
		return yb - ya, nil
	case "quarter":
		return (yb*4 + (mb-1)/3) - (ya*4 + (ma-1)/3), nil
	case "month":
		return (yb*12 + mb) - (ya*12 + ma), nil
	case "decade":
		return yb/10 - ya/10, nil
	case "century":
		return yb/100 - ya/100, nil
	case "millennium":
		return yb/1000 - ya/1000, nil
	case "week", "yearweek":
		return (db - da) / 7, nil
	case "day", "dow", "isodow", "doy":
		return db - da, nil
	}
	// Time parts: difference of the values truncated to the unit, counted in
	// microseconds (nanoseconds since 1970 overflow before year 1678).
	var q int64
	switch part {
	case "hour":
		q = microsPerHour
	case "minute":
		q = microsPerMinute
	case "second", "epoch":
		q = microsPerSecond
	case "millisecond":
		q = 1000
	case "microsecond":
		q = 1
	default:
		return 0, badPart("date_diff", part)
	}
	ta, tb := da*microsPerDay+na/1e3, db*microsPerDay+nb/1e3
	d, over := subChecked(floorDiv(tb, q), floorDiv(ta, q))
	if over {
		return 0, errs.New(errs.Analysis, "out of range: date_diff in %ss does not fit in BIGINT", part)
	}
	return d, nil
}

// subChecked subtracts and reports overflow.
func subChecked(a, b int64) (int64, bool) {
	r := a - b
	return r, (a^b)&(a^r) < 0
}

// makeDate is make_date(year, month, day) → DATE, for any date DuckDB's DATE holds.
func makeDate(args []arrow.Array, n int) (arrow.Array, error) {
	y, m, d := i64(args[0]).Int64Values(), i64(args[1]).Int64Values(), i64(args[2]).Int64Values()
	valid, nulls := andValidity(n, args...)
	out := make([]int32, n)
	for i := 0; i < n; i++ {
		if !isValid(valid, 0, i) {
			continue
		}
		// The year bound keeps daysFromCivil's arithmetic far from overflow; the
		// day bound is the DATE range, short of the infinities.
		ok := m[i] >= 1 && m[i] <= 12 && d[i] >= 1 && y[i] > -6000000 && y[i] < 6000000 && d[i] <= daysInMonth(y[i], m[i])
		if ok {
			days := daysFromCivil(y[i], m[i], d[i])
			if ok = days > types.DateNegInfinity && days < types.DateInfinity; ok {
				out[i] = int32(days)
				continue
			}
		}
		return nil, errs.New(errs.Analysis, "out of range: date %d-%d-%d does not fit in DATE", y[i], m[i], d[i])
	}
	return fixedArray(types.Date, out, valid, nulls), nil
}

var monthNames = [...]string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
var dayNames = [...]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}

// julianEpoch is the Julian day number of 1970-01-01.
const julianEpoch = 2440588

// datePartJulian is date_part('julian', x) → DOUBLE: the Julian day with the
// fraction of the day.
func datePartJulian(args []arrow.Array, n int) (arrow.Array, error) {
	r, _ := newTemporalReader(args[len(args)-1])
	z := newNullRows(n, args...)
	out := make([]float64, n)
	for i := 0; i < n; i++ {
		if !z.ok(i) {
			continue
		}
		if r.inf(i) != 0 {
			z.set(i)
			continue
		}
		days, nanos := r.at(i)
		out[i] = float64(days+julianEpoch) + float64(nanos)/86400e9
	}
	return fixedArray(types.Float64, out, z.valid, z.nulls), nil
}
