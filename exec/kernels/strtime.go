package kernels

import (
	"strconv"
	"strings"
	"time"
	// Zone names resolve the same on every machine, with or without a system
	// zone database.
	_ "time/tzdata"

	"github.com/loredb/lore/errs"
	"github.com/loredb/lore/types"
)

// strftime and strptime formats, with DuckDB's set of codes. A format is compiled
// once (it must be a constant) into literals and codes; a code the set does not
// have, or a trailing %, is an error rather than text copied into the result.

// timeItem is one piece of a compiled format: literal text, or a code (with nopad
// for the %-x forms that drop the leading zeros).
type timeItem struct {
	lit   string
	code  byte
	nopad bool
}

// timeFormat is a compiled strftime/strptime format.
type timeFormat struct {
	src   string
	items []timeItem
	zone  bool // has %z: strptime returns TIMESTAMP WITH TIME ZONE
	nanos bool // has %n (and no %z): strptime returns TIMESTAMP_NS
}

// timeCodes are the codes of the format language; noPadCodes those that also have a
// %-x form.
const (
	timeCodes  = "aAbBcdfgGhHIjmMnpSTuUVwWxXyYzZ%"
	noPadCodes = "dmyHIMSj"
)

// compileTimeFormat parses a format for fn (strftime or strptime).
func compileTimeFormat(fn, f string) (*timeFormat, error) {
	if f == "" {
		return nil, errs.New(errs.Analysis, "%s: the format is empty", fn)
	}
	tf := &timeFormat{src: f}
	var lit []byte
	flush := func() {
		if len(lit) > 0 {
			tf.items = append(tf.items, timeItem{lit: string(lit)})
			lit = lit[:0]
		}
	}
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			lit = append(lit, f[i])
			continue
		}
		if i+1 == len(f) {
			return nil, errs.New(errs.Analysis, "%s: the format %q ends with a lone %%", fn, f)
		}
		i++
		nopad := false
		if f[i] == '-' {
			if i+1 == len(f) || !strings.ContainsRune(noPadCodes, rune(f[i+1])) {
				return nil, errs.New(errs.Analysis, "%s: unknown format code %%-%s in %q", fn, f[i+1:min(i+2, len(f))], f)
			}
			nopad = true
			i++
		}
		c := f[i]
		if !strings.ContainsRune(timeCodes, rune(c)) {
			return nil, errs.New(errs.Analysis, "%s: unknown format code %%%c in %q", fn, c, f)
		}
		if c == '%' {
			lit = append(lit, '%')
			continue
		}
		flush()
		// %c, %x, %X and %T are shorthands for numeric codes, which strptime then
		// reads the usual way.
		switch c {
		case 'c':
			tf.items = append(tf.items, shorthandItems("%Y-%m-%d %H:%M:%S")...)
			continue
		case 'x':
			tf.items = append(tf.items, shorthandItems("%Y-%m-%d")...)
			continue
		case 'X', 'T':
			tf.items = append(tf.items, shorthandItems("%H:%M:%S")...)
			continue
		}
		tf.items = append(tf.items, timeItem{code: c, nopad: nopad})
		if c == 'z' || c == 'Z' {
			tf.zone = true
		}
		if c == 'n' {
			tf.nanos = true
		}
	}
	flush()
	return tf, nil
}

// shorthandItems compiles the expansion of a shorthand code (known to be valid).
func shorthandItems(f string) []timeItem {
	tf, _ := compileTimeFormat("strftime", f)
	return tf.items
}

// appendFormat renders a day number and nanoseconds since midnight; tz says the
// value is a TIMESTAMP WITH TIME ZONE (for %Z).
func (tf *timeFormat) appendFormat(b []byte, days, nanos int64, tz bool) []byte {
	y, m, d := civilFromDays(days)
	num := func(v int64, width int, nopad bool) {
		if v < 0 {
			// DuckDB writes a negative (astronomical) year unpadded: -44.
			b = strconv.AppendInt(b, v, 10)
			return
		}
		if !nopad {
			for p, w := int64(10), 1; w < width; p, w = p*10, w+1 {
				if v < p {
					for k := w; k < width; k++ {
						b = append(b, '0')
					}
					break
				}
			}
		}
		b = strconv.AppendInt(b, v, 10)
	}
	hour := nanos / 3600e9
	wday := isoWeekday(days) % 7 // 0 Sunday
	doy0 := days - daysFromCivil(y, 1, 1)
	for _, it := range tf.items {
		if it.code == 0 {
			b = append(b, it.lit...)
			continue
		}
		switch it.code {
		case 'a':
			b = append(b, dayNames[wday][:3]...)
		case 'A':
			b = append(b, dayNames[wday]...)
		case 'w':
			num(wday, 1, false)
		case 'u':
			num(isoWeekday(days), 1, false)
		case 'd':
			num(d, 2, it.nopad)
		case 'b', 'h':
			b = append(b, monthNames[m-1][:3]...)
		case 'B':
			b = append(b, monthNames[m-1]...)
		case 'm':
			num(m, 2, it.nopad)
		case 'y':
			yy := y % 100
			if yy < 0 {
				yy = -yy
			}
			num(yy, 2, it.nopad)
		case 'Y':
			num(y, 4, false)
		case 'G':
			iy, _ := isoYearWeek(days)
			num(iy, 4, false)
		case 'V':
			_, w := isoYearWeek(days)
			num(w, 2, false)
		case 'U':
			num((doy0+7-wday)/7, 2, false)
		case 'W':
			num((doy0+7-(wday+6)%7)/7, 2, false)
		case 'j':
			num(doy0+1, 3, it.nopad)
		case 'H':
			num(hour, 2, it.nopad)
		case 'I':
			h := hour % 12
			if h == 0 {
				h = 12
			}
			num(h, 2, it.nopad)
		case 'p':
			if hour < 12 {
				b = append(b, "AM"...)
			} else {
				b = append(b, "PM"...)
			}
		case 'M':
			num(nanos/60e9%60, 2, it.nopad)
		case 'S':
			num(nanos/1e9%60, 2, it.nopad)
		case 'g':
			num(nanos/1e6%1000, 3, false)
		case 'f':
			num(nanos/1e3%1e6, 6, false)
		case 'n':
			num(nanos%1e9, 9, false)
		case 'z':
			b = append(b, "+00"...)
		case 'Z':
			if tz {
				b = append(b, "UTC"...)
			}
		}
	}
	return b
}

// parsed is what strptime read from one string, before the date is assembled.
type parsed struct {
	year, month, day    int64
	yday                int64 // day of year (%j), 0 when absent
	hour, min, sec      int64
	nanos               int64
	pm, hasPM           bool
	isoYear, isoWeek    int64
	hasISOYear, hasISOW bool
	isoWeekday          int64          // %u (1 Monday), 0 when absent
	weekday             int64          // %w (0 Sunday), -1 when absent
	weekNo              int64          // %U or %W
	offset              int64          // seconds east of UTC (%z)
	loc                 *time.Location // the zone named by %Z, nil for none
	hasYear             bool
	// placer is the code that places the date, as DuckDB decides it: the day or
	// month of the month (d, m) over the others, a week (U, W, V, G) or day of the
	// year (j) over the year (y, Y); 0 while none was read.
	placer byte
}

// place records that code, a specifier that says which day is meant, was read, and
// returns why it conflicts with those read before ("" when it does not). The rules
// are DuckDB's: a month or day of the month wins over a week or day of the year
// without conflict, a later week, ISO week or day of the year wins over a year, an
// ISO week cannot follow a plain year, and two week or day-of-year specifiers
// conflict.
func (p *parsed) place(code byte) string {
	switch code {
	case 'd', 'm':
		p.placer = code
	case 'y', 'Y':
		switch p.placer {
		case 0, 'G', 'V':
			p.placer = code
		}
	case 'G':
		switch p.placer {
		case 'd', 'm', 'y', 'Y':
		case 0:
			p.placer = code
		case 'G', 'V':
			if p.hasISOYear {
				return "multiple ISO year offsets specified"
			}
		default:
			return "incompatible ISO year offset specified"
		}
	case 'V':
		switch p.placer {
		case 'y', 'Y':
			return "ISO week offsets are incompatible with non-ISO year specifiers; use %G instead"
		case 'd', 'm':
		case 0:
			p.placer = code
		case 'G', 'V':
			if p.hasISOW {
				return "multiple ISO week offsets specified"
			}
		default:
			return "incompatible ISO week offset specified"
		}
	case 'U', 'W', 'j':
		switch p.placer {
		case 'd', 'm':
		case 0, 'y', 'Y':
			p.placer = code
		default:
			if code == 'j' {
				return "multiple year offsets specified"
			}
			return "multiple week offsets specified"
		}
	}
	return ""
}

// parseErr words a strptime failure as DuckDB does: the string, the format, where
// it stopped and why.
func (tf *timeFormat) parseErr(s string, pos int, why string) error {
	return errs.New(errs.Analysis, "could not parse string %q according to format specifier %q at position %d: %s", s, tf.src, pos+1, why)
}

// isNumCode reports whether a code reads digits.
func isNumCode(c byte) bool {
	return c != 0 && strings.IndexByte("aAbBhpzZ", c) < 0
}

// parse reads s as tf describes and returns microseconds since the epoch in UTC.
func (tf *timeFormat) parse(s string) (int64, error) {
	us, _, err := tf.parseFine(s)
	return us, err
}

// parseFine is parse, also returning the nanoseconds past the microsecond (%n).
func (tf *timeFormat) parseFine(s string) (us, ns int64, err error) {
	// The special values read whatever the format, as DuckDB reads them.
	switch strings.ToLower(strings.Trim(s, " \t\n\r\v\f")) {
	case "infinity":
		return types.TimestampInfinity, 0, nil
	case "-infinity":
		return types.TimestampNegInfinity, 0, nil
	case "epoch":
		return 0, 0, nil
	}
	p := parsed{year: 1900, month: 1, day: 1, weekday: -1}
	pos := 0
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' }
	for k, it := range tf.items {
		if it.code == 0 {
			for l := 0; l < len(it.lit); {
				if isSpace(it.lit[l]) {
					if pos >= len(s) || !isSpace(s[pos]) {
						return 0, 0, tf.parseErr(s, pos, "space does not match")
					}
					for pos < len(s) && isSpace(s[pos]) {
						pos++
					}
					for l < len(it.lit) && isSpace(it.lit[l]) {
						l++
					}
					continue
				}
				if pos >= len(s) || s[pos] != it.lit[l] {
					return 0, 0, tf.parseErr(s, pos, "literal does not match, expected "+strconv.Quote(it.lit))
				}
				pos++
				l++
			}
			continue
		}
		if isNumCode(it.code) {
			for pos < len(s) && isSpace(s[pos]) {
				pos++
			}
			width := 2
			switch it.code {
			case 'Y', 'G':
				width = 9
				if k+1 < len(tf.items) && isNumCode(tf.items[k+1].code) {
					width = 4
				}
			case 'j', 'g':
				width = 3
			case 'f':
				width = 6
			case 'n':
				width = 9
			case 'u', 'w':
				width = 1
			}
			start := pos
			var v int64
			for pos < len(s) && pos-start < width && s[pos] >= '0' && s[pos] <= '9' {
				v = v*10 + int64(s[pos]-'0')
				pos++
			}
			digits := pos - start
			if digits == 0 {
				return 0, 0, tf.parseErr(s, start, "expected a number")
			}
			bad := func(what string, lo, hi int64) error {
				return tf.parseErr(s, start, what+" out of range, expected a value between "+strconv.FormatInt(lo, 10)+" and "+strconv.FormatInt(hi, 10))
			}
			if why := p.place(it.code); why != "" {
				return 0, 0, tf.parseErr(s, start, why)
			}
			switch it.code {
			case 'd':
				if v < 1 || v > 31 {
					return 0, 0, bad("day", 1, 31)
				}
				p.day = v
			case 'm':
				if v < 1 || v > 12 {
					return 0, 0, bad("month", 1, 12)
				}
				p.month = v
			case 'y':
				if v < 69 {
					v += 2000
				} else if v < 100 {
					v += 1900
				}
				p.year, p.hasYear = v, true
			case 'Y':
				p.year, p.hasYear = v, true
			case 'G':
				p.isoYear, p.hasISOYear = v, true
			case 'V':
				if v < 1 || v > 53 {
					return 0, 0, bad("ISO week", 1, 53)
				}
				p.isoWeek, p.hasISOW = v, true
			case 'U', 'W':
				if v > 53 {
					return 0, 0, bad("week", 0, 53)
				}
				p.weekNo = v
			case 'w':
				if v > 6 {
					return 0, 0, bad("weekday", 0, 6)
				}
				p.weekday = v
			case 'u':
				if p.isoWeekday > 0 {
					return 0, 0, tf.parseErr(s, start, "multiple ISO weekday offsets specified")
				}
				if v < 1 || v > 7 {
					return 0, 0, bad("ISO weekday", 1, 7)
				}
				p.isoWeekday = v
			case 'j':
				if v < 1 || v > 366 {
					return 0, 0, bad("day of year", 1, 366)
				}
				p.yday = v
			case 'H':
				if v > 23 {
					return 0, 0, bad("hour", 0, 23)
				}
				p.hour = v
			case 'I':
				if v < 1 || v > 12 {
					return 0, 0, bad("hour12", 1, 12)
				}
				p.hour = v
			case 'M':
				if v > 59 {
					return 0, 0, bad("minute", 0, 59)
				}
				p.min = v
			case 'S':
				if v > 59 {
					return 0, 0, bad("second", 0, 59)
				}
				p.sec = v
			case 'g', 'f', 'n':
				for ; digits < width; digits++ {
					v *= 10
				}
				p.nanos = v * map[byte]int64{'g': 1e6, 'f': 1e3, 'n': 1}[it.code]
			}
			continue
		}
		switch it.code {
		case 'a', 'A':
			i, n := matchName(s[pos:], dayNames[:], it.code == 'a')
			if i < 0 {
				return 0, 0, tf.parseErr(s, pos, "expected a weekday name")
			}
			pos += n
		case 'b', 'B', 'h':
			i, n := matchName(s[pos:], monthNames[:], it.code != 'B')
			if i < 0 {
				return 0, 0, tf.parseErr(s, pos, "expected a month name")
			}
			p.month = int64(i) + 1
			pos += n
		case 'p':
			if pos+2 > len(s) {
				return 0, 0, tf.parseErr(s, pos, "expected AM or PM")
			}
			switch strings.ToUpper(s[pos : pos+2]) {
			case "AM":
				p.hasPM, p.pm = true, false
			case "PM":
				p.hasPM, p.pm = true, true
			default:
				return 0, 0, tf.parseErr(s, pos, "expected AM or PM")
			}
			pos += 2
		case 'z':
			off, n, ok := readOffset(s[pos:])
			if !ok {
				return 0, 0, tf.parseErr(s, pos, "expected ±HH[MM] or ±HH:MM")
			}
			p.offset = off
			pos += n
		case 'Z':
			end := pos
			for end < len(s) && (isZoneChar(s[end])) {
				end++
			}
			name := s[pos:end]
			if name == "" {
				return 0, 0, tf.parseErr(s, pos, "expected a time zone name")
			}
			loc, err := zoneByName(name)
			if err != nil {
				return 0, 0, tf.parseErr(s, pos, "unknown time zone "+strconv.Quote(name))
			}
			p.loc = loc
			pos = end
		}
	}
	for pos < len(s) && isSpace(s[pos]) {
		pos++
	}
	if pos < len(s) {
		return 0, 0, tf.parseErr(s, pos, "trailing characters")
	}
	us, err = p.assemble(tf, s)
	return us, p.nanos % 1000, err
}

// matchName matches the start of s against names (case-insensitively), their
// three-letter forms when abbr, else full names first and then abbreviations.
func matchName(s string, names []string, abbr bool) (int, int) {
	if !abbr {
		for i, n := range names {
			if len(s) >= len(n) && strings.EqualFold(s[:len(n)], n) {
				return i, len(n)
			}
		}
	}
	for i, n := range names {
		if len(s) >= 3 && strings.EqualFold(s[:3], n[:3]) {
			return i, 3
		}
	}
	return -1, 0
}

// readOffset reads ±HH, ±HHMM or ±HH:MM and returns seconds east and the bytes read.
func readOffset(s string) (int64, int, bool) {
	if len(s) < 3 || (s[0] != '+' && s[0] != '-') {
		return 0, 0, false
	}
	h, rest, ok := readDigits(s[1:], 2, 2)
	if !ok || h > 23 {
		return 0, 0, false
	}
	n := 3
	var m int64
	if strings.HasPrefix(rest, ":") {
		if m, _, ok = readDigits(rest[1:], 2, 2); !ok {
			return 0, 0, false
		}
		n += 3
	} else if mm, _, ok := readDigits(rest, 2, 2); ok {
		m = mm
		n += 2
	}
	if m > 59 {
		return 0, 0, false
	}
	off := h*3600 + m*60
	if s[0] == '-' {
		off = -off
	}
	return off, n, true
}

// assemble turns the parsed fields into microseconds since the epoch (UTC).
func (p *parsed) assemble(tf *timeFormat, s string) (int64, error) {
	if p.hasPM {
		// AM and PM take an hour up to 12, from %I or %H: 12 AM is midnight.
		if p.hour > 12 {
			return 0, errs.New(errs.Analysis, "could not parse string %q according to format specifier %q: invalid hour %d AM/PM, expected an hour within 0 to 12", s, tf.src, p.hour)
		}
		p.hour %= 12
		if p.pm {
			p.hour += 12
		}
	}
	var days int64
	switch p.placer {
	case 'G', 'V':
		// ISO week 1 starts on the Monday of the week holding January 4th; the ISO
		// year defaults to 1900, the week and weekday to the first.
		iy, iw, iwd := int64(1900), int64(1), int64(1)
		if p.hasISOYear {
			iy = p.isoYear
		}
		if p.hasISOW {
			iw = p.isoWeek
		}
		if p.isoWeekday > 0 {
			iwd = p.isoWeekday
		}
		jan4 := daysFromCivil(iy, 1, 4)
		days = jan4 - isoWeekday(jan4) + 1 + (iw-1)*7 + iwd - 1
	case 'j':
		days = daysFromCivil(p.year, 1, 1) + p.yday - 1
	case 'U', 'W':
		// Week 1 starts on the year's first Sunday (%U) or Monday (%W); the days
		// before it are week 0. Without a weekday (%w), the week's first day is meant.
		jan1 := daysFromCivil(p.year, 1, 1)
		w1 := isoWeekday(jan1) % 7 // 0 Sunday
		start, wd := int64(0), max(p.weekday, 0)
		if p.placer == 'W' {
			start, wd = 1, 0
			if p.weekday >= 0 {
				wd = (p.weekday + 6) % 7
			}
		}
		first := jan1 + floorMod(start-w1, 7)
		days = first + (p.weekNo-1)*7 + wd
	default:
		if p.day > daysInMonth(p.year, p.month) {
			return 0, errs.New(errs.Analysis, "date out of range: %d-%d-%d", p.year, p.month, p.day)
		}
		days = daysFromCivil(p.year, p.month, p.day)
	}
	if days > maxTimestampDays || days < -maxTimestampDays {
		return 0, errs.New(errs.Analysis, "could not parse string %q according to format specifier %q: the timestamp is out of range", s, tf.src)
	}
	us := days*microsPerDay + p.hour*microsPerHour + p.min*microsPerMinute + p.sec*microsPerSecond + p.nanos/1e3
	if p.loc != nil {
		// The fields are the wall clock of the named zone: take its offset there.
		y, m, d := civilFromDays(days)
		wall := time.Date(int(y), time.Month(m), int(d), int(p.hour), int(p.min), int(p.sec), 0, p.loc)
		_, off := wall.Zone()
		us -= int64(off) * microsPerSecond
	}
	return us - p.offset*microsPerSecond, nil
}

// maxTimestampDays bounds the days a microsecond TIMESTAMP can hold, with room for
// a day's time and a zone offset.
const maxTimestampDays = 106751990

func isZoneChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '/' || c == '_' || c == '-' || c == '+'
}

// zoneByName finds a time zone by its IANA name (UTC and GMT always).
func zoneByName(name string) (*time.Location, error) {
	switch strings.ToUpper(name) {
	case "UTC", "GMT", "Z", "ETC/UTC":
		return time.UTC, nil
	}
	return time.LoadLocation(name)
}
