package types

import (
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
)

// DuckDB's encodings of the infinite dates and timestamps, which Parquet files it
// writes hold as they are: a DATE is ±infinity at ±(2^31−1) days, a TIMESTAMP of any
// unit at ±(2^63−1) ticks. Every finite value lies strictly between them, so they
// order correctly as plain integers.
const (
	DateInfinity         = math.MaxInt32
	DateNegInfinity      = -math.MaxInt32
	TimestampInfinity    = math.MaxInt64
	TimestampNegInfinity = -math.MaxInt64
)

// DateInfSign is +1 or −1 for an infinite DATE, 0 for a finite one.
func DateInfSign(days int64) int {
	switch {
	case days >= DateInfinity:
		return 1
	case days <= DateNegInfinity:
		return -1
	}
	return 0
}

// TimestampInfSign is +1 or −1 for an infinite TIMESTAMP, 0 for a finite one.
func TimestampInfSign(v int64) int {
	switch {
	case v == TimestampInfinity:
		return 1
	case v <= TimestampNegInfinity:
		return -1
	}
	return 0
}

func infText(sign int) string {
	if sign > 0 {
		return "infinity"
	}
	return "-infinity"
}

// CivilFromDays returns the proleptic Gregorian year (astronomical: 0 is 1 BC),
// month and day of days since 1970-01-01.
func CivilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := z
	if era < 0 {
		era -= 146096
	}
	era /= 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// AppendDate renders days since the epoch as DuckDB does: YYYY-MM-DD, with
// "(BC)" after a date before year 1 (whose year is then counted from 1 BC), and
// infinity or -infinity.
func AppendDate(b []byte, days int64) []byte {
	if s := DateInfSign(days); s != 0 {
		return append(b, infText(s)...)
	}
	b, bc := appendYMD(b, days)
	if bc {
		b = append(b, " (BC)"...)
	}
	return b
}

func appendYMD(b []byte, days int64) ([]byte, bool) {
	y, m, d := CivilFromDays(days)
	bc := y <= 0
	if bc {
		y = 1 - y
	}
	if y < 1000 {
		b = append(b, "000"[:4-len(strconv.FormatInt(y, 10))]...)
	}
	b = strconv.AppendInt(b, y, 10)
	return append(b, '-', byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10)), bc
}

// FormatDate renders days since the epoch as AppendDate does.
func FormatDate(days int32) string {
	return string(AppendDate(make([]byte, 0, 16), int64(days)))
}

// AppendTimestamp renders a timestamp in unit as DuckDB does: "YYYY-MM-DD
// HH:MM:SS[.ffffff]" (nine digits of fraction for nanoseconds, trailing zeros
// dropped), "(BC)" after the date before year 1, "+00" for a value WITH TIME ZONE,
// and infinity or -infinity.
func AppendTimestamp(b []byte, v int64, unit arrow.TimeUnit, tz bool) []byte {
	if s := TimestampInfSign(v); s != 0 {
		return append(b, infText(s)...)
	}
	per := UnitsPerSecond(unit)
	dayTicks := 86400 * per
	days := v / dayTicks
	rem := v % dayTicks
	if rem < 0 {
		days--
		rem += dayTicks
	}
	b, bc := appendYMD(b, days)
	if bc {
		b = append(b, " (BC)"...)
	}
	sec := rem / per
	h, m, s := sec/3600, sec/60%60, sec%60
	b = append(b, ' ', byte('0'+h/10), byte('0'+h%10), ':', byte('0'+m/10), byte('0'+m%10), ':', byte('0'+s/10), byte('0'+s%10))
	if frac := rem % per; frac != 0 {
		digits := 9
		ns := frac * (1e9 / per)
		if unit != arrow.Nanosecond {
			digits, ns = 6, ns/1e3
		}
		var buf [9]byte
		for i := digits - 1; i >= 0; i-- {
			buf[i] = byte('0' + ns%10)
			ns /= 10
		}
		end := digits
		for end > 0 && buf[end-1] == '0' {
			end--
		}
		b = append(b, '.')
		b = append(b, buf[:end]...)
	}
	if tz {
		b = append(b, "+00"...)
	}
	return b
}

// FormatTimestamp renders a timestamp as AppendTimestamp does.
func FormatTimestamp(v int64, unit arrow.TimeUnit, tz bool) string {
	return string(AppendTimestamp(make([]byte, 0, 32), v, unit, tz))
}
