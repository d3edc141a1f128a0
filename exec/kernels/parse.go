package kernels

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/loredb/lore/types"
)

// Parsers of the text forms of each type. They trim surrounding spaces and report
// failure with ok=false; the caller words the error with the value and the type.

// parseInt parses an integer; a number with a fraction or exponent is rounded half
// away from zero, as DuckDB's string-to-integer cast does.
func parseInt(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, true
	}
	if u, ok := radixInteger(s); ok {
		return int64(u), u <= math.MaxInt64
	}
	if t, ok := withoutUnderscores(s); ok {
		return parseInt(t)
	}
	if !strings.ContainsAny(s, ".eE") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	f = math.Round(f)
	if f < -9.223372036854775808e18 || f >= 9.223372036854775808e18 {
		return 0, false
	}
	return int64(f), true
}

// parseUint parses an unsigned integer: a leading + is allowed, and a - before
// zeros only (-0 is 0), as in DuckDB.
func parseUint(s string) (uint64, bool) {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseUint(s, 10, 64); err == nil {
		return v, true
	}
	if len(s) > 1 && (s[0] == '+' || s[0] == '-') && s[1] >= '0' && s[1] <= '9' {
		if s[0] == '-' {
			return 0, strings.Trim(s[1:], "0") == ""
		}
		return parseUint(s[1:])
	}
	if u, ok := radixInteger(s); ok {
		return u, true
	}
	if t, ok := withoutUnderscores(s); ok {
		return parseUint(t)
	}
	if !strings.ContainsAny(s, ".eE") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) {
		return 0, false
	}
	f = math.Round(f)
	if f < 0 || f >= 1.8446744073709551616e19 {
		return 0, false
	}
	return uint64(f), true
}

// radixInteger reads DuckDB's unsigned hexadecimal (0x1F) and binary (0b101)
// integer strings.
func radixInteger(s string) (uint64, bool) {
	if len(s) < 3 || s[0] != '0' {
		return 0, false
	}
	base := 0
	switch s[1] {
	case 'x', 'X':
		base = 16
	case 'b', 'B':
		base = 2
	default:
		return 0, false
	}
	for i := 2; i < len(s); i++ {
		if _, ok := types.HexDigit(s[i]); !ok {
			return 0, false // no sign, no underscores after the prefix
		}
	}
	u, err := strconv.ParseUint(s[2:], base, 64)
	return u, err == nil
}

// withoutUnderscores is s without the underscores that DuckDB allows between two
// digits of a number (1_000); ok is false when s has none or one is misplaced.
func withoutUnderscores(s string) (string, bool) {
	if !strings.Contains(s, "_") {
		return "", false
	}
	digit := func(i int) bool { return i >= 0 && i < len(s) && s[i] >= '0' && s[i] <= '9' }
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '_' {
			if !digit(i-1) || !digit(i+1) {
				return "", false
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String(), true
}

func parseFloat(s string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		// Out-of-range literals are an error, not ±Inf.
		return 0, false
	}
	return f, true
}

func parseBool(s string) (bool, bool) {
	// DuckDB's spellings, in any case; no spaces around them, no on/off.
	switch strings.ToLower(s) {
	case "true", "t", "1", "yes", "y":
		return true, true
	case "false", "f", "0", "no", "n":
		return false, true
	}
	return false, false
}

// parseDecimal parses a number into a decimal of precision p and scale sc,
// rounding half away from zero at the scale.
func parseDecimal(s string, p, sc int32) (decimal128.Num, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return decimal128.Num{}, false
	}
	// Fast path: plain [-+]digits[.digits] with at most 18 significant digits.
	if n, ok := parseSmallDecimal(s, sc); ok {
		return n, decFits(n, p)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return decimal128.Num{}, false
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(sc)), nil)))
	num, den := r.Num(), r.Denom()
	q, rem := new(big.Int).QuoRem(num, den, new(big.Int))
	if rem.Sign() != 0 {
		rem.Abs(rem).Lsh(rem, 1)
		if rem.Cmp(den) >= 0 {
			q.Add(q, big.NewInt(int64(num.Sign())))
		}
	}
	if q.BitLen() > 127 {
		return decimal128.Num{}, false
	}
	n := decimal128.FromBigInt(q)
	return n, decFits(n, p)
}

func parseSmallDecimal(s string, sc int32) (decimal128.Num, bool) {
	neg := false
	switch s[0] {
	case '-':
		neg, s = true, s[1:]
	case '+':
		s = s[1:]
	}
	intPart, frac, hasDot := strings.Cut(s, ".")
	if intPart == "" && (!hasDot || frac == "") {
		return decimal128.Num{}, false
	}
	if len(intPart)+int(sc) > 18 || sc > 18 {
		return decimal128.Num{}, false
	}
	var v int64
	for i := 0; i < len(intPart); i++ {
		c := intPart[i]
		if c < '0' || c > '9' {
			return decimal128.Num{}, false
		}
		v = v*10 + int64(c-'0')
	}
	roundUp := false
	for i := 0; i < len(frac); i++ {
		c := frac[i]
		if c < '0' || c > '9' {
			return decimal128.Num{}, false
		}
		if int32(i) < sc {
			v = v*10 + int64(c-'0')
		} else if int32(i) == sc {
			roundUp = c >= '5'
		}
	}
	for i := int32(len(frac)); i < sc; i++ {
		v *= 10
	}
	if roundUp {
		v++
	}
	if neg {
		v = -v
	}
	return decimal128.FromI64(v), true
}

// parseDate parses YYYY-MM-DD (a trailing midnight time is accepted) into days.
func parseDate(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if d, ok := parseSpecialDate(s); ok {
		return d, true
	}
	days, rest, ok := parseDatePrefix(s)
	if !ok {
		return 0, false
	}
	if days <= types.DateNegInfinity || days >= types.DateInfinity {
		return 0, false // beyond DATE's range, short of the infinities
	}
	if rest != "" {
		// A time part is allowed only when it is midnight.
		us, ok := parseTimeSuffix(rest)
		if !ok || us != 0 {
			return 0, false
		}
	}
	return days, true
}

// parseDatePrefix reads [-]Y+-M{1,2}-D{1,2} (or with / or \ between the parts)
// and returns the rest of s.
func parseDatePrefix(s string) (days int64, rest string, ok bool) {
	neg := false
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	y, s, ok := readDigits(s, 1, 7)
	// The parts are separated by - (or, as DuckDB also reads, / or \), the same
	// twice.
	if !ok || s == "" || (s[0] != '-' && s[0] != '/' && s[0] != '\\') {
		return 0, "", false
	}
	sep := s[:1]
	m, s, ok := readDigits(s[1:], 1, 2)
	if !ok || !strings.HasPrefix(s, sep) {
		return 0, "", false
	}
	d, s, ok := readDigits(s[1:], 1, 2)
	if !ok {
		return 0, "", false
	}
	if neg {
		y = -y
	}
	// "0044-03-15 (BC)" is the year 44 BC, astronomical year -43, as DuckDB writes it.
	if len(s) >= 5 && strings.EqualFold(s[:5], " (BC)") {
		rest := s[5:]
		if neg || y == 0 {
			return 0, "", false
		}
		y, s = 1-y, rest
	}
	if m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m) {
		return 0, "", false
	}
	return daysFromCivil(y, m, d), s, true
}

// parseSpecialDate reads the named dates: infinity, -infinity and epoch.
func parseSpecialDate(s string) (days int64, ok bool) {
	switch strings.ToLower(s) {
	case "infinity":
		return types.DateInfinity, true
	case "-infinity":
		return types.DateNegInfinity, true
	case "epoch":
		return 0, true
	}
	return 0, false
}

func readDigits(s string, minN, maxN int) (int64, string, bool) {
	i := 0
	var v int64
	for i < len(s) && i < maxN && s[i] >= '0' && s[i] <= '9' {
		v = v*10 + int64(s[i]-'0')
		i++
	}
	if i < minN {
		return 0, s, false
	}
	return v, s[i:], true
}

// parseTimeSuffix parses "[ T]HH:MM[:SS[.fffffffff]][zone]" into nanoseconds since
// midnight, already shifted to UTC by the zone offset (which may make it negative or
// exceed a day).
func parseTimeSuffix(s string) (int64, bool) {
	if s == "" {
		return 0, true
	}
	if s[0] != ' ' && s[0] != 'T' && s[0] != 't' {
		return 0, false
	}
	s = strings.TrimLeft(s[1:], " ")
	ns, rest, ok := parseClock(s)
	if !ok {
		return 0, false
	}
	off, ok := parseZone(rest)
	if !ok {
		return 0, false
	}
	return ns - off*1e9, true
}

// parseClock reads HH:MM[:SS[.f+]] and returns nanoseconds and the rest.
func parseClock(s string) (int64, string, bool) {
	h, s, ok := readDigits(s, 1, 2)
	if !ok || !strings.HasPrefix(s, ":") {
		return 0, "", false
	}
	m, s, ok := readDigits(s[1:], 2, 2)
	if !ok {
		return 0, "", false
	}
	var sec, frac int64
	if strings.HasPrefix(s, ":") {
		sec, s, ok = readDigits(s[1:], 2, 2)
		if !ok {
			return 0, "", false
		}
		if strings.HasPrefix(s, ".") {
			s = s[1:]
			digits := 0
			for len(s) > 0 && s[0] >= '0' && s[0] <= '9' {
				if digits < 9 {
					frac = frac*10 + int64(s[0]-'0')
					digits++
				}
				s = s[1:]
			}
			if digits == 0 {
				return 0, "", false
			}
			for ; digits < 9; digits++ {
				frac *= 10
			}
		}
	}
	if h > 24 || m > 59 || sec > 60 || (h == 24 && (m != 0 || sec != 0 || frac != 0)) {
		return 0, "", false
	}
	return ((h*60+m)*60+sec)*1e9 + frac, s, true
}

// parseZone reads an optional zone: Z, UTC, or ±HH[:MM] / ±HHMM; returns seconds east.
func parseZone(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	switch strings.ToUpper(s) {
	case "":
		return 0, true
	case "Z", "UTC", "GMT", "+00", "-00", "+00:00":
		return 0, true
	}
	sign := int64(1)
	switch s[0] {
	case '+':
	case '-':
		sign = -1
	default:
		return 0, false
	}
	h, rest, ok := readDigits(s[1:], 2, 2)
	if !ok {
		return 0, false
	}
	var m int64
	if strings.HasPrefix(rest, ":") {
		rest = rest[1:]
	}
	if rest != "" {
		m, rest, ok = readDigits(rest, 2, 2)
		if !ok || rest != "" {
			return 0, false
		}
	}
	if h > 15 || m > 59 {
		return 0, false
	}
	return sign * (h*3600 + m*60), true
}

// parseTimestamp parses a timestamp into ticks of unit since the epoch (UTC).
func parseTimestamp(s string, unit arrow.TimeUnit) (int64, bool) {
	s = strings.TrimSpace(s)
	if d, ok := parseSpecialDate(s); ok {
		switch d {
		case types.DateInfinity:
			return types.TimestampInfinity, true
		case types.DateNegInfinity:
			return types.TimestampNegInfinity, true
		}
		return 0, true
	}
	days, rest, ok := parseDatePrefix(s)
	if !ok {
		return 0, false
	}
	ns, ok := parseTimeSuffix(rest)
	if !ok {
		return 0, false
	}
	if unit == arrow.Nanosecond {
		if mulOverflows(days, 86400e9) {
			return 0, false
		}
		v, over := addChecked(days*86400e9, ns)
		return v, !over && types.TimestampInfSign(v) == 0
	}
	// The other units span DuckDB's range of microseconds, from 290309-12-22 (BC)
	// to 294247-01-10 04:00:54.775806, both included.
	if mulOverflows(days, microsPerDay) {
		return 0, false
	}
	us, over := addChecked(days*microsPerDay, floorDiv(ns, 1000))
	if over || us < minTimestampMicros || us >= types.TimestampInfinity {
		return 0, false
	}
	// A coarser unit rounds to its nearest tick, half away from zero, as DuckDB.
	return roundDiv(us, 1e6/types.UnitsPerSecond(unit)), true
}

// minTimestampMicros is DuckDB's first TIMESTAMP, 290309-12-22 (BC) 00:00:00.
const minTimestampMicros = -9223372022400000000

type unitScale struct {
	kind byte // 'M' months, 'D' days, 'N' nanoseconds
	n    float64
}

// intervalUnit maps an interval unit name to what one of it adds: DuckDB's names of
// the date parts an interval has (singular, plural or abbreviated).
func intervalUnit(u string) (unitScale, bool) {
	switch u {
	case "millennium", "mil", "millenniums", "millennia", "mils", "millenium":
		return unitScale{'M', 12000}, true
	case "century", "cent", "centuries", "c":
		return unitScale{'M', 1200}, true
	case "decade", "dec", "decades", "decs":
		return unitScale{'M', 120}, true
	case "year", "yr", "y", "years", "yrs":
		return unitScale{'M', 12}, true
	case "quarter", "quarters":
		return unitScale{'M', 3}, true
	case "month", "mon", "months", "mons":
		return unitScale{'M', 1}, true
	case "week", "weeks", "w", "weekofyear":
		return unitScale{'D', 7}, true
	case "day", "days", "d", "dayofmonth":
		return unitScale{'D', 1}, true
	case "hour", "hr", "hours", "hrs", "h":
		return unitScale{'N', 3600e9}, true
	case "minute", "min", "minutes", "mins", "m":
		return unitScale{'N', 60e9}, true
	case "second", "sec", "seconds", "secs", "s":
		return unitScale{'N', 1e9}, true
	case "milliseconds", "millisecond", "ms", "msec", "msecs", "msecond", "mseconds":
		return unitScale{'N', 1e6}, true
	case "microseconds", "microsecond", "us", "usec", "usecs", "usecond", "useconds":
		return unitScale{'N', 1e3}, true
	}
	return unitScale{}, false
}
