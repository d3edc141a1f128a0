package kernels

import (
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// parseInterval parses an interval as DuckDB reads one: numbers each followed by a
// unit ("1 year 2 months", "10minutes", "-1 day", "1.5 seconds"), possibly ending in
// a time ("3 days 04:05:06.5", "00:30:00", "1:" for an hour), or one lone number of
// seconds ("42", " 42.5 "), optionally after "@" or ending in "ago". A unit's fraction
// goes to that unit's own field, rounded to a whole one (0.6 months is a month), but
// for weeks, months and quarters, whose whole days and then time (or days) take it.
// A microsecond has no fraction.
func parseInterval(s string) (arrow.MonthDayNanoInterval, bool) {
	var p intervalParse
	pos, n := 0, len(s)
	if n == 0 {
		return arrow.MonthDayNanoInterval{}, false
	}
	if s[0] == '@' {
		pos++
	}
	found := false
	for {
		for pos < n && isIntervalSpace(s[pos]) {
			pos++
		}
		if pos >= n {
			break
		}
		neg := false
		switch c := s[pos]; {
		case c >= '0' && c <= '9':
		case c == '-':
			neg = true
			pos++
		case c == 'a' || c == 'A':
			// "ago" ends the interval and turns it around.
			if !strings.EqualFold(strings.TrimRight(s[pos:], " \t\n"), "ago") ||
				p.months == math.MinInt32 || p.days == math.MinInt32 {
				return arrow.MonthDayNanoInterval{}, false
			}
			p.months, p.days, p.micros = -p.months, -p.days, -p.micros
			return p.result(found)
		default:
			return arrow.MonthDayNanoInterval{}, false
		}
		start := pos
		for pos < n && s[pos] >= '0' && s[pos] <= '9' {
			pos++
		}
		if pos < n && s[pos] == ':' {
			// A time ends the interval; what follows it is not read.
			us, ok := intervalClock(s[start:])
			if !ok || !p.add(&p.micros, us, 1, 0) {
				return arrow.MonthDayNanoInterval{}, false
			}
			if neg {
				p.micros = -p.micros
			}
			return p.result(true)
		}
		if pos == start {
			return arrow.MonthDayNanoInterval{}, false
		}
		number, err := strconv.ParseInt(s[start:pos], 10, 64)
		if err != nil {
			return arrow.MonthDayNanoInterval{}, false
		}
		fraction := 0.0
		if pos < n && s[pos] == '.' {
			pos++
			fs := pos
			for pos < n && s[pos] >= '0' && s[pos] <= '9' {
				pos++
			}
			if pos > fs {
				fraction, _ = strconv.ParseFloat("0."+s[fs:pos], 64)
			}
		}
		if neg {
			number, fraction = -number, -fraction
		}
		for pos < n && isIntervalSpace(s[pos]) {
			pos++
		}
		us := pos
		for pos < n && (s[pos] >= 'a' && s[pos] <= 'z' || s[pos] >= 'A' && s[pos] <= 'Z') {
			pos++
		}
		unit := strings.ToLower(s[us:pos])
		if unit == "" {
			// A lone number is seconds; after a unit it is a unit missing.
			if found || strings.TrimLeft(s[pos:], " \t\n") != "" || !p.add(&p.micros, number, 1e6, fraction) {
				return arrow.MonthDayNanoInterval{}, false
			}
			return p.result(true)
		}
		sc, ok := intervalUnit(unit)
		if !ok || !p.addUnit(sc, number, fraction) {
			return arrow.MonthDayNanoInterval{}, false
		}
		found = true
	}
	return p.result(found)
}

// intervalParse accumulates an interval's fields, each within its own range.
type intervalParse struct {
	months, days int64 // within int32
	micros       int64
}

func (p *intervalParse) result(found bool) (arrow.MonthDayNanoInterval, bool) {
	if !found || p.micros > math.MaxInt64/1000 || p.micros < math.MinInt64/1000 {
		return arrow.MonthDayNanoInterval{}, false
	}
	return arrow.MonthDayNanoInterval{Months: int32(p.months), Days: int32(p.days), Nanoseconds: p.micros * 1000}, true
}

// add adds number × mul, and then fraction × mul rounded to a whole, to the field f,
// reporting overflow of the field's range.
func (p *intervalParse) add(f *int64, number, mul int64, fraction float64) bool {
	lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
	if f == &p.micros {
		lo, hi = math.MinInt64, math.MaxInt64
	}
	if mulOverflows(number, mul) {
		return false
	}
	v := number * mul
	if v < lo || v > hi {
		return false
	}
	var over bool
	if *f, over = addChecked(*f, v); over || *f < lo || *f > hi {
		return false
	}
	if math.Abs(fraction) > 1e-10 {
		r := math.Round(fraction * float64(mul))
		if r < float64(lo) || r > float64(hi) {
			return false
		}
		if *f, over = addChecked(*f, int64(r)); over || *f < lo || *f > hi {
			return false
		}
	}
	return true
}

// addUnit adds number and fraction of one unit.
func (p *intervalParse) addUnit(sc unitScale, number int64, fraction float64) bool {
	const microsPerDay = 86400e6
	switch {
	case sc.kind == 'M' && sc.n == 3:
		// A quarter's fraction is whole months, then days.
		whole := math.Trunc(fraction * 3)
		return p.add(&p.months, number, 3, 0) && p.add(&p.months, int64(whole), 1, 0) &&
			p.add(&p.days, 0, 30, fraction*3-whole)
	case sc.kind == 'M' && sc.n == 1:
		whole := math.Trunc(fraction * 30)
		return p.add(&p.months, number, 1, 0) && p.add(&p.days, int64(whole), 1, 0) &&
			p.add(&p.micros, 0, microsPerDay, fraction*30-whole)
	case sc.kind == 'M':
		return p.add(&p.months, number, int64(sc.n), fraction)
	case sc.kind == 'D' && sc.n == 7:
		whole := math.Trunc(fraction * 7)
		return p.add(&p.days, number, 7, 0) && p.add(&p.days, int64(whole), 1, 0) &&
			p.add(&p.micros, 0, microsPerDay, fraction*7-whole)
	case sc.kind == 'D':
		return p.add(&p.days, number, 1, 0) && p.add(&p.micros, 0, microsPerDay, fraction)
	case sc.n == 1e3:
		return p.add(&p.micros, number, 1, 0)
	}
	return p.add(&p.micros, number, int64(sc.n/1e3), fraction)
}

func isIntervalSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' }

// intervalClock reads the time that ends an interval, "H…H:MM[:SS[.ffffff]]" with up
// to nine digits of hours, into microseconds: a missing minute or second after its
// colon is zero ("1:" is an hour), and what follows the time is not read.
func intervalClock(s string) (int64, bool) {
	pos, n := 0, len(s)
	var h int64
	for digits := 0; pos < n && s[pos] >= '0' && s[pos] <= '9'; pos++ {
		if digits++; digits > 9 {
			return 0, false
		}
		h = h*10 + int64(s[pos]-'0')
	}
	if pos == 0 || pos >= n || s[pos] != ':' {
		return 0, false
	}
	pos++
	two := func() (int64, bool) {
		if pos >= n || s[pos] < '0' || s[pos] > '9' {
			return 0, false
		}
		v := int64(s[pos] - '0')
		pos++
		if pos < n && s[pos] >= '0' && s[pos] <= '9' {
			v = v*10 + int64(s[pos]-'0')
			pos++
		}
		return v, v < 60
	}
	var m, sec, us int64
	if pos < n {
		var ok bool
		if m, ok = two(); !ok {
			return 0, false
		}
		if pos < n {
			if s[pos] != ':' {
				return 0, false
			}
			pos++
			if pos < n {
				if sec, ok = two(); !ok {
					return 0, false
				}
			}
		}
	}
	if pos < n && s[pos] == '.' {
		pos++
		for mult := int64(100000); pos < n && s[pos] >= '0' && s[pos] <= '9'; pos, mult = pos+1, mult/10 {
			us += int64(s[pos]-'0') * mult
		}
	}
	return ((h*60+m)*60+sec)*1e6 + us, true
}
