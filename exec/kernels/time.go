package kernels

import (
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// TIME: a time of day in microseconds since midnight, from 00:00:00 to 24:00:00 as
// in DuckDB. Its casts, parts, arithmetic and make_time live here; comparisons,
// sorting, grouping and min/max treat it as the integer it is.

const dayMicros = 86400 * 1000000

func init() {
	registry["make_time"] = bindSig([]argClass{clsInt, clsInt, clsDouble}, types.Time, makeTime)
	for _, name := range []string{"date_part", "datepart", "extract"} {
		registry[name] = withTimePart(registry[name], func(c *call) (string, bool) { return c.constString(0) })
	}
	for _, part := range []string{"hour", "minute", "second", "millisecond", "microsecond", "epoch"} {
		part := part
		registry[part] = withTimePart(registry[part], func(*call) (string, bool) { return part, true })
	}
}

// parseTime reads DuckDB's text form of a time: an optional date and a space or T,
// then H[H]:[M[M]][:[S[S]][.fraction]]; the fraction is truncated to microseconds
// and whatever follows the clock (a zone, other text) is ignored, as DuckDB does.
func parseTime(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if _, rest, ok := parseDatePrefix(s); ok && rest != "" && (rest[0] == ' ' || rest[0] == 'T') {
		s = strings.TrimLeft(rest[1:], " ")
	}
	h, s, ok := readDigits(s, 1, 2)
	if !ok || !strings.HasPrefix(s, ":") {
		return 0, false
	}
	// A field left empty at the very end ("11:", "11:11:") is zero, as in DuckDB.
	m, s, ok := readDigits(s[1:], 1, 2)
	if !ok && s != "" {
		return 0, false
	}
	var sec, us int64
	if strings.HasPrefix(s, ":") {
		if sec, s, ok = readDigits(s[1:], 1, 2); !ok && s != "" {
			return 0, false
		}
		if strings.HasPrefix(s, ".") {
			s = s[1:]
			digits := 0
			for len(s) > 0 && s[0] >= '0' && s[0] <= '9' {
				if digits < 6 {
					us = us*10 + int64(s[0]-'0')
					digits++
				}
				s = s[1:]
			}
			for ; digits < 6; digits++ {
				us *= 10
			}
		}
	}
	if len(s) > 0 && s[0] >= '0' && s[0] <= '9' {
		return 0, false
	}
	v := ((h*60+m)*60+sec)*1000000 + us
	if h > 24 || m > 59 || sec > 59 || v > dayMicros {
		return 0, false
	}
	return v, true
}

// timeMicros reads a TIME array of any unit as microseconds since midnight.
func timeMicros(arr arrow.Array) []int64 {
	out := make([]int64, arr.Len())
	switch a := arr.(type) {
	case *array.Time64:
		div := int64(1)
		if a.DataType().(*arrow.Time64Type).Unit == arrow.Nanosecond {
			div = 1000
		}
		for i, v := range a.Time64Values() {
			out[i] = int64(v) / div
		}
	case *array.Time32:
		mul := int64(1000000)
		if a.DataType().(*arrow.Time32Type).Unit == arrow.Millisecond {
			mul = 1000
		}
		for i, v := range a.Time32Values() {
			out[i] = int64(v) * mul
		}
	}
	return out
}

// canCastTime reports the casts to TIME DuckDB has: from VARCHAR, TIME and a
// TIMESTAMP without time zone (its time of day).
func canCastTime(from arrow.DataType) bool {
	if ts, ok := from.(*arrow.TimestampType); ok {
		return ts.TimeZone == ""
	}
	return types.IsTime(from) || types.IsString(from)
}

// castToTime is a cast to TIME (to is TIME in some unit; Lore makes microseconds).
func castToTime(arr arrow.Array, to arrow.DataType) (arrow.Array, error) {
	n := arr.Len()
	valid, nulls := copyValidity(arr)
	vm, voff := validityOf(arr)
	out := make([]int64, n)
	from := arr.DataType()
	switch {
	case types.IsString(from):
		s := plainStrings(arr)
		for i := 0; i < n; i++ {
			if !isValid(vm, voff, i) {
				continue
			}
			v, ok := parseTime(s.Value(i))
			if !ok {
				return nil, conversionErr("string '"+s.Value(i)+"'", types.Time)
			}
			out[i] = v
		}
	case types.IsTime(from):
		out = timeMicros(arr)
	case from.ID() == arrow.TIMESTAMP && from.(*arrow.TimestampType).TimeZone == "":
		ts := arr.(*array.Timestamp)
		per := types.UnitsPerSecond(from.(*arrow.TimestampType).Unit)
		for i := 0; i < n; i++ {
			if !isValid(vm, voff, i) {
				continue
			}
			v := int64(ts.Value(i))
			if types.TimestampInfSign(v) != 0 {
				return nil, conversionErr("an infinite timestamp", types.Time)
			}
			if tod := floorMod(v, 86400*per); per >= 1000000 {
				out[i] = tod / (per / 1000000)
			} else {
				out[i] = tod * (1000000 / per)
			}
		}
	default:
		return nil, errs.New(errs.Analysis, "cannot cast %s to %s", types.Name(from), types.Name(to))
	}
	res := fixedArray(types.Time, toTime64(out), valid, nulls)
	if arrow.TypeEqual(to, types.Time) {
		return res, nil
	}
	return castTimeUnit(res, to), nil
}

func toTime64(v []int64) []arrow.Time64 {
	out := make([]arrow.Time64, len(v))
	for i, x := range v {
		out[i] = arrow.Time64(x)
	}
	return out
}

// castTimeUnit converts a TIME array of microseconds to another TIME unit.
func castTimeUnit(a arrow.Array, to arrow.DataType) arrow.Array {
	us := timeMicros(a)
	valid, nulls := copyValidity(a)
	switch t := to.(type) {
	case *arrow.Time64Type:
		if t.Unit == arrow.Nanosecond {
			for i := range us {
				us[i] *= 1000
			}
		}
		return fixedArray(to, toTime64(us), valid, nulls)
	case *arrow.Time32Type:
		div := int64(1000000)
		if t.Unit == arrow.Millisecond {
			div = 1000
		}
		out := make([]arrow.Time32, len(us))
		for i, v := range us {
			out[i] = arrow.Time32(v / div)
		}
		return fixedArray(to, out, valid, nulls)
	}
	panic("BUG: castTimeUnit to " + to.String())
}

// makeTime is make_time(hour, minute, seconds): seconds may have a fraction (rounded
// to microseconds) and be 60; the time must not pass 24:00:00.
func makeTime(in []arrow.Array, n int) (arrow.Array, error) {
	h, m, s := i64(in[0]), i64(in[1]), in[2].(*array.Float64)
	valid, nulls := andValidity(n, in...)
	out := make([]arrow.Time64, n)
	for i := 0; i < n; i++ {
		if !isValid(valid, 0, i) {
			continue
		}
		hh, mm, ss := h.Value(i), m.Value(i), s.Value(i)
		us := math.Round(ss * 1e6)
		if hh < 0 || hh > 24 || mm < 0 || mm > 59 || !(us >= 0 && us <= 60e6) {
			return nil, errs.New(errs.Analysis, "make_time: %d:%d:%g is not a time of day", hh, mm, ss)
		}
		v := (hh*60+mm)*60*1000000 + int64(us)
		if v > dayMicros {
			return nil, errs.New(errs.Analysis, "make_time: %d:%d:%g is not a time of day", hh, mm, ss)
		}
		out[i] = arrow.Time64(v)
	}
	return fixedArray(types.Time, out, valid, nulls), nil
}

// withTimePart binds date_part and its shorthands for a TIME argument (the last
// one) and leaves every other call to next; part names the part when it is known.
func withTimePart(next binder, part func(*call) (string, bool)) binder {
	return func(c *call) (*Function, error) {
		if len(c.args) == 0 || !types.IsTime(c.args[len(c.args)-1]) || next == nil {
			if next == nil {
				return nil, c.mismatch()
			}
			return next(c)
		}
		args := append([]arrow.DataType(nil), c.args...)
		args[len(args)-1] = types.Time
		if len(args) == 2 && !stringish(args[0]) {
			return nil, c.mismatch()
		}
		if len(args) == 2 {
			args[0] = types.String
		}
		p, known := part(c)
		if known {
			norm, ok := normPart(p)
			if !ok || !timePartOK(norm) {
				return nil, errs.New(errs.Analysis, "%s: a TIME has no part %q", c.name, p)
			}
			if norm == "epoch" {
				return newFunction(c, args, types.Float64, func(in []arrow.Array, n int) (arrow.Array, error) {
					x := in[len(in)-1]
					us := timeMicros(x)
					out := make([]float64, n)
					for i, v := range us {
						out[i] = float64(v) / 1e6
					}
					valid, nulls := andValidity(n, in...)
					return fixedArray(types.Float64, out, valid, nulls), nil
				}, true), nil
			}
		}
		return newFunction(c, args, types.Int64, func(in []arrow.Array, n int) (arrow.Array, error) {
			x := in[len(in)-1]
			us := timeMicros(x)
			out := make([]int64, n)
			valid, nulls := andValidity(n, in...)
			var names *array.String
			if len(in) == 2 {
				names = str(in[0])
			}
			for i := 0; i < n; i++ {
				if !isValid(valid, 0, i) {
					continue
				}
				name := p
				if names != nil {
					name = names.Value(i)
				}
				norm, ok := normPart(name)
				if !ok || !timePartOK(norm) || norm == "epoch" && !known {
					return nil, errs.New(errs.Analysis, "%s: a TIME has no part %q", c.name, name)
				}
				out[i] = timePart(norm, us[i])
			}
			return fixedArray(types.Int64, out, valid, nulls), nil
		}, true), nil
	}
}

func timePartOK(norm string) bool {
	switch norm {
	case "hour", "minute", "second", "millisecond", "microsecond", "epoch":
		return true
	}
	return false
}

// timePart is an integer part of a time of day us microseconds after midnight.
func timePart(norm string, us int64) int64 {
	switch norm {
	case "hour":
		return us / 3600000000
	case "minute":
		return us / 60000000 % 60
	case "second":
		return us / 1000000 % 60
	case "millisecond":
		return us % 60000000 / 1000
	case "microsecond":
		return us % 60000000
	}
	return us / 1000000
}

// bindTimeArith binds TIME ± INTERVAL and INTERVAL + TIME (a TIME, the interval's
// time part added around the clock; its months and days do not move a time of
// day) and DATE + TIME in either order (a TIMESTAMP); nil for other types.
func bindTimeArith(c *call, op arithOp, a, b arrow.DataType) *Function {
	at, bt := types.IsTime(a), types.IsTime(b)
	if !at && !bt {
		return nil
	}
	switch {
	case at && isInterval(b) && (op == opAdd || op == opSub):
		sign := int64(1)
		if op == opSub {
			sign = -1
		}
		return newFunction(c, []arrow.DataType{types.Time, types.Interval}, types.Time, func(in []arrow.Array, n int) (arrow.Array, error) {
			return timePlusInterval(in[0], in[1], sign, n), nil
		}, true)
	case isInterval(a) && bt && op == opAdd:
		return newFunction(c, []arrow.DataType{types.Interval, types.Time}, types.Time, func(in []arrow.Array, n int) (arrow.Array, error) {
			return timePlusInterval(in[1], in[0], 1, n), nil
		}, true)
	case at && b.ID() == arrow.DATE32 && op == opAdd:
		return newFunction(c, []arrow.DataType{types.Time, types.Date}, types.Timestamp, func(in []arrow.Array, n int) (arrow.Array, error) {
			return dateAtTime(in[1], in[0], n), nil
		}, true)
	case a.ID() == arrow.DATE32 && bt && op == opAdd:
		return newFunction(c, []arrow.DataType{types.Date, types.Time}, types.Timestamp, func(in []arrow.Array, n int) (arrow.Array, error) {
			return dateAtTime(in[0], in[1], n), nil
		}, true)
	}
	return nil
}

func timePlusInterval(t, iv arrow.Array, sign int64, n int) arrow.Array {
	us := timeMicros(t)
	ivs := iv.(*array.MonthDayNanoInterval)
	out := make([]arrow.Time64, n)
	for i := range out {
		d := ivs.Value(i).Nanoseconds / 1000 % dayMicros
		out[i] = arrow.Time64(floorMod(us[i]+sign*d, dayMicros))
	}
	valid, nulls := andValidity(n, t, iv)
	return fixedArray(types.Time, out, valid, nulls)
}

// dateAtTime is the TIMESTAMP of date d at time t; an infinite date stays infinite.
func dateAtTime(d, t arrow.Array, n int) arrow.Array {
	days := d.(*array.Date32).Date32Values()
	us := timeMicros(t)
	out := make([]arrow.Timestamp, n)
	for i := range out {
		switch types.DateInfSign(int64(days[i])) {
		case 1:
			out[i] = types.TimestampInfinity
		case -1:
			out[i] = types.TimestampNegInfinity
		default:
			out[i] = arrow.Timestamp(int64(days[i])*dayMicros + us[i])
		}
	}
	valid, nulls := andValidity(n, d, t)
	return fixedArray(types.Timestamp, out, valid, nulls)
}
